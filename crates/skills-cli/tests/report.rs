//! End-to-end tests of `skills report`: the golden text for the shipped
//! example skills, the JSON shape, odd and invalid skills, empty roots, and the
//! HTML page rendered in a real headless browser (Debian's chromium, which CI
//! installs; the test fails without it).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skills_testkit::fixture::SkillDir;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    #[track_caller]
    fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "exit code {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// Runs `skills` in `cwd` with an empty home (no personal skills) and no
/// colour-related environment.
fn run_in(cwd: &Path, args: &[&str]) -> Run {
    let home = tempfile::tempdir().expect("temp home");
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .env_remove("SKILLS_ROOT")
        .env_remove("RUST_LOG")
        .output()
        .expect("the skills binary runs");
    Run {
        code: output.status.code().expect("exited normally"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Asserts that the insta binary snapshot `name` (`<stem>.<extension>`:
/// `tests/snapshots/<stem>.snap` and `<stem>.snap.<extension>`) holds exactly
/// `actual`, byte for byte; review changes with `cargo insta review`.
fn assert_snapshot(name: &str, actual: &str) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_binary_snapshot!(name, actual.as_bytes().to_vec()));
}

fn write_skill(root: &Path, folder: &str, frontmatter: &str, body: &str) -> PathBuf {
    SkillDir::with_frontmatter(folder, frontmatter)
        .body(format!("{body}\n"))
        .write_in(root)
        .expect("SKILL.md")
}

#[test]
fn golden_text_for_the_example_skills() {
    let run = run_in(&workspace(), &["report", "examples/skills"]).ok();
    assert_snapshot("report-examples.txt", &run.stdout);
    assert!(
        !run.stdout.contains('\u{1b}'),
        "no colours when not a terminal"
    );
}

#[test]
fn golden_json_for_the_example_skills() {
    let run = run_in(&workspace(), &["report", "--json", "examples/skills"]).ok();
    assert_snapshot("report-examples-json.json", &run.stdout);
}

#[test]
fn json_has_the_same_data_as_the_table() {
    let run = run_in(&workspace(), &["report", "--json", "examples/skills"]).ok();
    let v = run.json();
    assert_eq!(v["tokenizer"]["name"], "o200k_base");
    assert!(
        v["tokenizer"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("other vendors"))
    );
    assert_eq!(v["context_window"], 200_000);
    let skills = v["skills"].as_array().expect("skills");
    assert_eq!(skills.len(), 5);
    let t = &v["totals"];
    let sum = |key: &str| {
        skills
            .iter()
            .map(|s| s[key].as_u64().expect("a count"))
            .sum::<u64>()
    };
    assert_eq!(t["body_tokens"].as_u64(), Some(sum("body_tokens")));
    assert_eq!(t["docs_tokens"].as_u64(), Some(sum("docs_tokens")));
    assert_eq!(
        t["full_tokens"].as_u64(),
        Some(sum("body_tokens") + sum("docs_tokens"))
    );
    // The catalog holds every entry plus its instructions.
    assert!(t["catalog_tokens"].as_u64().expect("catalog") > sum("catalog_tokens"));
    for s in skills {
        for key in ["name", "dir", "status", "diagnostics"] {
            assert!(s.get(key).is_some(), "skill has `{key}`: {s}");
        }
    }
    let agents: Vec<&str> = v["budgets"]
        .as_array()
        .expect("budgets")
        .iter()
        .map(|b| b["agent"].as_str().expect("agent"))
        .collect();
    assert_eq!(agents, ["Claude Code", "Codex", "skills (ours)"]);
    for b in v["budgets"].as_array().expect("budgets") {
        assert_eq!(b["whole"], 5, "everything fits a 200k window: {b}");
        assert!(
            b["source"]
                .as_str()
                .is_some_and(|s| s.starts_with("https://"))
        );
        assert_eq!(b["skills"].as_array().map(Vec::len), Some(5));
    }
}

#[test]
fn cl100k_counts_differently_and_says_so() {
    let o200k = run_in(&workspace(), &["report", "--json", "examples/skills"])
        .ok()
        .json();
    let cl100k = run_in(
        &workspace(),
        &[
            "report",
            "--json",
            "--tokenizer",
            "cl100k",
            "examples/skills",
        ],
    )
    .ok()
    .json();
    assert_eq!(cl100k["tokenizer"]["name"], "cl100k_base");
    assert_ne!(
        o200k["totals"]["full_tokens"],
        cl100k["totals"]["full_tokens"]
    );
}

#[test]
fn a_small_context_window_shortens_and_drops() {
    let v = run_in(
        &workspace(),
        &["report", "--json", "--context", "2k", "examples/skills"],
    )
    .ok()
    .json();
    assert_eq!(v["context_window"], 2_000);
    let claude = &v["budgets"][0];
    assert_eq!(claude["limit"], 80);
    assert_eq!(claude["whole"], 0);
    let codex = &v["budgets"][1];
    assert_eq!(codex["limit"], 40);
    assert!(codex["dropped"].as_u64() > Some(0));
    let ours = &v["budgets"][2];
    assert_eq!(ours["dropped"], 5);
    let text = run_in(
        &workspace(),
        &["report", "--context", "1m", "examples/skills"],
    )
    .ok();
    assert!(text.stdout.contains("for a 1000000-token context window"));
}

#[test]
fn bad_context_is_a_usage_error() {
    let run = run_in(
        &workspace(),
        &["report", "--context", "lots", "examples/skills"],
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("invalid context window"),
        "{}",
        run.stderr
    );
}

#[test]
fn invalid_skills_are_still_reported() {
    let root = tempfile::tempdir().expect("root");
    write_skill(
        root.path(),
        "good",
        "name: good\ndescription: Does good things. Use when things should be good.",
        "# Good\n\nDo it.",
    );
    // Unreadable YAML: still skipped in lenient mode (a missing description
    // would now come from the body).
    write_skill(
        root.path(),
        "bad",
        "name: bad\ndescription: [unclosed",
        "# Bad\n",
    );
    let root_arg = root.path().to_str().expect("UTF-8 path");
    let v = run_in(root.path(), &["report", "--json", root_arg])
        .ok()
        .json();
    assert_eq!(v["totals"]["skills"], 2);
    assert_eq!(v["totals"]["loaded"], 1);
    assert_eq!(v["totals"]["invalid"], 1);
    let bad = v["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .find(|s| s["name"] == "bad")
        .expect("the invalid skill is a row");
    assert_eq!(bad["status"], "invalid");
    assert!(bad["errors"].as_u64() > Some(0));
    assert!(bad["body_tokens"].is_null());
    assert_eq!(v["budgets"][0]["skills"].as_array().map(Vec::len), Some(1));
    let text = run_in(root.path(), &["report", root_arg]).ok();
    assert!(text.stdout.contains("invalid"), "{}", text.stdout);
    assert!(text.stdout.contains("description"), "{}", text.stdout);
}

#[test]
fn odd_names_are_escaped_in_text_and_html() {
    let root = tempfile::tempdir().expect("root");
    // A folder whose name would forge a line and colour the terminal.
    write_skill(root.path(), "x\u{1b}[31my\nok", "name: Bad Name", "# Bad\n");
    write_skill(
        root.path(),
        "a-b",
        "name: a-b\ndescription: \"Quotes \\\" and <tags> & more. Use when odd.\"",
        "# Odd\n",
    );
    let root_arg = root.path().to_str().expect("UTF-8 path");
    let text = run_in(root.path(), &["report", root_arg]).ok();
    assert!(!text.stdout.contains('\u{1b}'), "{}", text.stdout);
    assert!(text.stdout.contains("x\\x1b[31my\\nok"), "{}", text.stdout);
    let page = root.path().join("out.html");
    run_in(
        root.path(),
        &["report", "--html", page.to_str().expect("UTF-8"), root_arg],
    )
    .ok();
    let html = fs::read_to_string(&page).expect("page");
    assert!(!html.contains('\u{1b}'));
    assert!(!html.contains("<tags>"));
    assert_eq!(html.matches("class=\"bar\"").count(), 2);
}

#[test]
fn empty_roots_give_an_empty_report() {
    let root = tempfile::tempdir().expect("root");
    let root_arg = root.path().to_str().expect("UTF-8 path");
    let v = run_in(root.path(), &["report", "--json", root_arg])
        .ok()
        .json();
    assert_eq!(v["totals"]["skills"], 0);
    assert_eq!(v["totals"]["catalog_tokens"], 0);
    assert_eq!(v["totals"]["saving_vs_full_percent"], 0.0);
    // The given path without a skill is said, as `skills validate` says it.
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no skill found"))
    );
    // No argument, no standard root and no examples/skills here: nothing.
    let text = run_in(root.path(), &["report"]).ok();
    assert!(
        text.stdout
            .starts_with("skills report: 0 skill folder(s) in no root")
    );
}

#[test]
fn no_argument_reports_the_bundled_examples() {
    let v = run_in(&workspace(), &["report", "--json"]).ok().json();
    assert!(
        v["roots"]
            .as_array()
            .expect("roots")
            .iter()
            .any(|r| r == "examples/skills"),
        "{}",
        v["roots"]
    );
    assert_eq!(v["totals"]["loaded"], 5);
}

/// The HTML page for the example skills, rendered by Debian's headless
/// chromium: the DOM it serializes has the tables and one bar per skill. CI
/// installs chromium (`.ci/run`), so a missing browser is a failure.
#[test]
fn html_renders_in_headless_chromium() {
    let out = tempfile::tempdir().expect("out");
    let page = out.path().join("report.html");
    let page_arg = page.to_str().expect("UTF-8 path");
    run_in(
        &workspace(),
        &["report", "--html", page_arg, "examples/skills"],
    )
    .ok();
    let html = fs::read_to_string(&page).expect("page");
    assert!(!html.contains("<script"), "no script needed");
    assert!(!html.contains("src=\"http"), "no external asset");
    let dom = crate::support::dump_dom(&page);
    assert!(
        dom.contains("<h1>skills report</h1>"),
        "the page rendered: {dom}"
    );
    assert!(dom.contains("id=\"skills\"") && dom.contains("id=\"budgets\""));
    let bars: Vec<&str> = dom
        .split("<rect class=\"bar\" data-skill=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(
        bars,
        [
            "api-docs-review",
            "commit-message",
            "csv-insights",
            "incident-postmortem",
            "release-notes"
        ],
        "one bar per skill"
    );
}

/// Documents are read beneath the skill folder: a reference that is a symlink
/// to a file outside it is not counted.
#[cfg(unix)]
#[test]
fn documents_are_counted_beneath_the_skill_folder_only() {
    let root = tempfile::tempdir().expect("root");
    let outside = tempfile::tempdir().expect("outside");
    fs::write(
        outside.path().join("secret.md"),
        "secret words ".repeat(100),
    )
    .expect("secret");
    let dir = write_skill(
        root.path(),
        "docs",
        "name: docs\ndescription: Has documents. Use when testing documents.",
        "# Docs\n",
    );
    fs::create_dir_all(dir.join("references")).expect("references");
    fs::write(dir.join("references/guide.md"), "# Guide\n\nRead me.\n").expect("guide");
    fs::write(dir.join("notes.txt"), "Notes.\n").expect("notes");
    fs::write(dir.join("scripts.py"), "print('not a document')\n").expect("script");
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        dir.join("references/leak.md"),
    )
    .expect("symlink");
    let root_arg = root.path().to_str().expect("UTF-8 path");
    let v = run_in(root.path(), &["report", "--json", root_arg])
        .ok()
        .json();
    let skill = &v["skills"][0];
    // "# Guide\n\nRead me.\n" and "Notes.\n" only.
    let docs_tokens = skill["docs_tokens"].as_u64().expect("docs tokens");
    assert!(docs_tokens > 0 && docs_tokens < 20, "{skill}");
}
