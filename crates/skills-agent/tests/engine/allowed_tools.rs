//! F-AGT-7 and F-AGT-5 through the agent loop with a scripted model:
//! `allowed-tools` patterns (`Bash(git:*)`) matched against the call's
//! argument, the grant's lifetime (while loaded, or until the next user
//! message), aliases and argument names; and Claude Code's `model: inherit`
//! (a fork or an inline skill keeps the parent's model without any hub).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures_util::StreamExt as _;
use serde_json::{Value, json};
use skills_agent::{
    Agent, Approver, GrantLifetime, ModelMap, ModelResponse, RunEvent, Runner, RunnerBuilder,
    ScriptedModel, ToolCall, ToolPolicy, ToolSpec, tool_fn,
};
use skills_core::{ContextMode, Extensions, InCodeProvider, SkillProvider, define_skill};

use crate::runner::results;

fn provider() -> Arc<dyn SkillProvider> {
    let mut fork = Extensions::default();
    fork.context = Some(ContextMode::Fork);
    fork.model = Some("inherit".into());
    let mut inline = Extensions::default();
    inline.model = Some("inherit".into());
    let skills = [
        define_skill("git-ops", "Runs git. Use for git questions.")
            .body("Run git commands with Bash.")
            .allowed_tools(["Bash(git:*)", "Read"])
            .build(),
        define_skill("summarize", "Summarizes in a sub-agent. Use for summaries.")
            .body("Write one line.")
            .extensions(fork)
            .build(),
        define_skill("careful", "Thinks carefully. Use for hard questions.")
            .body("Check twice.")
            .extensions(inline)
            .build(),
    ];
    Arc::new(
        InCodeProvider::new(skills.into_iter().map(|s| s.expect("valid skill"))).expect("provider"),
    )
}

fn command_tool(name: &str) -> ToolSpec {
    ToolSpec::new(
        name,
        "Runs a shell command.",
        json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    )
}

fn agent() -> Agent {
    Agent::builder("assistant", provider())
        .instructions("Be careful.")
        .tool(command_tool("Bash"))
        .tool(command_tool("shell"))
        .tool(ToolSpec::new(
            "Read",
            "Reads a file.",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        ))
        .build()
        .expect("agent")
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

fn load(id: &str, skill: &str) -> ModelResponse {
    ModelResponse::tool_calls("", vec![call(id, "load_skill", json!({"name": skill}))])
}

fn bash(ids_and_commands: &[(&str, &str)]) -> ModelResponse {
    ModelResponse::tool_calls(
        "",
        ids_and_commands
            .iter()
            .map(|(id, command)| call(id, "Bash", json!({"command": command})))
            .collect(),
    )
}

/// Records what it is asked and answers no.
#[derive(Debug, Default)]
struct Deny {
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl Approver for Deny {
    async fn approve(&self, call: &ToolCall, _loaded: &[String]) -> bool {
        let command = call.arguments["command"].as_str().unwrap_or("").to_owned();
        self.asked
            .lock()
            .expect("lock")
            .push(format!("{} {command}", call.name));
        false
    }
}

fn runner(
    script: Vec<ModelResponse>,
    configure: impl FnOnce(RunnerBuilder) -> RunnerBuilder,
) -> Runner {
    let echo = tool_fn(|args: Value| async move {
        Ok(format!("ran {}", args["command"].as_str().unwrap_or("?")))
    });
    let builder = Runner::builder(Arc::new(ScriptedModel::new(script)))
        .handler("Bash", echo.clone())
        .handler("shell", echo)
        .handler("Read", tool_fn(|_| async { Ok("text".to_owned()) }));
    configure(builder).build()
}

fn finished(events: &[RunEvent]) {
    assert!(
        matches!(events.last(), Some(RunEvent::Finished { .. })),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_prefix_pattern_pre_approves_only_matching_commands() {
    let deny = Arc::new(Deny::default());
    let script = vec![
        load("c1", "git-ops"),
        bash(&[
            ("c2", "git status"),
            ("c3", "rm -rf /"),
            ("c4", "gitx"),
            ("c5", "git status && rm -rf /"),
        ]),
        ModelResponse::tool_calls("", vec![call("c6", "Read", json!({"path": "a"}))]),
        ModelResponse::text("done"),
    ];
    let policy = ToolPolicy::PreApprove(deny.clone());
    let runner = runner(script, |b| b.policy(policy));
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = runner.run(&mut session, "status?").collect().await;
    finished(&events);
    let got = results(&events);
    assert_eq!(got[1], ("Bash".into(), false, "ran git status".into()));
    for refused in &got[2..5] {
        assert!(
            refused.1 && refused.2.contains("did not approve"),
            "{got:?}"
        );
    }
    // `Read` (a bare name) is pre-approved whatever its arguments.
    assert_eq!(got[5], ("Read".into(), false, "text".into()));
    assert_eq!(
        *deny.asked.lock().expect("lock"),
        ["Bash rm -rf /", "Bash gitx", "Bash git status && rm -rf /"]
    );
}

/// A pattern vouches for the command only: a call that also sets
/// environment variables (`BASH_ENV`, exported functions) or stages inputs
/// is not covered by `Bash(git:*)`, whatever its command.
#[tokio::test]
async fn a_pattern_does_not_cover_a_call_that_sets_env_or_inputs() {
    let deny = Arc::new(Deny::default());
    let script = vec![
        load("c1", "git-ops"),
        ModelResponse::tool_calls(
            "",
            vec![
                call(
                    "c2",
                    "Bash",
                    json!({"command": "git status", "env": {"BASH_ENV": "/dev/stdin"}}),
                ),
                call(
                    "c3",
                    "Bash",
                    json!({"command": "git status", "inputs": [{"from": "host:///etc/passwd"}]}),
                ),
                call("c4", "Bash", json!({"command": "git status", "env": {}})),
            ],
        ),
        ModelResponse::text("done"),
    ];
    let runner = runner(script, |b| b.policy(ToolPolicy::PreApprove(deny.clone())));
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = runner.run(&mut session, "status?").collect().await;
    finished(&events);
    let got = results(&events);
    assert!(got[1].1 && got[2].1, "{got:?}");
    assert_eq!(got[3], ("Bash".into(), false, "ran git status".into()));
    assert_eq!(deny.asked.lock().expect("lock").len(), 2);
}

#[tokio::test]
async fn restrict_refuses_calls_no_pattern_covers_and_names_the_patterns() {
    let script = vec![
        load("c1", "git-ops"),
        bash(&[("c2", "git log"), ("c3", "curl example.com")]),
        ModelResponse::text("done"),
    ];
    let runner = runner(script, |b| b.policy(ToolPolicy::Restrict));
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = runner.run(&mut session, "log?").collect().await;
    finished(&events);
    let got = results(&events);
    assert_eq!(got[1].2, "ran git log");
    assert!(got[2].1, "{got:?}");
    assert!(got[2].2.contains("allowed: Bash(git:*), Read"), "{got:?}");
}

#[tokio::test]
async fn a_turn_grant_ends_at_the_next_user_message_a_load_grant_does_not() {
    for (lifetime, second_turn_ok) in [(GrantLifetime::Load, true), (GrantLifetime::Turn, false)] {
        let deny = Arc::new(Deny::default());
        let script = vec![
            load("c1", "git-ops"),
            bash(&[("c2", "git status")]),
            ModelResponse::text("clean"),
            bash(&[("c3", "git log")]),
            // Loading the skill again (it is still loaded) renews the turn
            // grant.
            load("c4", "git-ops"),
            bash(&[("c5", "git log")]),
            ModelResponse::text("one commit"),
        ];
        let policy = ToolPolicy::PreApprove(deny.clone());
        let runner = runner(script, |b| b.policy(policy).grant_lifetime(lifetime));
        let mut session = agent().start_session().await.expect("session");
        let first: Vec<RunEvent> = runner.run(&mut session, "status?").collect().await;
        finished(&first);
        assert_eq!(results(&first)[1].2, "ran git status", "{lifetime:?}");
        let second: Vec<RunEvent> = runner.run(&mut session, "and the log?").collect().await;
        finished(&second);
        let got = results(&second);
        assert_eq!(!got[0].1, second_turn_ok, "{lifetime:?}: {got:?}");
        assert_eq!(
            got[2],
            ("Bash".into(), false, "ran git log".into()),
            "{lifetime:?}"
        );
        let asked = deny.asked.lock().expect("lock").clone();
        if second_turn_ok {
            assert!(asked.is_empty(), "{asked:?}");
        } else {
            assert_eq!(asked, ["Bash git log"]);
            // The skill is still loaded: only its grant ended.
            assert!(session.loaded().contains("git-ops"));
        }
    }
}

#[tokio::test]
async fn aliases_and_argument_names_say_which_calls_a_pattern_covers() {
    let script = || {
        vec![
            load("c1", "git-ops"),
            ModelResponse::tool_calls(
                "",
                vec![
                    call("c2", "shell", json!({"command": "git status"})),
                    call("c3", "shell", json!({"script": "git status"})),
                ],
            ),
            ModelResponse::text("done"),
        ]
    };
    // Without an alias, `Bash(git:*)` says nothing about `shell`.
    let plain = runner(script(), |b| b.policy(ToolPolicy::Restrict));
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = plain.run(&mut session, "status?").collect().await;
    let got = results(&events);
    assert!(got[1].1 && got[2].1, "{got:?}");

    // With `Bash` aliased to `shell`, its `command` argument is matched.
    let aliased = runner(script(), |b| {
        b.policy(ToolPolicy::Restrict).policy_alias("Bash", "shell")
    });
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = aliased.run(&mut session, "status?").collect().await;
    let got = results(&events);
    assert_eq!(got[1], ("shell".into(), false, "ran git status".into()));
    assert!(got[2].1, "no `command` argument: {got:?}");

    // Naming `script` as the matched argument of `shell` flips the two.
    let by_script = runner(script(), |b| {
        b.policy(ToolPolicy::Restrict)
            .policy_alias("Bash", "shell")
            .policy_argument("shell", "script")
    });
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = by_script.run(&mut session, "status?").collect().await;
    let got = results(&events);
    assert!(got[1].1, "{got:?}");
    assert!(!got[2].1, "{got:?}");
}

#[tokio::test]
async fn arguments_sent_as_json_text_are_matched_too() {
    let script = vec![
        load("c1", "git-ops"),
        ModelResponse::tool_calls(
            "",
            vec![call(
                "c2",
                "Bash",
                Value::String(r#"{"command":"rm -rf /"}"#.into()),
            )],
        ),
        ModelResponse::text("done"),
    ];
    let runner = runner(script, |b| b.policy(ToolPolicy::Restrict));
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = runner.run(&mut session, "clean up").collect().await;
    let got = results(&events);
    assert!(got[1].1 && got[1].2.contains("not allowed"), "{got:?}");
}

#[tokio::test]
async fn model_inherit_forks_on_the_parents_model_without_any_hub() {
    let main = Arc::new(ScriptedModel::new([
        load("c1", "summarize"),
        ModelResponse::text("Sub-agent line."),
        ModelResponse::text("Summarized."),
    ]));
    let runner = Runner::builder(main.clone()).build();
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = runner.run(&mut session, "summarize this").collect().await;
    finished(&events);
    let got = results(&events);
    assert!(!got[0].1, "{got:?}");
    assert!(got[0].2.contains("Sub-agent line."), "{got:?}");
    // Three requests on the one model: parent, sub-agent, parent.
    let requests = main.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].messages[0].content.contains("Write one line."));
}

#[tokio::test]
async fn model_inherit_on_an_inline_skill_switches_nothing_and_asks_no_hub() {
    let other = Arc::new(ScriptedModel::new([ModelResponse::text("wrong")]).named("inherit"));
    let main = Arc::new(ScriptedModel::new([
        load("c1", "careful"),
        ModelResponse::text("Checked twice."),
    ]));
    // Even a hub with a model called `inherit` is not asked.
    let runner = Runner::builder(main.clone())
        .model_hub(Arc::new(ModelMap::new().with("inherit", other.clone())))
        .build();
    let mut session = agent().start_session().await.expect("session");
    let events: Vec<RunEvent> = runner.run(&mut session, "hard one").collect().await;
    finished(&events);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, RunEvent::ModelSwitched { .. } | RunEvent::Notice { .. }))
    );
    assert_eq!(main.requests().len(), 2);
    assert!(other.requests().is_empty());
}

/// A turn grant belongs to the user message, not to one `Runner::run`: a
/// run stopped after the load (here by the step limit) and then resumed
/// still has it.
#[tokio::test]
async fn a_resumed_run_keeps_the_turn_grant_of_its_user_message() {
    let deny = Arc::new(Deny::default());
    let policy = ToolPolicy::PreApprove(deny.clone());
    let first = runner(vec![load("c1", "git-ops")], |b| {
        b.policy(policy.clone())
            .grant_lifetime(GrantLifetime::Turn)
            .max_steps(1)
    });
    let mut session = agent().start_session().await.expect("session");
    let stopped: Vec<RunEvent> = first.run(&mut session, "status?").collect().await;
    assert!(
        matches!(stopped.last(), Some(RunEvent::Failed { .. })),
        "{stopped:?}"
    );
    let second = runner(
        vec![bash(&[("c2", "git status")]), ModelResponse::text("clean")],
        |b| b.policy(policy).grant_lifetime(GrantLifetime::Turn),
    );
    let resumed: Vec<RunEvent> = second
        .resume(&mut session, skills_agent::CancelToken::new())
        .collect()
        .await;
    finished(&resumed);
    assert_eq!(results(&resumed)[0].2, "ran git status");
    assert!(deny.asked.lock().expect("lock").is_empty());
}
