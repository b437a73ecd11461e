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
