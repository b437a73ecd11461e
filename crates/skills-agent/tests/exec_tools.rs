//! The run tools of the `full` profile over the real local runtime of
//! `skills-exec`: in-code skills are staged from memory, a run is refused
//! until the skill is loaded, and the command's output is the tool result.

use std::sync::Arc;

use serde_json::{Value, json};
use skills_agent::{Agent, Dispatch, Message, Profile, Surface, ToolCall};
use skills_core::{InCodeProvider, define_skill};
use skills_exec::LocalRuntime;
use skills_workspace::WorkspaceRuntime;

fn agent(runtime: Arc<dyn WorkspaceRuntime>, surface: Surface) -> Agent {
    let skill = define_skill("greeter", "Greets from a script. Use to test scripts.")
        .body("Run `bash scripts/hello.sh NAME`.")
        .resource(
            "scripts/hello.sh",
            "echo \"hello $1 from $(basename \"$PWD\")\"\n",
        )
        .build()
        .expect("valid");
    let provider = Arc::new(InCodeProvider::new([skill]).expect("provider"));
    Agent::builder("runner", provider)
        .surface(surface.clone())
        .profile(Profile::Full)
        .runtime(runtime)
        .build()
        .expect("agent")
}

async fn call(session: &mut skills_agent::Session, name: &str, args: Value) -> Message {
    let call = ToolCall::new(format!("c-{name}"), name, args);
    session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
    match session.handle_tool_call(&call).await {
        Dispatch::Handled(message) => message,
        other => panic!("not handled: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_code_skill_runs_once_loaded_and_its_output_is_the_result() {
    let root = tempfile::tempdir().expect("tempdir");
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().expect("runtime"));
    for (surface, load, run) in [
        (
            Surface::Default,
            json!({"name": "greeter"}),
            "run_skill_command",
        ),
        (Surface::Trpc, json!({"skill": "greeter"}), "skill_run"),
    ] {
        let agent = agent(Arc::clone(&runtime), surface.clone());
        let mut session = agent.start_session().await.expect("session");
        let tools: Vec<String> = session.tools().into_iter().map(|t| t.name).collect();
        assert!(tools.contains(&run.to_owned()), "{tools:?}");
        session.push_user("greet Ada").await.expect("user");
        let args = json!({"skill": "greeter", "command": "bash scripts/hello.sh Ada"});
        let refused = call(&mut session, run, args.clone()).await;
        assert!(refused.is_error, "{}", refused.content);
        assert!(
            refused.content.contains("is not loaded"),
            "{}",
            refused.content
        );
        let load_tool = agent.surface().load_tool().to_owned();
        let loaded = call(&mut session, &load_tool, load).await;
        assert!(!loaded.is_error, "{}", loaded.content);
        let ran = call(&mut session, run, args).await;
        assert!(!ran.is_error, "{}", ran.content);
        let result: Value = serde_json::from_str(&ran.content).expect("json result");
        assert_eq!(result["exit_code"], 0, "{result}");
        assert_eq!(result["stdout"], "hello Ada from greeter\n", "{result}");
        runtime.cleanup(session.id()).await.expect("cleanup");
    }
}

#[tokio::test]
async fn bad_run_arguments_are_a_tool_error() {
    let root = tempfile::tempdir().expect("tempdir");
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().expect("runtime"));
    let agent = agent(runtime, Surface::Default);
    let mut session = agent.start_session().await.expect("session");
    let bad = call(&mut session, "run_skill_command", json!({"command": 5})).await;
    assert!(
        bad.is_error
            && bad
                .content
                .contains("invalid arguments for `run_skill_command`"),
        "{}",
        bad.content
    );
    let ids: Vec<String> = (0..3)
        .map(|_| {
            pollster::block_on(agent.start_session())
                .expect("s")
                .id()
                .as_str()
                .to_owned()
        })
        .collect();
    assert!(ids[0] != ids[1] && ids[1] != ids[2], "{ids:?}");
    assert!(
        ids.iter()
            .all(|id| skills_workspace::validate_session_id(id).is_ok())
    );
}

/// Files attached to user messages reach the workspace: staged into
/// `work/inputs/` before the first command after they arrive (names
/// sanitized and de-duplicated), listed in that run's `staged_inputs`, and
/// staged once each, even when a later message attaches more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attachments_are_staged_into_work_inputs_once() {
    use skills_agent::Attachment;
    let root = tempfile::tempdir().expect("tempdir");
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().expect("runtime"));
    let agent = agent(Arc::clone(&runtime), Surface::Default);
    let mut session = agent.start_session().await.expect("session");
    session
        .push_user_message(Message::user_with_attachments(
            "count the rows",
            [
                Attachment::new("data.csv", "text/csv", "a,b\n1,2\n"),
                Attachment::new("../../data.csv", "text/csv", "c\n"),
                Attachment::new("pic.png", "image/png", vec![0x89, b'P', 0, 0xff]),
            ],
        ))
        .await
        .expect("user");
    let loaded = call(&mut session, "load_skill", json!({"name": "greeter"})).await;
    assert!(!loaded.is_error, "{}", loaded.content);
    let list = json!({"skill": "greeter", "command": "cd \"$WORK_DIR/inputs\" && ls && cat data.csv && od -An -tx1 pic.png"});
    let ran = call(&mut session, "run_skill_command", list.clone()).await;
    assert!(!ran.is_error, "{}", ran.content);
    let result: Value = serde_json::from_str(&ran.content).expect("json");
    assert_eq!(
        result["stdout"], "data-1.csv\ndata.csv\npic.png\na,b\n1,2\n 89 50 00 ff\n",
        "{result}"
    );
    let staged: Vec<(&str, &str)> = result["staged_inputs"]
        .as_array()
        .expect("staged_inputs")
        .iter()
        .map(|s| {
            (
                s["from"].as_str().unwrap_or(""),
                s["path"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        staged,
        [
            ("data.csv", "work/inputs/data.csv"),
            ("../../data.csv", "work/inputs/data-1.csv"),
            ("pic.png", "work/inputs/pic.png"),
        ],
        "{result}"
    );
    // Staged once: the next run stages nothing.
    let again = call(&mut session, "run_skill_command", list).await;
    let result: Value = serde_json::from_str(&again.content).expect("json");
    assert!(
        result.get("staged_inputs").is_none_or(|s| s == &json!([])),
        "{result}"
    );
    // A later attachment is staged by the next run, alone.
    session
        .push_user_message(Message::user_with_attachments(
            "and this one",
            [Attachment::text("notes.txt", "n")],
        ))
        .await
        .expect("user");
    let ls = json!({"skill": "greeter", "command": "ls \"$WORK_DIR/inputs\""});
    let ran = call(&mut session, "run_skill_command", ls).await;
    let result: Value = serde_json::from_str(&ran.content).expect("json");
    assert_eq!(
        result["stdout"], "data-1.csv\ndata.csv\nnotes.txt\npic.png\n",
        "{result}"
    );
    assert_eq!(
        result["staged_inputs"].as_array().map(Vec::len),
        Some(1),
        "{result}"
    );
    // Not a user message: refused, nothing appended.
    let before = session.transcript().len();
    assert!(
        session
            .push_user_message(Message::assistant("hi"))
            .await
            .is_err()
    );
    assert_eq!(session.transcript().len(), before);
    runtime.cleanup(session.id()).await.expect("cleanup");
}

/// Through the agent loop: `Runner::run` takes a message with an
/// attachment; the model's request carries it (and the wire encoder sends
/// it as a part), and the command the model runs finds it in
/// `work/inputs/`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_started_with_an_attachment_stages_it_for_the_model_s_command() {
    use skills_agent::{Attachment, ModelResponse, Runner, ScriptedModel};
    let root = tempfile::tempdir().expect("tempdir");
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().expect("runtime"));
    let agent = agent(Arc::clone(&runtime), Surface::Default);
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::tool_calls(
            "",
            vec![ToolCall::new(
                "c1",
                "load_skill",
                json!({"name": "greeter"}),
            )],
        ),
        ModelResponse::tool_calls(
            "",
            vec![ToolCall::new(
                "c2",
                "run_skill_command",
                json!({"skill": "greeter", "command": "wc -l < \"$WORK_DIR/inputs/sales.csv\""}),
            )],
        ),
        ModelResponse::text("3 lines."),
    ]));
    let runner = Runner::builder(model.clone()).build();
    let mut session = agent.start_session().await.expect("session");
    let message = Message::user_with_attachments(
        "How many lines?",
        [Attachment::new(
            "sales.csv",
            "text/csv",
            "m,t\njan,1\nfeb,2\n",
        )],
    );
    let outcome = runner.run_to_end(&mut session, message).await.expect("run");
    assert_eq!(outcome.text, "3 lines.");
    let requests = model.requests();
    assert_eq!(requests[0].messages[0].attachments.len(), 1);
    let body = skills_models::wire::openai_chat(&requests[0], "m");
    assert!(
        body.contains(r#"[attached file \"sales.csv\" (text/csv, 16 bytes)]\nm,t\n"#),
        "{body}"
    );
    let ran = session
        .transcript()
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("run_skill_command"))
        .expect("run result");
    let result: Value = serde_json::from_str(&ran.content).expect("json");
    assert_eq!(result["stdout"], "3\n", "{result}");
    assert_eq!(result["staged_inputs"][0]["path"], "work/inputs/sales.csv");
    runtime.cleanup(session.id()).await.expect("cleanup");
}

/// Attachments that do not fit the workspace's disk cap together are
/// staged not at all (none half-way), and the command still runs, with a
/// warning; a later run tries again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attachments_that_do_not_fit_never_stop_the_command() {
    use skills_agent::Attachment;
    let root = tempfile::tempdir().expect("tempdir");
    let limits = skills_exec::WorkspaceLimits::new().max_bytes(64 * 1024);
    let runtime: Arc<dyn WorkspaceRuntime> = Arc::new(
        LocalRuntime::builder(root.path())
            .workspace_limits(limits)
            .build()
            .expect("runtime"),
    );
    let agent = agent(Arc::clone(&runtime), Surface::Default);
    let mut session = agent.start_session().await.expect("session");
    session
        .push_user_message(Message::user_with_attachments(
            "two files",
            [
                Attachment::new("small.txt", "text/plain", "x"),
                Attachment::new("big.bin", "application/octet-stream", vec![0u8; 80 * 1024]),
            ],
        ))
        .await
        .expect("user");
    call(&mut session, "load_skill", json!({"name": "greeter"})).await;
    let ls = json!({"skill": "greeter", "command": "ls \"$WORK_DIR/inputs\" 2>/dev/null | wc -l"});
    for _ in 0..2 {
        let ran = call(&mut session, "run_skill_command", ls.clone()).await;
        assert!(!ran.is_error, "{}", ran.content);
        let result: Value = serde_json::from_str(&ran.content).expect("json");
        assert_eq!(result["stdout"], "0\n", "{result}");
        let warning = result["warnings"][0].as_str().unwrap_or_default();
        assert!(
            warning.contains("the attached files could not be staged"),
            "{result}"
        );
    }
    runtime.cleanup(session.id()).await.expect("cleanup");
}

/// A run's input must be a user message: another role is refused with
/// `RunErrorKind::Input`, and nothing is appended.
#[tokio::test]
async fn a_run_refuses_an_input_that_is_not_a_user_message() {
    use skills_agent::{ModelResponse, RunErrorKind, Runner, ScriptedModel};
    let root = tempfile::tempdir().expect("tempdir");
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().expect("runtime"));
    let agent = agent(runtime, Surface::Default);
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("never")]));
    let runner = Runner::builder(model.clone()).build();
    let mut session = agent.start_session().await.expect("session");
    let err = runner
        .run_to_end(&mut session, Message::assistant("not mine"))
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), RunErrorKind::Input);
    assert!(session.transcript().is_empty());
    assert_eq!(model.remaining(), 1);
}

/// Under a pre-approve policy that approves nothing, a run or a session
/// start is refused, but polling or ending a session is never asked about:
/// a session the policy let start must stay watchable and stoppable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_policy_never_blocks_polling_or_ending_a_session() {
    use skills_agent::{Approver, ModelResponse, Runner, ScriptedModel, ToolPolicy};
    #[derive(Debug, Default)]
    struct Deny(std::sync::Mutex<Vec<String>>);
    #[async_trait::async_trait]
    impl Approver for Deny {
        async fn approve(&self, call: &ToolCall, _loaded: &[String]) -> bool {
            self.0.lock().expect("lock").push(call.name.clone());
            false
        }
    }
    let root = tempfile::tempdir().expect("tempdir");
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().expect("runtime"));
    let agent = agent(Arc::clone(&runtime), Surface::Default);
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::tool_calls(
            "",
            vec![
                ToolCall::new(
                    "c1",
                    "run_skill_command",
                    json!({"skill": "greeter", "command": "true"}),
                ),
                ToolCall::new("c2", "poll_skill_session", json!({"session_id": "nope"})),
                ToolCall::new("c3", "kill_skill_session", json!({"session_id": "nope"})),
            ],
        ),
        ModelResponse::text("done"),
    ]));
    let deny = Arc::new(Deny::default());
    let runner = Runner::builder(model)
        .policy(ToolPolicy::PreApprove(deny.clone()))
        .build();
    let mut session = agent.start_session().await.expect("session");
    runner.run_to_end(&mut session, "go").await.expect("run");
    assert_eq!(*deny.0.lock().expect("lock"), ["run_skill_command"]);
    let poll = session
        .transcript()
        .iter()
        .find(|m| m.tool_name.as_deref() == Some("poll_skill_session"))
        .expect("poll result");
    assert!(
        !poll.content.contains("did not approve"),
        "{}",
        poll.content
    );
}
