//! End-to-end tests of `skills eval`: the real binary against a fake
//! OpenAI-compatible server on 127.0.0.1 that decides each answer from the
//! request body (runs are concurrent, so the order of requests says
//! nothing), over the bundled example skills (trigger evals) or a skill
//! written into a temporary folder (output evals).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::{BufReader, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{answer, load_skill_call, tool_call};

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills").to_owned()
}

/// What the fake server does with one request.
enum Reply {
    /// 200 with a streamed (SSE) body.
    Stream(String),
    /// 200 with a JSON body (a non-streamed completion).
    Json(Value),
    /// An HTTP error with these extra headers and this body.
    Status(u16, Vec<(&'static str, &'static str)>, String),
    /// No answer: keep the connection open for a long while.
    Stall,
}

/// A fake OpenAI chat-completions server: every connection on its own
/// thread, each request answered by `decide(body, i)` (`i`: the request's
/// arrival number), the bodies recorded.
struct Fake {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Fake {
    fn start(decide: impl Fn(&Value, usize) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&bodies);
        let decide = Arc::new(decide);
        let count = Arc::new(AtomicUsize::new(0));
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (decide, seen, count) =
                    (Arc::clone(&decide), Arc::clone(&seen), Arc::clone(&count));
                thread::spawn(move || {
                    let mut reader = BufReader::new(stream);
                    let Some(body) = crate::support::read_request_body(&mut reader) else {
                        return;
                    };
                    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let i = count.fetch_add(1, Ordering::SeqCst);
                    let reply = decide(&body, i);
                    seen.lock().unwrap().push(body);
                    let (status, headers, content_type, text) = match reply {
                        Reply::Stream(text) => (200, Vec::new(), "text/event-stream", text),
                        Reply::Json(value) => {
                            (200, Vec::new(), "application/json", value.to_string())
                        }
                        Reply::Status(status, headers, text) => {
                            (status, headers, "application/json", text)
                        }
                        Reply::Stall => {
                            thread::sleep(Duration::from_secs(60));
                            return;
                        }
                    };
                    let extra: String = headers
                        .iter()
                        .map(|(k, v)| format!("{k}: {v}\r\n"))
                        .collect();
                    let mut stream = reader.into_inner();
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n{text}",
                        text.len()
                    );
                });
            }
        });
        Self { url, bodies }
    }
}

/// The text of a message's `content` (a string or text parts).
fn content_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The first user message of a request: the query or the case's prompt.
fn user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .map(content_text)
        .unwrap_or_default()
}

/// Whether the request is the grader's (its system prompt).
fn is_grader(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.first())
        .is_some_and(|m| m["role"] == "system" && content_text(m).contains("You grade"))
}

/// Whether the conversation already has a call of `tool`.
fn has_called(body: &Value, tool: &str) -> bool {
    body["messages"].as_array().is_some_and(|messages| {
        messages.iter().any(|m| {
            m["tool_calls"]
                .as_array()
                .is_some_and(|calls| calls.iter().any(|c| c["function"]["name"] == tool))
        })
    })
}

/// The trigger model: which skill a query makes it load.
fn trigger_reply(body: &Value) -> Reply {
    let query = user_text(body);
    if query.contains("slow") {
        Reply::Stall
    } else if query.contains("CSV") {
        Reply::Stream(load_skill_call("csv-insights"))
    } else if query.contains("postmortem") {
        // A `context: fork` skill: the model's choice counts all the same.
        Reply::Stream(load_skill_call("incident-postmortem"))
    } else if query.contains("release notes") {
        // The wrong skill.
        Reply::Stream(load_skill_call("commit-message"))
    } else {
        // "API docs", "weather": answers without a skill.
        Reply::Stream(answer("Here you go."))
    }
}

/// A fake model that answers the release-notes query with the right skill
/// (the "after" of a description change).
fn fixed_trigger_reply(body: &Value) -> Reply {
    if user_text(body).contains("release notes") {
        Reply::Stream(load_skill_call("release-notes"))
    } else {
        trigger_reply(body)
    }
}

/// `skills ARGS` in `cwd` with the fake server's URL and a key, an empty
/// home and no config from the caller.
fn skills_in(cwd: &Path, url: &str, args: &[&str]) -> Output {
    let mut cmd: Command = crate::support::skills();
    cmd.args(args)
        .current_dir(cwd)
        .env("HOME", cwd)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SKILLS_CONFIG")
        .env_remove("CODEX_HOME")
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", url);
    cmd.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A query set file in `dir`.
fn query_file(dir: &Path, entries: &Value) -> String {
    let path = dir.join("queries.json");
    std::fs::write(&path, entries.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// One query that loads the right skill, one the wrong one, one none, and
/// one no skill should answer; all in the validation split.
fn mixed_queries() -> Value {
    json!([
        {"query": "Profile this CSV export for me", "should_trigger": true,
         "skill": "csv-insights", "split": "validation"},
        {"query": "Draft the release notes for v2.0", "should_trigger": true,
         "skill": "release-notes", "split": "validation"},
        {"query": "Review the API docs of our billing service", "should_trigger": true,
         "skill": "api-docs-review", "split": "validation"},
        {"query": "What is the weather like in Lyon?", "should_trigger": false,
         "split": "validation"}
    ])
}

fn passing_queries() -> Value {
    json!([
        {"query": "Profile this CSV export for me", "should_trigger": true,
         "skill": "csv-insights"},
        {"query": "What is the weather like in Lyon?", "should_trigger": false},
        {"query": "Write the postmortem of last night's outage", "should_trigger": true,
         "skill": "incident-postmortem"}
    ])
}

#[track_caller]
fn code(out: &Output) -> i32 {
    out.status.code().expect("exited normally")
}

#[track_caller]
fn parse(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", text(&out.stdout)))
}

fn triggers_args<'a>(queries: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "eval",
        "triggers",
        "--queries",
        queries,
        "--model",
        "openai:test-model",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn triggers_report_rates_and_confusions_and_exit_1_on_failures() {
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), &mixed_queries());
    let ex = examples();
    let out = skills_in(dir.path(), &fake.url, &triggers_args(&queries, &[&ex]));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(code(&out), 1, "{stdout}\n{stderr}");
    for skill in ["csv-insights", "release-notes", "api-docs-review"] {
        assert!(stdout.contains(skill), "{skill} in\n{stdout}");
    }
    // What loaded instead: the wrong skill, and nothing.
    assert!(stdout.contains("commit-message"), "{stdout}");
    assert!(stdout.contains("(none)"), "{stdout}");
    // Progress on standard error: the last counter line.
    assert!(stderr.contains("12/12 runs"), "{stderr}");
    // Every run of every query reached the model, with the whole catalog.
    let bodies = fake.bodies.lock().unwrap();
    let first_requests = bodies
        .iter()
        .filter(|b| b["messages"].as_array().unwrap().last().unwrap()["role"] == "user")
        .count();
    assert_eq!(first_requests, 12);
    // And only that: each run stops at the model's first load.
    assert_eq!(bodies.len(), 12);
    let tools = bodies[0]["tools"].to_string();
    assert!(tools.contains("load_skill"), "{tools}");
    let system = content_text(&bodies[0]["messages"][0]);
    assert!(system.contains("incident-postmortem") && system.contains("csv-insights"));
}

#[test]
fn triggers_json_has_per_query_results() {
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), &mixed_queries());
    let ex = examples();
    let out = skills_in(
        dir.path(),
        &fake.url,
        &triggers_args(&queries, &["--json", "--runs", "2", &ex]),
    );
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let report = parse(&out);
    assert_eq!(report["model"], "openai:test-model");
    assert_eq!(report["runs_per_query"], 2);
    let queries = report["queries"].as_array().unwrap();
    assert_eq!(queries.len(), 4);
    let by_query: BTreeMap<&str, &Value> = queries
        .iter()
        .map(|q| (q["query"].as_str().unwrap(), q))
        .collect();
    let csv = by_query["Profile this CSV export for me"];
    assert_eq!(csv["passed"], true);
    assert_eq!(csv["loaded"], json!({"csv-insights": 2}));
    assert_eq!(csv["trigger_rate"], 1.0);
    let notes = by_query["Draft the release notes for v2.0"];
    assert_eq!(notes["passed"], false);
    assert_eq!(notes["loaded"], json!({"commit-message": 2}));
    assert_eq!(notes["trigger_rate"], 0.0);
    let docs = by_query["Review the API docs of our billing service"];
    assert_eq!(docs["passed"], false);
    assert_eq!(docs["none"], 2);
    let weather = by_query["What is the weather like in Lyon?"];
    assert_eq!(weather["passed"], true);
    assert_eq!(weather["skill"], Value::Null);
    assert!(report.get("comparison").is_none());
    assert!(out.stdout.ends_with(b"}\n"));
}

#[test]
fn triggers_exit_0_when_every_query_passes() {
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), &passing_queries());
    let ex = examples();
    let out = skills_in(
        dir.path(),
        &fake.url,
        &triggers_args(&queries, &["--concurrency", "2", &ex]),
    );
    assert_eq!(
        code(&out),
        0,
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("csv-insights"));
}

/// `--split` chooses the queries the exit code looks at: the failing
/// queries are all in validation, so the train split passes.
#[test]
fn triggers_split_decides_what_counts() {
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let mut entries = mixed_queries();
    entries[0]["split"] = json!("train");
    let queries = query_file(dir.path(), &entries);
    let ex = examples();
    let out = skills_in(
        dir.path(),
        &fake.url,
        &triggers_args(&queries, &["--runs", "1", "--split", "train", &ex]),
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let out = skills_in(
        dir.path(),
        &fake.url,
        &triggers_args(&queries, &["--runs", "1", "--split", "validation", &ex]),
    );
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
}

#[test]
fn triggers_baseline_shows_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), &mixed_queries());
    let ex = examples();
    let before = Fake::start(|body, _| trigger_reply(body));
    let out = skills_in(
        dir.path(),
        &before.url,
        &triggers_args(&queries, &["--json", "--runs", "1", &ex]),
    );
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let baseline = dir.path().join("baseline.json");
    std::fs::write(&baseline, &out.stdout).unwrap();
    let baseline = baseline.to_str().unwrap();

    let after = Fake::start(|body, _| fixed_trigger_reply(body));
    let out = skills_in(
        dir.path(),
        &after.url,
        &triggers_args(&queries, &["--runs", "1", "--baseline", baseline, &ex]),
    );
    let stdout = text(&out.stdout);
    assert_eq!(code(&out), 1, "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.to_lowercase().contains("baseline"), "{stdout}");
    assert!(
        stdout.contains("Draft the release notes for v2.0"),
        "the flipped query: {stdout}"
    );

    let out = skills_in(
        dir.path(),
        &after.url,
        &triggers_args(
            &queries,
            &["--json", "--runs", "1", "--baseline", baseline, &ex],
        ),
    );
    let both = parse(&out);
    let comparison = &both["comparison"];
    assert_eq!(comparison["split"], "validation");
    assert_eq!(comparison["baseline_passes"], json!([2, 2]));
    assert_eq!(comparison["current_passes"], json!([3, 1]));
    assert_eq!(
        comparison["flipped"][0]["query"],
        "Draft the release notes for v2.0"
    );
    assert_eq!(comparison["flipped"][0]["now_passes"], true);
    assert_eq!(both["report"]["queries"].as_array().unwrap().len(), 4);

    // The `{report, comparison}` shape is a baseline too.
    let nested = dir.path().join("nested.json");
    std::fs::write(&nested, &out.stdout).unwrap();
    let out = skills_in(
        dir.path(),
        &after.url,
        &triggers_args(
            &queries,
            &[
                "--json",
                "--runs",
                "1",
                "--baseline",
                nested.to_str().unwrap(),
                &ex,
            ],
        ),
    );
    let again = parse(&out);
    assert_eq!(again["comparison"]["flipped"], json!([]));
    assert_eq!(again["comparison"]["baseline_passes"], json!([3, 1]));
}

#[test]
fn triggers_html_writes_a_page() {
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), &mixed_queries());
    let page = dir.path().join("triggers.html");
    let ex = examples();
    let out = skills_in(
        dir.path(),
        &fake.url,
        &triggers_args(
            &queries,
            &["--runs", "1", "--html", page.to_str().unwrap(), &ex],
        ),
    );
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("id=\"rates\""), "{html}");
    assert!(html.contains("csv-insights"), "{html}");
}

/// The rows of the `rates` table of a DOM, by their `data-skill`.
fn rate_rows(dom: &str) -> Vec<String> {
    let start = dom.find("id=\"rates\"").expect("a rates table");
    let table = &dom[start..];
    let table = &table[..table.find("</table>").expect("the table ends")];
    table
        .split("<tr")
        .skip(1)
        .filter_map(|row| {
            let tag = &row[..row.find('>')?];
            let at = tag.find("data-skill=\"")? + "data-skill=\"".len();
            Some(tag[at..].split('"').next()?.to_owned())
        })
        .collect()
}

/// The trigger page rendered by Debian's chromium (CI installs it; a missing
/// browser fails the test): the `rates` table has one row per skill of the
/// set.
#[test]
fn triggers_html_renders_in_headless_chromium() {
    const CHROMIUM: &str = "/usr/bin/chromium";
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`; .ci/run does)"
    );
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), &mixed_queries());
    let page = dir.path().join("triggers.html");
    let ex = examples();
    let out = skills_in(
        dir.path(),
        &fake.url,
        &triggers_args(
            &queries,
            &["--runs", "1", "--html", page.to_str().unwrap(), &ex],
        ),
    );
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let dom = crate::support::dump_dom(&page);
    let mut rows = rate_rows(&dom);
    rows.sort();
    assert_eq!(
        rows,
        ["api-docs-review", "csv-insights", "release-notes"],
        "{dom}"
    );
}

/// A 429 with a short `retry-after-ms`, then success: the adapter retries
/// and the report counts the retry.
#[test]
fn triggers_count_the_adapters_retries() {
    let fake = Fake::start(|body, i| {
        if i == 0 {
            Reply::Status(
                429,
                vec![("retry-after-ms", "10")],
                r#"{"error":{"message":"slow down","type":"rate_limit_error"}}"#.to_owned(),
            )
        } else {
            trigger_reply(body)
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(dir.path(), &passing_queries());
    let ex = examples();
    let out = skills_in(
        dir.path(),
        &fake.url,
        &triggers_args(
            &queries,
            &["--json", "--runs", "1", "--concurrency", "1", &ex],
        ),
    );
    assert_eq!(code(&out), 0, "{}", text(&out.stderr));
    let report = parse(&out);
    assert!(report["retries"].as_u64().unwrap() >= 1, "{report}");
    assert_eq!(report["queries"][0]["errors"], 0);
    assert_eq!(report["queries"][0]["passed"], true);
}

/// A model that never answers: with `--timeout 2` the run counts as timed
/// out, the query fails, the command ends normally with exit 1.
#[test]
fn triggers_count_a_stalled_run_as_timed_out() {
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(
        dir.path(),
        &json!([
            {"query": "A slow CSV question", "should_trigger": true, "skill": "csv-insights"}
        ]),
    );
    let ex = examples();
    let started = std::time::Instant::now();
    let out = skills_in(
        dir.path(),
        &fake.url,
        &triggers_args(&queries, &["--json", "--runs", "1", "--timeout", "2", &ex]),
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let report = parse(&out);
    let query = &report["queries"][0];
    assert_eq!(query["timeouts"], 1, "{report}");
    assert_eq!(query["passed"], false);
    assert_eq!(query["trigger_rate"], Value::Null);
    assert!(
        query["error_messages"][0]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{report}"
    );
}

#[test]
fn triggers_refuse_an_unknown_skill_with_exit_2() {
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let queries = query_file(
        dir.path(),
        &json!([{"query": "Fill in this PDF form", "should_trigger": true, "skill": "pdf-forms"}]),
    );
    let ex = examples();
    let out = skills_in(dir.path(), &fake.url, &triggers_args(&queries, &[&ex]));
    let stderr = text(&out.stderr);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(stderr.contains("pdf-forms"), "{stderr}");
    assert!(
        fake.bodies.lock().unwrap().is_empty(),
        "no model call before the check"
    );
}

#[test]
fn triggers_refuse_bad_input_with_exit_2() {
    let fake = Fake::start(|body, _| trigger_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let ex = examples();
    let good = query_file(dir.path(), &passing_queries());
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"[{"query": "x"}]"#).unwrap();
    let bad = bad.to_str().unwrap();
    let missing = dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (triggers_args(bad, &[&ex]), "should_trigger"),
        (triggers_args(missing, &[&ex]), "missing.json"),
        (
            triggers_args(&good, &["--threshold", "0", &ex]),
            "threshold",
        ),
        (triggers_args(&good, &["--runs", "0", &ex]), "runs"),
        (triggers_args(&good, &["--timeout", "0", &ex]), "--timeout"),
        (
            triggers_args(&good, &["--html", "/nonexistent-folder/x.html", &ex]),
            "does not exist",
        ),
        (triggers_args(&good, &["--holdout", "2", &ex]), "holdout"),
        (
            triggers_args(&good, &["--baseline", bad, &ex]),
            "--baseline",
        ),
        (
            vec![
                "eval",
                "triggers",
                "--queries",
                &good,
                "--model",
                "nope",
                &ex,
            ],
            "PROVIDER:MODEL",
        ),
    ];
    for (args, says) in cases {
        let out = skills_in(dir.path(), &fake.url, &args);
        let stderr = text(&out.stderr);
        assert_eq!(code(&out), 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(fake.bodies.lock().unwrap().is_empty());
}

/// A file past the 16 MiB cap is refused before it is read.
#[test]
fn triggers_refuse_a_query_set_over_16_mib() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len((16 << 20) + 1).unwrap();
    let ex = examples();
    let out = skills_in(
        dir.path(),
        "http://127.0.0.1:9",
        &triggers_args(big.to_str().unwrap(), &[&ex]),
    );
    let stderr = text(&out.stderr);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(stderr.contains("16 MiB"), "{stderr}");
}

// ---- output evals ----

const SKILL: &str = "report-maker";

/// A skill in `dir/report-maker` with `evals/evals.json` holding `cases`.
fn report_skill(dir: &Path, cases: Value) -> PathBuf {
    let skill = dir.join(SKILL);
    std::fs::create_dir_all(skill.join("evals")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!(
            "---\nname: {SKILL}\ndescription: Writes the quarterly report with its total. Use when asked for the quarterly report.\n---\n\nWrite the report to $OUTPUT_DIR/report.md and answer with the total.\n"
        ),
    )
    .unwrap();
    std::fs::write(
        skill.join("evals").join("evals.json"),
        json!({"skill_name": SKILL, "evals": cases}).to_string(),
    )
    .unwrap();
    skill
}

/// Case 1: every kind of check, all holding (the statement needs the
/// grader). Case 2: one check that holds, one that does not.
fn report_cases() -> Value {
    json!([
        {
            "id": 1,
            "prompt": "Write the quarterly report",
            "expected_output": "A Q3 report with the total and a JSON summary.",
            "assertions": [
                {"type": "contains", "value": "Total: 42"},
                {"type": "regex", "pattern": "Q[1-4] report"},
                {"type": "json_path", "path": "$.total", "equals": 42},
                "The answer states the total",
                {"type": "file_exists", "path": "out/report.md"}
            ]
        },
        {
            "id": 2,
            "name": "short summary",
            "prompt": "Summarise the quarter",
            "assertions": [
                {"type": "contains", "value": "Total: 42"},
                {"type": "contains", "value": "Grand total"}
            ]
        }
    ])
}

/// The output model: writes the report with the run tool (when it has
/// it), then answers; the grader says "passed".
fn output_reply(body: &Value) -> Reply {
    if is_grader(body) {
        assert_ne!(body["stream"], true, "the grader's call is not streamed");
        return Reply::Json(json!({
            "id": "g",
            "model": "grader-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant",
                "content": "{\"passed\": true, \"evidence\": \"the answer says Total: 42\"}"
            }}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 9}
        }));
    }
    let offers_run = body["tools"].to_string().contains("run_skill_command");
    if offers_run && !has_called(body, "run_skill_command") {
        return Reply::Stream(tool_call(
            "run_skill_command",
            &json!({
                "skill": SKILL,
                "command": "mkdir -p \"$OUTPUT_DIR\" && echo '# Q3 report' > \"$OUTPUT_DIR/report.md\""
            })
            .to_string(),
        ));
    }
    Reply::Stream(answer(
        "Q3 report\nTotal: 42\n```json\n{\"total\": 42}\n```\n",
    ))
}

fn outputs_args<'a>(skill: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["eval", "outputs", "--model", "openai:test-model"];
    args.extend_from_slice(extra);
    args.push(skill);
    args
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The run folder of case `id`, run 1.
fn run_dir(results: &Path, id: u32) -> PathBuf {
    results
        .join(format!("eval-{id}"))
        .join("with_skill")
        .join("run-1")
}

#[test]
fn outputs_local_check_every_kind_and_write_the_result_files() {
    let fake = Fake::start(|body, _| output_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let skill = report_skill(dir.path(), report_cases());
    let out = skills_in(
        dir.path(),
        &fake.url,
        &outputs_args(skill.to_str().unwrap(), &["--run", "local"]),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    // Case 2 has a check that fails.
    assert_eq!(code(&out), 1, "{stdout}\n{stderr}");
    assert!(stderr.contains("[eval] case 1 run 1"), "{stderr}");
    assert!(stdout.contains(SKILL), "{stdout}");

    // The default results folder: eval-results/<skill> in the working folder.
    let results = dir.path().join("eval-results").join(SKILL);
    let grading = read_json(&run_dir(&results, 1).join("grading.json"));
    assert_eq!(
        grading["summary"],
        json!({"passed": 4, "failed": 0, "not_checked": 1, "total": 5, "pass_rate": 1.0}),
        "{grading}"
    );
    let statement = grading["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"] == "The answer states the total")
        .unwrap();
    assert_eq!(statement["passed"], Value::Null);
    assert!(
        statement["evidence"]
            .as_str()
            .unwrap()
            .contains("not checked"),
        "{statement}"
    );
    let file_check = grading["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "file_exists")
        .unwrap();
    assert_eq!(file_check["passed"], true, "{file_check}");
    assert_eq!(
        grading["execution_metrics"]["tool_calls"]["run_skill_command"],
        1
    );
    let grading2 = read_json(&run_dir(&results, 2).join("grading.json"));
    assert_eq!(grading2["summary"]["passed"], 1);
    assert_eq!(grading2["summary"]["failed"], 1);
    let timing = read_json(&run_dir(&results, 1).join("timing.json"));
    assert!(timing["total_tokens"].as_u64().unwrap() > 0, "{timing}");
    let answer = std::fs::read_to_string(run_dir(&results, 1).join("outputs/answer.md")).unwrap();
    assert!(answer.contains("Total: 42"), "{answer}");
    let benchmark = read_json(&results.join("benchmark.json"));
    assert_eq!(benchmark["metadata"]["skill_name"], SKILL);
    assert_eq!(
        benchmark["metadata"]["checks"],
        json!({"passed": 5, "failed": 1, "not_checked": 1})
    );
    assert_eq!(benchmark["metadata"]["grader_model"], Value::Null);
    assert_eq!(benchmark["metadata"]["evals_run"], json!([1, 2]));
    // The skill was preloaded: the first request already has its body.
    let bodies = fake.bodies.lock().unwrap();
    assert!(bodies.iter().all(|b| !is_grader(b)));
    assert!(
        bodies
            .iter()
            .all(|b| has_called(b, "load_skill") || has_called(b, "skill_load"))
    );
}

#[test]
fn outputs_with_a_grader_check_the_statements() {
    let fake = Fake::start(|body, _| output_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let skill = report_skill(dir.path(), report_cases());
    let results = dir.path().join("results");
    let page = dir.path().join("outputs.html");
    let out = skills_in(
        dir.path(),
        &fake.url,
        &outputs_args(
            skill.to_str().unwrap(),
            &[
                "--run",
                "local",
                "--grader",
                "openai:grader-model",
                "--out",
                results.to_str().unwrap(),
                "--json",
                "--html",
                page.to_str().unwrap(),
            ],
        ),
    );
    assert_eq!(code(&out), 1, "{}", text(&out.stderr));
    let report = parse(&out);
    assert_eq!(report["grader"], "openai:grader-model");
    assert_eq!(report["runs"].as_array().unwrap().len(), 2);
    let grading = read_json(&run_dir(&results, 1).join("grading.json"));
    assert_eq!(grading["summary"]["passed"], 5, "{grading}");
    assert_eq!(grading["summary"]["not_checked"], 0);
    let statement = grading["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"] == "The answer states the total")
        .unwrap();
    assert_eq!(statement["passed"], true);
    assert!(
        statement["evidence"]
            .as_str()
            .unwrap()
            .contains("Total: 42")
    );
    let benchmark = read_json(&results.join("benchmark.json"));
    assert_eq!(benchmark["metadata"]["grader_model"], "openai:grader-model");
    assert_eq!(
        benchmark["metadata"]["checks"],
        json!({"passed": 6, "failed": 1, "not_checked": 0})
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(SKILL), "{html}");
    // The page as headless chromium renders it (CI installs it; a missing
    // browser fails): one `runs` row per case run, and the failed check.
    let dom = crate::support::dump_dom(&page);
    assert_eq!(dom.matches("data-eval=").count(), 2, "{dom}");
    assert!(dom.contains("id=\"failed-checks\""), "{dom}");
    assert!(dom.contains("Cost of the grader"), "{dom}");
    assert_eq!(
        fake.bodies
            .lock()
            .unwrap()
            .iter()
            .filter(|b| is_grader(b))
            .count(),
        1
    );
}

/// The default runtime is the bubblewrap sandbox. Needs /usr/bin/bwrap
/// (CI installs it); fails without it.
#[test]
fn outputs_run_in_the_sandbox_by_default() {
    assert!(
        Path::new("/usr/bin/bwrap").exists(),
        "/usr/bin/bwrap is missing: install bubblewrap (`apt-get install -y bubblewrap`; CI does)"
    );
    let fake = Fake::start(|body, _| output_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let cases = json!([report_cases()[0].clone()]);
    let skill = report_skill(dir.path(), cases);
    let results = dir.path().join("results");
    let out = skills_in(
        dir.path(),
        &fake.url,
        &outputs_args(
            skill.to_str().unwrap(),
            &[
                "--grader",
                "openai:grader-model",
                "--out",
                results.to_str().unwrap(),
            ],
        ),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    let grading = read_json(&run_dir(&results, 1).join("grading.json"));
    assert_eq!(
        grading["summary"],
        json!({"passed": 5, "failed": 0, "not_checked": 0, "total": 5, "pass_rate": 1.0}),
        "{grading}"
    );
    let benchmark = read_json(&results.join("benchmark.json"));
    assert_eq!(
        benchmark["metadata"]["checks"],
        json!({"passed": 5, "failed": 0, "not_checked": 0})
    );
}

#[test]
fn outputs_refuse_usage_errors_with_exit_2() {
    let fake = Fake::start(|body, _| output_reply(body));
    let dir = tempfile::tempdir().unwrap();
    let skill = report_skill(dir.path(), report_cases());
    let skill = skill.to_str().unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir_all(other.join("evals")).unwrap();
    std::fs::write(
        other.join("evals").join("evals.json"),
        json!({"skill_name": "no-such-skill", "evals": [{"id": 1, "prompt": "hi"}]}).to_string(),
    )
    .unwrap();
    let no_evals = dir.path().join("empty");
    std::fs::create_dir_all(&no_evals).unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // A workspace check without a runtime.
        (outputs_args(skill, &["--run", "none"]), "no runtime"),
        (
            outputs_args(skill, &["--run", "none", "--artifacts", "x"]),
            "--artifacts",
        ),
        (
            outputs_args(skill, &["--run", "local", "--timeout", "0"]),
            "--timeout",
        ),
        (
            outputs_args(no_evals.to_str().unwrap(), &["--run", "local"]),
            "evals.json",
        ),
        (
            outputs_args(other.to_str().unwrap(), &["--run", "local"]),
            "no-such-skill",
        ),
    ];
    for (args, says) in cases {
        let out = skills_in(dir.path(), &fake.url, &args);
        let stderr = text(&out.stderr);
        assert_eq!(code(&out), 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert!(fake.bodies.lock().unwrap().is_empty());
}
