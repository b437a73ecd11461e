//! Benchmarks for the request path of `skills-agent`: building a request for a
//! long session, handling a `load_skill` call, and `search_skills` (the first
//! search that checks the library and builds the index, a later session's
//! search that checks but reuses the index, and a search on a checked index).
//!
//! Run: `cargo bench -p skills-agent --bench agent -- --warm-up-time 1 --measurement-time 3`.
//!
//! Each group has a baseline measured in the same run, so figures read as
//! ratios: `build_request` against cloning the same transcript `Vec<Message>`
//! (a request must copy the messages it carries), `handle_tool_call` against
//! the provider's own `get` of the same skill, and one step of the agent
//! loop (`Runner`, model call excluded: the model answers at once) against
//! building the same request alone. `runner_tool_call_then_answer` runs the
//! script `benches/trpc_step.py` runs through trpc-agent-python's runner.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use skills_agent::{
    Agent, Dispatch, Message, Model, ModelError, ModelRequest, ModelResponse, Role, Runner,
    Session, ToolCall, ToolSpec, tool_fn,
};
use skills_core::{InCodeProvider, InCodeSkill, define_skill};
use skills_testkit::Lcg;

const WORDS: &[&str] = &[
    "review",
    "the",
    "release",
    "notes",
    "before",
    "publishing",
    "check",
    "every",
    "migration",
    "for",
    "locks",
    "and",
    "rollback",
    "steps",
    "when",
    "user",
    "asks",
    "about",
    "tests",
    "that",
    "fail",
    "intermittently",
    "in",
    "continuous",
    "integration",
    "with",
    "clear",
    "examples",
];

/// Words until the text is about `len` bytes long.
fn words(rng: &mut Lcg, len: usize) -> String {
    let mut out = skills_testkit::words(rng, WORDS, len);
    out.push('.');
    out
}

const SKILLS: usize = 50;

/// 50 skills: descriptions of ~300 characters, bodies of ~3 KB in a few
/// sections, one reference file each.
fn skills() -> Vec<InCodeSkill> {
    let mut rng = Lcg::new(11);
    (0..SKILLS)
        .map(|i| {
            let mut body = String::new();
            for section in 1..=4 {
                body.push_str(&format!("## Step {section}\n\n"));
                body.push_str(&words(&mut rng, 700));
                body.push_str("\n\n");
            }
            define_skill(format!("skill-{i:02}"), words(&mut rng, 300))
                .body(body)
                .resource("references/guide.md", words(&mut rng, 1_500))
                .build()
                .expect("generated skills are valid")
        })
        .collect()
}

fn agent() -> Agent {
    let provider = Arc::new(InCodeProvider::new(skills()).expect("distinct names"));
    Agent::builder("bench", provider)
        .instructions("You are a helpful engineering assistant.")
        .build()
        .expect("valid agent")
}

/// A session with a 200-message transcript: 50 turns of user message,
/// assistant tool call, tool result and assistant answer. Even turns load a
/// new skill (its body lands in the transcript), odd turns read the
/// reference file of the skill loaded just before.
fn long_session(agent: &Agent) -> Session {
    pollster::block_on(async {
        let mut rng = Lcg::new(99);
        let mut session = agent.start_session().await.expect("session");
        for turn in 0..50 {
            session
                .push_user(words(&mut rng, 200))
                .await
                .expect("push_user");
            let skill = format!("skill-{:02}", turn / 2);
            let call = if turn % 2 == 0 {
                ToolCall::new(format!("call_{turn}"), "load_skill", json!({"name": skill}))
            } else {
                ToolCall::new(
                    format!("call_{turn}"),
                    "read_skill_file",
                    json!({"skill": skill, "path": "references/guide.md"}),
                )
            };
            session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
            let Dispatch::Handled(_) = session.handle_tool_call(&call).await else {
                panic!("skill tools are handled by the session");
            };
            session.push_assistant(Message::assistant(words(&mut rng, 400)));
        }
        session
    })
}

fn build_request(c: &mut Criterion) {
    let agent = agent();
    let mut session = long_session(&agent);
    assert_eq!(session.transcript().len(), 200);
    assert_eq!(session.loaded().len(), 25);
    let request = session.build_request();
    assert_eq!(request.messages.len(), 200);
    assert_eq!(session.pinned_catalog().len(), SKILLS);

    let mut group = c.benchmark_group("build_request_200_messages_50_skills");
    // Baseline in the same run: the copy of the transcript every request makes.
    group.bench_function("baseline_clone_transcript", |b| {
        b.iter(|| black_box(session.transcript()).to_vec());
    });
    group.bench_function("build_request", |b| {
        b.iter(|| black_box(&mut session).build_request());
    });
    // The part of a request that does not depend on the transcript: the tool
    // specs (a clone of the per-session cache).
    group.bench_function("tools_only", |b| {
        b.iter(|| black_box(&session).tools());
    });
    group.finish();
}

fn load_skill(c: &mut Criterion) {
    let agent = agent();
    let provider = agent.provider();
    let call = ToolCall::new("call_1", "load_skill", json!({"name": "skill-07"}));

    let mut group = c.benchmark_group("load_skill_in_code");
    // Baseline in the same run: the provider's own fetch of the same skill,
    // which every load performs.
    group.bench_function("baseline_provider_get", |b| {
        b.iter(|| pollster::block_on(provider.get(black_box("skill-07"))).expect("get"));
    });
    group.bench_function("handle_tool_call", |b| {
        b.iter_batched(
            || pollster::block_on(agent.start_session()).expect("session"),
            |mut session| {
                let dispatch = pollster::block_on(session.handle_tool_call(black_box(&call)));
                (session, dispatch)
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn search(c: &mut Criterion) {
    let call = ToolCall::new(
        "call_1",
        "search_skills",
        json!({"query": "rollback migration locks"}),
    );
    let search_agent = |cache: Option<Arc<skills_agent::SearchCache>>| {
        let provider = Arc::new(InCodeProvider::new(skills()).expect("distinct names"));
        let mut builder = Agent::builder("bench", provider).search(true);
        if let Some(cache) = cache {
            builder = builder.search_cache(cache);
        }
        builder.build().expect("valid agent")
    };
    let run = |session: &mut Session| {
        let Dispatch::Handled(message) = pollster::block_on(session.handle_tool_call(&call)) else {
            panic!("search is a skill tool");
        };
        assert!(message.content.contains("<skill name="));
    };

    let mut group = c.benchmark_group("search_skills_50_skills");
    // A fresh cache every time: fetch every skill, read every doc, build.
    group.bench_function("first_search_builds", |b| {
        b.iter_batched(
            || {
                let agent = search_agent(None);
                pollster::block_on(agent.start_session()).expect("session")
            },
            |mut session| {
                run(&mut session);
                session
            },
            BatchSize::SmallInput,
        );
    });
    // A new session over a warm cache: fetch every skill to check, no build.
    let warm = search_agent(None);
    run(&mut pollster::block_on(warm.start_session()).expect("session"));
    group.bench_function("new_session_checks_reuses_index", |b| {
        b.iter_batched(
            || pollster::block_on(warm.start_session()).expect("session"),
            |mut session| {
                run(&mut session);
                session
            },
            BatchSize::SmallInput,
        );
    });
    // The same session again: no fetch at all.
    let mut checked = pollster::block_on(warm.start_session()).expect("session");
    run(&mut checked);
    group.bench_function("checked_session", |b| {
        b.iter(|| run(black_box(&mut checked)));
    });
    group.finish();
    assert_eq!(warm.search_cache().builds(), 1);
}

/// A model that answers at once with a fixed text, so a run measures the
/// loop alone.
#[derive(Debug)]
struct Instant(ModelResponse);

#[async_trait]
impl Model for Instant {
    fn name(&self) -> &str {
        "instant"
    }
    async fn complete(&self, _: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(self.0.clone())
    }
}

/// A model that answers at once: a call of `tool_00` while the last message
/// is not a tool result, then a fixed text. The script of
/// `runner_tool_call_then_answer` (and of `benches/trpc_step.py`).
#[derive(Debug)]
struct ToolThenText;

#[async_trait]
impl Model for ToolThenText {
    fn name(&self) -> &str {
        "tool-then-text"
    }
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let after_tool = request
            .messages
            .last()
            .is_some_and(|message| message.role == Role::Tool);
        Ok(if after_tool {
            ModelResponse::text("All done; tell me if you need more.")
        } else {
            ModelResponse::tool_calls(
                "",
                vec![ToolCall::new(
                    "call_bench",
                    "tool_00",
                    json!({"x": "release notes"}),
                )],
            )
        })
    }
}

/// One loop step on a 20-message transcript with 10 user tools (plus the two
/// skill tools): push the user message, build the request, call the model,
/// append its answer, emit the events. Against: building the request alone.
fn loop_step(c: &mut Criterion) {
    let mut builder = Agent::builder(
        "bench",
        Arc::new(InCodeProvider::new(skills()).expect("distinct names")),
    )
    .instructions("You are a helpful engineering assistant.");
    for i in 0..10 {
        builder = builder.tool(ToolSpec::new(
            format!("tool_{i:02}"),
            "Does one thing for the user.",
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
        ));
    }
    let agent = builder.build().expect("valid agent");
    let mut rng = Lcg::new(7);
    // 20 messages: five turns of user, tool call, tool result, answer.
    let transcript = pollster::block_on(async {
        let mut session = agent.start_session().await.expect("session");
        for turn in 0..5 {
            session.push_user(words(&mut rng, 200)).await.expect("user");
            let call = ToolCall::new(
                format!("call_{turn}"),
                "load_skill",
                json!({"name": format!("skill-{turn:02}")}),
            );
            session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
            let Dispatch::Handled(_) = session.handle_tool_call(&call).await else {
                panic!("skill tools are handled by the session");
            };
            session.push_assistant(Message::assistant(words(&mut rng, 300)));
        }
        session.transcript().to_vec()
    });
    assert_eq!(transcript.len(), 20);
    let pinned = pollster::block_on(agent.start_session())
        .expect("session")
        .pinned_catalog()
        .clone();
    let fresh = || {
        pollster::block_on(agent.resume_session(pinned.clone(), transcript.clone()))
            .expect("resume")
    };
    let runner = Runner::builder(Arc::new(Instant(ModelResponse::text(
        "All done; tell me if you need more.",
    ))))
    .build();
    // The two-call script: a user tool call (schema check, handler, result
    // appended), then the answer.
    let tool_runner = Runner::builder(Arc::new(ToolThenText))
        .handler(
            "tool_00",
            tool_fn(|args: serde_json::Value| async move {
                Ok(format!("ok: {}", args["x"].as_str().unwrap_or_default()))
            }),
        )
        .build();
    let question = words(&mut rng, 200);
    let mut group = c.benchmark_group("loop_step_20_messages_10_tools");
    // Baseline in the same run: the request of that step, built alone.
    group.bench_function("baseline_build_request", |b| {
        // `_ref`: the session is dropped outside the timing in both cases.
        b.iter_batched_ref(
            || {
                let mut session = fresh();
                pollster::block_on(session.push_user(question.clone())).expect("user");
                session
            },
            |session| black_box(session.build_request()),
            BatchSize::SmallInput,
        );
    });
    group.bench_function("runner_step", |b| {
        b.iter_batched_ref(
            fresh,
            |session| {
                let outcome = pollster::block_on(runner.run_to_end(session, question.clone()))
                    .expect("one step");
                assert_eq!(outcome.steps, 1);
            },
            BatchSize::SmallInput,
        );
    });
    // Two model calls: the time per step is half the figure.
    group.bench_function("runner_tool_call_then_answer", |b| {
        b.iter_batched_ref(
            fresh,
            |session| {
                let outcome = pollster::block_on(tool_runner.run_to_end(session, question.clone()))
                    .expect("two steps");
                assert_eq!(outcome.steps, 2);
                assert_eq!(outcome.text, "All done; tell me if you need more.");
                // User message, call, tool result, answer.
                assert_eq!(session.transcript().len(), 24);
                assert_eq!(session.transcript()[22].role, Role::Tool);
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

criterion_group!(benches, build_request, load_skill, search, loop_step);
criterion_main!(benches);
