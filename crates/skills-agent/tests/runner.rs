//! The agent loop end to end with scripted models: events, tool dispatch
//! (skill tools, user tools with schema checks, concurrency, call order),
//! forked sub-agents, model switching, the allowed-tools policy, the step
//! limit, cancellation, and the cache rule on every request.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use skills_agent::{
    Agent, AgentBuilder, AgentMap, Approver, CancelToken, Event, Model, ModelError, ModelErrorKind,
    ModelMap, ModelRequest, ModelResponse, Role, RunErrorKind, RunEvent, Runner, ScriptStep,
    ScriptedModel, Surface, ToolCall, ToolError, ToolErrorKind, ToolPolicy, ToolSpec, Usage,
    tool_fn,
};
use skills_core::{ContextMode, Extensions, InCodeProvider, SkillProvider, define_skill};
use skills_models::wire;

fn extensions(
    context: Option<ContextMode>,
    model: Option<&str>,
    agent: Option<&str>,
) -> Extensions {
    let mut ext = Extensions::default();
    ext.context = context;
    ext.model = model.map(str::to_owned);
    ext.agent = agent.map(str::to_owned);
    ext
}

fn provider() -> Arc<dyn SkillProvider> {
    let skills = [
        define_skill(
            "pdf-tables",
            "Extracts tables from PDF files. Use when the user asks for tables in a PDF.",
        )
        .body("Keep the header row. Read references/guide.md for merged cells.")
        .resource(
            "references/guide.md",
            "Merge cells that continue on the next page.\n",
        )
        .build(),
        define_skill(
            "summarize",
            "Summarizes long documents in a sub-agent. Use for long documents.",
        )
        .body("Write three bullet points, nothing else.")
        .extensions(extensions(Some(ContextMode::Fork), None, None))
        .build(),
        define_skill(
            "review",
            "Reviews the conversation so far in a sub-agent. Use when asked for a review.",
        )
        .body("List what went well and what did not.")
        .extensions(extensions(
            Some(ContextMode::ForkWithContext),
            Some("small"),
            Some("critic"),
        ))
        .build(),
        define_skill("deep-math", "Proves theorems carefully. Use for proofs.")
            .body("Think step by step.")
            .extensions(extensions(None, Some("big"), None))
            .build(),
        define_skill(
            "git-helper",
            "Runs git for the user. Use for git questions.",
        )
        .body("Use the git tool only.")
        .allowed_tools(["git(status:*)", "git_log"])
        .build(),
    ];
    Arc::new(
        InCodeProvider::new(skills.into_iter().map(|s| s.expect("valid skill"))).expect("provider"),
    )
}

fn weather_spec() -> ToolSpec {
    ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": false
        }),
    )
}

fn builder(surface: Surface) -> AgentBuilder {
    Agent::builder("assistant", provider())
        .instructions("You are a careful assistant.")
        .surface(surface)
        .tool(weather_spec())
        .tool(ToolSpec::new("git", "Runs git.", json!({"type": "object"})))
        .tool(ToolSpec::new(
            "git_log",
            "Shows the git log.",
            json!({"type": "object"}),
        ))
}

fn agent() -> Agent {
    builder(Surface::Default).build().expect("agent")
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

fn calls(text: &str, list: Vec<ToolCall>) -> ModelResponse {
    ModelResponse::tool_calls(text, list).with_usage(Usage::new(1000, 20, 800, 0))
}

fn answer(text: &str) -> ModelResponse {
    ModelResponse::text(text).with_usage(Usage::new(1200, 30, 1000, 0))
}

async fn collect(stream: skills_agent::RunStream<'_>) -> Vec<RunEvent> {
    stream.collect().await
}

fn finished(events: &[RunEvent]) -> &skills_agent::RunOutcome {
    match events.last() {
        Some(RunEvent::Finished { outcome }) => outcome,
        other => panic!("the run did not finish: {other:?}"),
    }
}

fn failed(events: &[RunEvent]) -> &skills_agent::RunError {
    match events.last() {
        Some(RunEvent::Failed { error }) => error,
        other => panic!("the run did not fail: {other:?}"),
    }
}

/// (tool, is_error, content) of every tool result (shared with
/// `engine::allowed_tools`).
pub(crate) fn results(events: &[RunEvent]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolResult {
                tool,
                is_error,
                content,
                ..
            } => Some((tool.clone(), *is_error, content.clone())),
            _ => None,
        })
        .collect()
}

/// Length of the common byte prefix of `a` without its closing brackets and
/// `b`, as a share of the former.
fn prefix_share(a: &str, b: &str) -> f64 {
    let a = a.trim_end_matches(['}', ']']);
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    common as f64 / a.len() as f64
}

/// Load a skill, read its file, fork a sub-agent, answer: on both tool
/// surfaces, every request's wire body (OpenAI and Anthropic) extends the
/// previous one by at least 99 % of its bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_read_fork_answer_keeps_every_request_a_prefix_extension() {
    for surface in [Surface::Default, Surface::Trpc] {
        let (load, read) = match surface {
            Surface::Default => (
                call("c1", "load_skill", json!({"name": "pdf-tables"})),
                call(
                    "c2",
                    "read_skill_file",
                    json!({"skill": "pdf-tables", "path": "references/guide.md"}),
                ),
            ),
            _ => (
                call("c1", "skill_load", json!({"skill": "pdf-tables"})),
                call(
                    "c2",
                    "skill_load",
                    json!({"skill": "pdf-tables", "docs": ["references/guide.md"]}),
                ),
            ),
        };
        let fork_tool = if matches!(surface, Surface::Default) {
            call("c3", "load_skill", json!({"name": "summarize"}))
        } else {
            call("c3", "skill_load", json!({"skill": "summarize"}))
        };
        let model = Arc::new(ScriptedModel::new([
            calls("Let me load the skill.", vec![load]),
            calls("", vec![read]),
            calls("Now a summary.", vec![fork_tool]),
            // The sub-agent's one answer.
            answer("- one\n- two\n- three"),
            answer("Here are the tables and a summary."),
        ]));
        let agent = builder(surface.clone()).build().expect("agent");
        let runner = Runner::builder(model.clone()).build();
        let mut session = agent.start_session().await.expect("session");
        let events =
            collect(runner.run(&mut session, "Get the tables from q3.pdf and summarize it.")).await;
        let outcome = finished(&events);
        assert_eq!(outcome.text, "Here are the tables and a summary.");
        assert_eq!(outcome.steps, 4);
        // Four parent calls and the sub-agent's one.
        assert_eq!(outcome.usage.input_tokens, 3 * 1000 + 1200 + 1200);
        assert!(
            outcome
                .requests
                .iter()
                .skip(1)
                .all(|r| r.extends_previous == Some(true))
        );
        let requests = model.requests();
        assert_eq!(requests.len(), 5);
        // The sub-agent (request 4) saw only the skill and the task.
        let sub = &requests[3];
        assert_eq!(sub.messages.len(), 1, "{:#?}", sub.messages);
        assert!(
            sub.messages[0]
                .content
                .contains("Write three bullet points")
        );
        assert!(
            sub.messages[0]
                .content
                .contains("Get the tables from q3.pdf")
        );
        assert!(!sub.messages[0].content.contains("Keep the header row"));
        // Its load state never reached the parent.
        assert_eq!(
            session.loaded().into_iter().collect::<Vec<_>>(),
            ["pdf-tables"]
        );
        let parent: Vec<&ModelRequest> = [0, 1, 2, 4].iter().map(|i| &requests[*i]).collect();
        for pair in parent.windows(2) {
            for (label, a, b) in [
                (
                    "openai",
                    wire::openai_chat(pair[0], "m"),
                    wire::openai_chat(pair[1], "m"),
                ),
                (
                    "anthropic",
                    wire::anthropic_messages(pair[0], "m"),
                    wire::anthropic_messages(pair[1], "m"),
                ),
            ] {
                let share = prefix_share(&a, &b);
                assert!(share >= 0.99, "{surface:?} {label}: {share}");
            }
        }
        let fork_result = results(&events)
            .into_iter()
            .find(|(_, _, content)| content.contains("sub-agent"))
            .expect("the fork answered");
        assert!(!fork_result.1);
        assert!(fork_result.2.contains("- one\n- two\n- three"));
        assert!(events.iter().any(|e| matches!(
            e,
            RunEvent::SubAgent { skill, event } if skill == "summarize"
                && matches!(**event, RunEvent::RequestSent { .. })
        )));
    }
}

#[tokio::test]
async fn events_come_in_order_and_serialize_as_json_lines() {
    let model = Arc::new(ScriptedModel::new([
        calls(
            "Loading.",
            vec![call("c1", "load_skill", json!({"name": "pdf-tables"}))],
        ),
        answer("Done."),
    ]));
    let runner = Runner::builder(model).build();
    let mut session = agent().start_session().await.expect("session");
    let events = collect(runner.run(&mut session, "tables please")).await;
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            serde_json::to_value(e).expect("json")["type"]
                .as_str()
                .expect("tagged")
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "request_sent",
            "text_delta",
            "tool_call",
            "usage",
            "tool_result",
            "skill",
            "request_sent",
            "text_delta",
            "usage",
            "finished"
        ]
    );
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::Skill { event: Event::SkillLoaded { skill, by_mention: false } } if skill == "pdf-tables"
    )));
    let json = serde_json::to_value(events.last().expect("last")).expect("json");
    assert_eq!(json["outcome"]["text"], "Done.");
    assert_eq!(json["outcome"]["requests"][1]["extends_previous"], true);
}

/// Calls run so far, calls running now, and the most running at once.
#[derive(Debug, Default)]
struct Counter {
    ran: AtomicUsize,
    running: AtomicUsize,
    most: AtomicUsize,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_tools_are_schema_checked_run_concurrently_and_answered_in_call_order() {
    let ran = Arc::new(Counter::default());
    let seen = Arc::clone(&ran);
    let weather = tool_fn(move |args: Value| {
        let seen = Arc::clone(&seen);
        async move {
            seen.ran.fetch_add(1, Ordering::SeqCst);
            let now = seen.running.fetch_add(1, Ordering::SeqCst) + 1;
            seen.most.fetch_max(now, Ordering::SeqCst);
            let city = args["city"].as_str().unwrap_or_default().to_owned();
            // The first city answers last: results still follow call order.
            let wait = if city == "Oslo" { 80 } else { 5 };
            tokio::time::sleep(Duration::from_millis(wait)).await;
            seen.running.fetch_sub(1, Ordering::SeqCst);
            if city == "Atlantis" {
                return Err(ToolError::new(ToolErrorKind::Failed, "no such city"));
            }
            Ok(format!("sunny in {city}"))
        }
    });
    let model = Arc::new(ScriptedModel::new([
        calls(
            "",
            vec![
                call("a", "get_weather", json!({"city": "Oslo"})),
                call("b", "get_weather", json!({"city": "Rome"})),
                call("c", "get_weather", json!({"town": "Paris"})),
                call("d", "get_weather", json!("{\"city\": \"Atlantis\"}")),
                call("e", "no_such_tool", json!({})),
            ],
        ),
        answer("ok"),
    ]));
    let runner = Runner::builder(model.clone())
        .handler("get_weather", weather)
        .build();
    let mut session = agent().start_session().await.expect("session");
    let events = collect(runner.run(&mut session, "weather?")).await;
    finished(&events);
    let got = results(&events);
    assert_eq!(got.len(), 5);
    assert_eq!(
        got[0],
        ("get_weather".into(), false, "sunny in Oslo".into())
    );
    assert_eq!(
        got[1],
        ("get_weather".into(), false, "sunny in Rome".into())
    );
    assert!(
        got[2].1 && got[2].2.contains("do not match its schema"),
        "{:?}",
        got[2]
    );
    assert!(
        got[2].2.contains("\"city\" is a required property"),
        "{:?}",
        got[2]
    );
    assert_eq!(
        got[3],
        ("get_weather".into(), true, "Error: no such city".into())
    );
    assert!(
        got[4].1 && got[4].2.contains("no tool named `no_such_tool`"),
        "{:?}",
        got[4]
    );
    // The handler never saw the call that failed its schema.
    assert_eq!(ran.ran.load(Ordering::SeqCst), 3);
    // The calls overlapped (Oslo was still waiting when the others started).
    assert_eq!(ran.most.load(Ordering::SeqCst), 3);
    // The transcript holds the results in call order.
    let ids: Vec<&str> = session
        .transcript()
        .iter()
        .filter_map(|m| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(ids, ["a", "b", "c", "d", "e"]);
}

#[tokio::test]
async fn a_user_tool_without_a_handler_is_an_error_result_and_a_notice() {
    let model = Arc::new(ScriptedModel::new([
        calls("", vec![call("a", "get_weather", json!({"city": "Oslo"}))]),
        answer("ok"),
    ]));
    let runner = Runner::builder(model).build();
    let mut session = agent().start_session().await.expect("session");
    let events = collect(runner.run(&mut session, "weather?")).await;
    finished(&events);
    let got = results(&events);
    assert!(got[0].1 && got[0].2.contains("no handler"), "{got:?}");
    assert!(events.iter().any(
        |e| matches!(e, RunEvent::Notice { message } if message.contains("RunnerBuilder::handler"))
    ));
}

#[tokio::test]
async fn the_step_limit_stops_a_model_that_never_finishes() {
    let looping = (0..5).map(|i| {
        calls(
            "",
            vec![call(
                &format!("c{i}"),
                "load_skill",
                json!({"name": "pdf-tables"}),
            )],
        )
    });
    let model = Arc::new(ScriptedModel::new(looping));
    let runner = Runner::builder(model.clone()).max_steps(3).build();
    let mut session = agent().start_session().await.expect("session");
    let events = collect(runner.run(&mut session, "go")).await;
    let error = failed(&events);
    assert_eq!(error.kind(), RunErrorKind::StepLimit);
    assert!(error.message().contains("3 calls"), "{error}");
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn a_model_error_fails_the_run_with_the_providers_message() {
    let model = Arc::new(ScriptedModel::with_steps([ScriptStep::Fail(
        ModelError::new(ModelErrorKind::RateLimited, "slow down")
            .with_status(429)
            .with_retries(3),
    )]));
    let runner = Runner::builder(model).build();
    let mut session = agent().start_session().await.expect("session");
    let events = collect(runner.run(&mut session, "hi")).await;
    let error = failed(&events);
    assert_eq!(error.kind(), RunErrorKind::Model);
    assert_eq!(error.model_error().and_then(ModelError::status), Some(429));
    assert!(error.message().contains("slow down"), "{error}");
    let json = serde_json::to_value(events.last().expect("event")).expect("json");
    assert_eq!(json["error"]["status"], 429);
}

/// A model that never answers until it is dropped.
#[derive(Debug, Default)]
struct Hanging {
    calls: AtomicUsize,
}

#[async_trait]
impl Model for Hanging {
    fn name(&self) -> &str {
        "hanging"
    }
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        std::future::pending().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_a_hanging_call_and_leaves_a_usable_session() {
    let model = Arc::new(Hanging::default());
    let runner = Runner::builder(model.clone()).build();
    let mut session = agent().start_session().await.expect("session");
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        trigger.cancel();
    });
    let events = collect(runner.run_with_cancel(&mut session, "hi", cancel)).await;
    assert_eq!(failed(&events).kind(), RunErrorKind::Cancelled);
    assert_eq!(model.calls.load(Ordering::SeqCst), 1);
    // Nothing half-done was appended: the user message only.
    assert_eq!(session.transcript().len(), 1);

    // Dropping the stream stops the run too.
    {
        let mut stream = runner.run(&mut session, "again");
        let first = stream.next().await.expect("an event");
        assert!(matches!(first, RunEvent::RequestSent { .. }));
        let waited = tokio::time::timeout(Duration::from_millis(30), stream.next()).await;
        assert!(waited.is_err(), "the model hangs");
    }
    assert_eq!(model.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn calls_left_unanswered_by_a_dropped_run_are_closed_on_the_next_run() {
    let mut session = agent().start_session().await.expect("session");
    session.push_user("weather?").await.expect("user");
    session.push_assistant(skills_agent::Message::assistant_with_calls(
        "",
        vec![call("x1", "get_weather", json!({"city": "Oslo"}))],
    ));
    let model = Arc::new(ScriptedModel::new([answer("Sorry, try again.")]));
    let runner = Runner::builder(model.clone()).build();
    let events = collect(runner.resume(&mut session, CancelToken::new())).await;
    finished(&events);
    let request = &model.requests()[0];
    let closing = request
        .messages
        .iter()
        .find(|m| m.tool_call_id.as_deref() == Some("x1"))
        .expect("closed");
    assert!(closing.is_error && closing.content.contains("stopped before this call ran"));
}

#[tokio::test]
async fn fork_with_context_copies_the_history_and_resolves_agent_and_model_by_name() {
    let critic = Agent::builder("critic", provider())
        .instructions("You criticize.")
        .build()
        .expect("critic");
    let small = Arc::new(ScriptedModel::new([answer("Went well: tables.")]).named("small"));
    let main = Arc::new(ScriptedModel::new([
        calls(
            "",
            vec![call("c1", "load_skill", json!({"name": "review"}))],
        ),
        answer("Review done."),
    ]));
    let runner = Runner::builder(main.clone())
        .agent_hub(Arc::new(AgentMap::new().with("critic", critic)))
        .model_hub(Arc::new(ModelMap::new().with("small", small.clone())))
        .build();
    let mut session = agent().start_session().await.expect("session");
    session.push_user("Earlier question.").await.expect("user");
    session.push_assistant(skills_agent::Message::assistant("Earlier answer."));
    let events = collect(runner.run(&mut session, "Please review.")).await;
    assert_eq!(finished(&events).text, "Review done.");
    let sub = &small.requests()[0];
    assert!(sub.system[0].text.contains("You criticize."));
    let texts: Vec<&str> = sub.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(
        texts[..3],
        ["Earlier question.", "Earlier answer.", "Please review."]
    );
    assert!(texts[3].contains("List what went well"), "{texts:?}");
    assert!(sub.messages.iter().all(|m| m.tool_calls.is_empty()));
    assert!(results(&events)[0].2.contains("Went well: tables."));
}

#[tokio::test]
async fn a_fork_without_the_hub_it_needs_is_a_clear_tool_error() {
    let main = Arc::new(ScriptedModel::new([
        calls(
            "",
            vec![call("c1", "load_skill", json!({"name": "review"}))],
        ),
        answer("ok"),
    ]));
    let runner = Runner::builder(main.clone()).build();
    let mut session = agent().start_session().await.expect("session");
    let events = collect(runner.run(&mut session, "review")).await;
    finished(&events);
    let got = results(&events);
    assert!(got[0].1, "{got:?}");
    assert!(got[0].2.contains("no agent hub is configured"), "{got:?}");

    let runner = Runner::builder(Arc::new(ScriptedModel::new([
        calls(
            "",
            vec![call("c1", "load_skill", json!({"name": "review"}))],
        ),
        answer("ok"),
    ])))
    .agent_hub(Arc::new(AgentMap::new()))
    .build();
    let events = collect(runner.run(&mut session, "review")).await;
    let got = results(&events);
    assert!(
        got[0].2.contains("which the agent hub does not have"),
        "{got:?}"
    );
    assert!(session.loaded().is_empty(), "a failed fork loads nothing");
}

#[tokio::test]
async fn an_inline_skill_with_a_model_switches_the_rest_of_the_run() {
    let big = Arc::new(ScriptedModel::new([answer("Proved.")]).named("big"));
    let main = Arc::new(ScriptedModel::new([calls(
        "",
        vec![call("c1", "load_skill", json!({"name": "deep-math"}))],
    )]));
    let runner = Runner::builder(main.clone())
        .model_hub(Arc::new(ModelMap::new().with("big", big.clone())))
        .build();
    let mut session = agent().start_session().await.expect("session");
    let events = collect(runner.run(&mut session, "prove it")).await;
    assert_eq!(finished(&events).text, "Proved.");
    assert_eq!(main.requests().len(), 1);
    assert_eq!(big.requests().len(), 1);
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ModelSwitched { skill, from, to } if skill == "deep-math" && from == "scripted" && to == "big"
    )));
    // The switched model got the same growing conversation.
    let switched = &big.requests()[0];
    assert_eq!(switched.messages.len(), 3);
    assert_eq!(switched.messages[..1], main.requests()[0].messages[..]);
    assert_eq!(switched.system, main.requests()[0].system);

    // Without a hub, nothing switches.
    let alone = Arc::new(ScriptedModel::new([
        calls(
            "",
            vec![call("c1", "load_skill", json!({"name": "deep-math"}))],
        ),
        answer("Proved here."),
    ]));
    let mut session = agent().start_session().await.expect("session");
    let events = collect(Runner::builder(alone).build().run(&mut session, "prove it")).await;
    assert_eq!(finished(&events).text, "Proved here.");
}

/// Each request gets the cache breakpoints of the model it goes to (a
/// model switched mid-run included), unless the agent sets a strategy.
#[tokio::test]
async fn requests_follow_the_models_cache_strategy_unless_the_agent_sets_one() {
    use skills_agent::{CacheBreakpoint, CacheStrategy};
    // An OpenAI-style model hands over to one that caches at markers.
    let marked = Arc::new(
        ScriptedModel::new([answer("Proved.")])
            .named("big")
            .with_cache_strategy(CacheStrategy::Anthropic),
    );
    let plain = Arc::new(ScriptedModel::new([calls(
        "",
        vec![call("c1", "load_skill", json!({"name": "deep-math"}))],
    )]));
    let runner = Runner::builder(plain.clone())
        .model_hub(Arc::new(ModelMap::new().with("big", marked.clone())))
        .build();
    let mut session = agent().start_session().await.expect("session");
    let events = collect(runner.run(&mut session, "prove it")).await;
    assert_eq!(finished(&events).text, "Proved.");
    assert!(plain.requests()[0].cache_breakpoints.is_empty());
    assert_eq!(
        marked.requests()[0].cache_breakpoints,
        vec![
            CacheBreakpoint::Tools,
            CacheBreakpoint::System { block: 0 },
            CacheBreakpoint::Message { index: 0 },
            CacheBreakpoint::Message { index: 2 },
        ]
    );

    // The agent's own strategy wins over the model's.
    let marked =
        Arc::new(ScriptedModel::new([answer("Hi.")]).with_cache_strategy(CacheStrategy::Anthropic));
    let agent = builder(Surface::Default)
        .cache(CacheStrategy::AutomaticPrefix)
        .build()
        .expect("agent");
    assert_eq!(agent.cache_override(), Some(CacheStrategy::AutomaticPrefix));
    assert_eq!(
        agent.cache_strategy_for(marked.as_ref()),
        CacheStrategy::AutomaticPrefix
    );
    let mut session = agent.start_session().await.expect("session");
    collect(
        Runner::builder(marked.clone())
            .build()
            .run(&mut session, "hi"),
    )
    .await;
    assert!(marked.requests()[0].cache_breakpoints.is_empty());
}

#[derive(Debug)]
struct Approve {
    answer: bool,
    asked: std::sync::Mutex<Vec<String>>,
}

#[async_trait]
impl Approver for Approve {
    async fn approve(&self, call: &ToolCall, _loaded: &[String]) -> bool {
        self.asked.lock().expect("lock").push(call.name.clone());
        self.answer
    }
}

fn git_turn() -> Vec<ModelResponse> {
    vec![
        calls(
            "",
            vec![call("c1", "load_skill", json!({"name": "git-helper"}))],
        ),
        calls(
            "",
            vec![
                call("c2", "git", json!({"command": "status --short"})),
                call("c3", "git_log", json!({})),
                call("c4", "get_weather", json!({"city": "Oslo"})),
            ],
        ),
        answer("done"),
    ]
}

fn git_runner(policy: ToolPolicy) -> Runner {
    let ok = |text: &'static str| tool_fn(move |_| async move { Ok(text.to_owned()) });
    Runner::builder(Arc::new(ScriptedModel::new(git_turn())))
        .handler("git", ok("clean"))
        .handler("git_log", ok("one commit"))
        .handler("get_weather", ok("sunny"))
        .policy(policy)
        .build()
}

#[tokio::test]
async fn restrict_policy_refuses_tools_the_loaded_skills_do_not_allow() {
    let mut session = agent().start_session().await.expect("session");
    let events = collect(git_runner(ToolPolicy::Restrict).run(&mut session, "git status")).await;
    finished(&events);
    let got = results(&events);
    assert_eq!(got[1], ("git".into(), false, "clean".into()));
    assert_eq!(got[2], ("git_log".into(), false, "one commit".into()));
    assert!(got[3].1 && got[3].2.contains("not allowed"), "{got:?}");
    assert!(
        got[3].2.contains("allowed: git(status:*), git_log"),
        "{got:?}"
    );
}

#[tokio::test]
async fn pre_approve_policy_asks_only_for_tools_no_loaded_skill_lists() {
    for answer in [true, false] {
        let approver = Arc::new(Approve {
            answer,
            asked: Default::default(),
        });
        let mut session = agent().start_session().await.expect("session");
        let runner = git_runner(ToolPolicy::PreApprove(approver.clone()));
        let events = collect(runner.run(&mut session, "git status")).await;
        finished(&events);
        assert_eq!(*approver.asked.lock().expect("lock"), ["get_weather"]);
        let got = results(&events);
        assert_eq!(got[1].2, "clean");
        if answer {
            assert_eq!(got[3].2, "sunny");
        } else {
            assert!(got[3].1 && got[3].2.contains("did not approve"), "{got:?}");
        }
    }
}

#[tokio::test]
async fn policy_is_off_by_default_and_skill_tools_are_never_refused() {
    let mut session = agent().start_session().await.expect("session");
    let events = collect(git_runner(ToolPolicy::Off).run(&mut session, "git status")).await;
    finished(&events);
    assert!(results(&events).iter().all(|(_, is_error, _)| !is_error));
}

#[tokio::test]
async fn non_streaming_runs_emit_the_same_events() {
    let script = || {
        vec![
            calls(
                "Loading.",
                vec![call("c1", "load_skill", json!({"name": "pdf-tables"}))],
            ),
            answer("Done."),
        ]
    };
    let mut kinds = Vec::new();
    for streaming in [true, false] {
        let runner = Runner::builder(Arc::new(ScriptedModel::new(script())))
            .streaming(streaming)
            .build();
        let mut session = agent().start_session().await.expect("session");
        let events = collect(runner.run(&mut session, "go")).await;
        kinds.push(
            events
                .iter()
                .map(|e| serde_json::to_value(e).expect("json")["type"].clone())
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(kinds[0], kinds[1]);
}

#[tokio::test]
async fn a_transcript_from_a_run_replays_to_the_same_state() {
    let model = Arc::new(ScriptedModel::new([
        calls(
            "",
            vec![call("c1", "load_skill", json!({"name": "pdf-tables"}))],
        ),
        answer("Done."),
    ]));
    let runner = Runner::builder(model).build();
    let agent = agent();
    let mut session = agent.start_session().await.expect("session");
    finished(&collect(runner.run(&mut session, "go")).await);
    let resumed = agent
        .resume_session(
            session.pinned_catalog().clone(),
            session.transcript().to_vec(),
        )
        .await
        .expect("resume");
    assert_eq!(resumed.loaded(), session.loaded());
    assert_eq!(resumed.build_request(), session.build_request());
    assert!(session.transcript().iter().any(|m| m.role == Role::Tool));
}

/// A stored run appends each step before the next model call, stores the
/// forked sub-agent as a fork of the session at the point it branched, and
/// a resumed session rebuilds the same request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_run_saves_every_step_and_stores_the_fork_with_its_fork_point() {
    use skills_agent::{MemoryStore, SessionEvent, SessionStore, SessionWriter, read_lineage};

    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let agent = agent();
    let mut session = agent.start_session().await.expect("session");
    session.set_id("chat-1".parse().expect("a valid id"));
    let mut writer = SessionWriter::create(Arc::clone(&store), &session, None)
        .await
        .expect("create");

    // The model looks at the store at each call: before the parent's second
    // call, the first step (the answer with the fork call and the fork's
    // result) must be stored.
    let model = Arc::new(Peeking {
        inner: ScriptedModel::new([
            calls(
                "A summary first.",
                vec![call("c1", "load_skill", json!({"name": "summarize"}))],
            ),
            // The sub-agent's one answer.
            answer("- one\n- two\n- three"),
            answer("Here is the summary."),
        ]),
        store: Arc::clone(&store),
        seen: std::sync::Mutex::new(Vec::new()),
    });
    let runner = Runner::builder(model.clone()).build();
    let outcome = {
        let mut events = runner.run_stored(
            &mut session,
            &mut writer,
            "Summarize the report.",
            CancelToken::new(),
        );
        let mut last = None;
        while let Some(event) = events.next().await {
            if let RunEvent::Finished { outcome } = event {
                last = Some(outcome);
            }
        }
        last.expect("finished")
    };
    assert_eq!(outcome.text, "Here is the summary.");

    // Before the parent's second request, its log held the fork's result
    // (appended after the answer that asked for the fork).
    // Calls: the parent's first, the sub-agent's, the parent's second.
    let before_second = model.seen.lock().expect("lock").remove(2);
    assert!(
        before_second
            .iter()
            .any(|e| matches!(&e.event, SessionEvent::Message { message }
            if message.role == Role::Tool && message.content.contains("- one"))),
        "stored before step 2: {before_second:#?}"
    );

    // The sub-agent's session names the parent and where it branched.
    let sessions = store.list().await.expect("list");
    let fork = sessions
        .iter()
        .find(|s| s.parent.is_some())
        .expect("the fork was stored");
    let point = fork.parent.clone().expect("parent");
    assert_eq!(point.session, "chat-1");
    assert_eq!(fork.id, format!("chat-1.fork{}.summarize", point.seq));
    let parent_events = store.read("chat-1", 0).await.expect("read");
    // The fork point follows the answer that asked for the fork.
    let asked = parent_events
        .iter()
        .position(|e| {
            matches!(&e.event, SessionEvent::Message { message } if !message.tool_calls.is_empty())
        })
        .expect("the answer with the fork call") as u64;
    assert!(
        point.seq > asked,
        "fork point {} vs answer at {asked}",
        point.seq
    );
    let own = store.read(&fork.id, 0).await.expect("read fork");
    assert!(
        own.iter()
            .any(|e| matches!(&e.event, SessionEvent::Message { message }
            if message.content.contains("- one"))),
        "the sub-agent's answer is in its log"
    );
    let lineage = read_lineage(&*store, &fork.id).await.expect("lineage");
    assert_eq!(lineage.len() as u64, point.seq + own.len() as u64);

    // The whole parent is stored: a resume rebuilds the same request.
    let (resumed, _) = agent
        .resume_stored(Arc::clone(&store), "chat-1")
        .await
        .expect("resume");
    assert_eq!(resumed.build_request(), session.build_request());
}

/// A scripted model that reads the parent session's stored log at each call.
#[derive(Debug)]
struct Peeking {
    inner: ScriptedModel,
    store: Arc<dyn skills_agent::SessionStore>,
    seen: std::sync::Mutex<Vec<Vec<skills_agent::StoredEvent>>>,
}

#[async_trait]
impl Model for Peeking {
    fn name(&self) -> &str {
        "peeking"
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let stored = self.store.read("chat-1", 0).await.expect("read");
        self.seen.lock().expect("lock").push(stored);
        self.inner.complete(request).await
    }
}

/// A store that refuses the append stops a stored run with a store error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_run_stops_on_a_conflict() {
    use skills_agent::{MemoryStore, SessionStore, SessionWriter};

    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let agent = agent();
    let mut session = agent.start_session().await.expect("session");
    session.set_id("chat-2".parse().expect("a valid id"));
    let mut writer = SessionWriter::create(Arc::clone(&store), &session, None)
        .await
        .expect("create");
    // Another writer continued the session meanwhile.
    let (mut other, mut other_writer) = agent
        .resume_stored(Arc::clone(&store), "chat-2")
        .await
        .expect("resume");
    other.push_user("elsewhere").await.expect("push");
    other_writer.save(&other).await.expect("save");

    let model = Arc::new(ScriptedModel::new([answer("never sent")]));
    let runner = Runner::builder(model.clone()).build();
    let mut events = runner.run_stored(&mut session, &mut writer, "hi", CancelToken::new());
    let mut failure = None;
    while let Some(event) = events.next().await {
        if let RunEvent::Failed { error } = event {
            failure = Some(error);
        }
    }
    drop(events);
    let failure = failure.expect("the run failed");
    assert_eq!(failure.kind(), RunErrorKind::Store);
    assert!(failure.message().contains("conflict"), "{failure}");
    assert!(
        model.requests().is_empty(),
        "no model call after a refused append"
    );
}

/// The store follows the workspace contract's session id rule: `.` and `..`
/// name no folder a runtime could use, so a store refuses them too.
#[tokio::test]
async fn a_store_refuses_the_ids_a_runtime_refuses() {
    use skills_agent::{
        MemoryStore, NewSession, SessionStore, StoreErrorKind, validate_session_id,
    };

    let store = MemoryStore::new();
    for bad in [".", "..", "", "a/b", "a b"] {
        assert!(
            skills_workspace::validate_session_id(bad).is_err(),
            "{bad:?}"
        );
        let error = validate_session_id(bad).expect_err(bad);
        assert_eq!(error.kind(), StoreErrorKind::Invalid, "{bad:?}");
        let error = store
            .create(&NewSession::new(bad, "agent"))
            .await
            .expect_err(bad);
        assert_eq!(error.kind(), StoreErrorKind::Invalid, "{bad:?}");
    }
    for good in ["chat-1", "a.b", "...", "x".repeat(128).as_str()] {
        assert!(validate_session_id(good).is_ok(), "{good:?}");
        assert!(
            skills_workspace::validate_session_id(good).is_ok(),
            "{good:?}"
        );
    }
    assert!(validate_session_id(&"x".repeat(129)).is_err());
}
