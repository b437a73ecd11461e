//! Profiles and reserved tool names (F-DIS-8): what `AgentBuilder::build`
//! refuses, and the `full` profile's executor tools.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use skills_agent::{
    AgentBuilder, BuildErrorKind, CatalogMode, Dispatch, EinoOptions, ExecContext, ExecutionTools,
    Profile, Surface, ToolError, ToolErrorKind, ToolSpec,
};

use super::support::{builder, call_err, call_ok, dispatch_in_turn, plain_tool, start, tool_names};

/// A tiny execution runtime: `run_script` echoes, `run_failing` fails.
#[derive(Debug)]
struct TestRuntime;

#[async_trait]
impl ExecutionTools for TestRuntime {
    fn tools(&self) -> Vec<ToolSpec> {
        vec![plain_tool("run_script"), plain_tool("run_failing")]
    }

    async fn call(
        &self,
        _: &ExecContext<'_>,
        tool: &str,
        arguments: &Value,
    ) -> Result<String, ToolError> {
        match tool {
            "run_script" => Ok(format!(
                "ran {}",
                arguments
                    .get("script")
                    .and_then(Value::as_str)
                    .unwrap_or("nothing")
            )),
            _ => Err(ToolError::new(ToolErrorKind::Provider, "exit status 1")),
        }
    }
}

fn build_error(builder: AgentBuilder) -> String {
    builder
        .build()
        .expect_err("the configuration is refused")
        .message()
        .to_owned()
}

#[test]
fn build_errors_carry_a_kind() {
    let kind = |b: AgentBuilder| b.build().expect_err("refused").kind();
    let unnamed =
        skills_agent::Agent::builder(" ", Arc::new(skills_core::InCodeProvider::default()));
    assert_eq!(kind(unnamed), BuildErrorKind::EmptyName);
    assert_eq!(
        kind(builder().profile(Profile::Full)),
        BuildErrorKind::MissingExecutor
    );
    assert_eq!(
        kind(builder().tool(plain_tool("load_skill"))),
        BuildErrorKind::ReservedToolName
    );
    assert_eq!(
        kind(builder().tool(plain_tool("a b"))),
        BuildErrorKind::InvalidToolName
    );
    assert_eq!(
        kind(builder().tool(plain_tool("x")).tool(plain_tool("x"))),
        BuildErrorKind::DuplicateTool
    );
}

#[test]
fn full_profile_without_an_executor_fails_to_build() {
    let message = build_error(builder().profile(Profile::Full));
    assert!(
        message.contains("`full` profile needs an executor"),
        "{message}"
    );
    assert!(message.contains("KnowledgeOnly"), "{message}");
}

#[test]
fn user_tool_shadowing_load_skill_is_refused() {
    let message = build_error(builder().tool(plain_tool("load_skill")));
    assert!(
        message.contains("`load_skill` shadows a skill tool"),
        "{message}"
    );
    assert!(
        message.contains("reserved names for this surface: load_skill, read_skill_file"),
        "{message}"
    );
}

#[test]
fn trpc_reserves_its_six_tools() {
    let message = build_error(
        builder()
            .surface(Surface::Trpc)
            .tool(plain_tool("skill_load")),
    );
    assert!(
        message.contains("`skill_load` shadows a skill tool"),
        "{message}"
    );
    for name in [
        "skill_list",
        "skill_list_docs",
        "skill_list_tools",
        "skill_load",
        "skill_select_docs",
        "skill_select_tools",
    ] {
        assert!(message.contains(name), "{name} not named: {message}");
    }
    // The default names are free on the trpc surface.
    builder()
        .surface(Surface::Trpc)
        .tool(plain_tool("load_skill"))
        .build()
        .expect("load_skill is not reserved by trpc");
}

#[test]
fn eino_reserves_its_tool_name() {
    let message = build_error(
        builder()
            .surface(Surface::Eino(EinoOptions::default()))
            .tool(plain_tool("skill")),
    );
    assert!(
        message.contains("`skill` shadows a skill tool"),
        "{message}"
    );
    let custom = Surface::Eino(EinoOptions::default().with_tool_name("use_skill"));
    let message = build_error(
        builder()
            .surface(custom.clone())
            .tool(plain_tool("use_skill")),
    );
    assert!(
        message.contains("reserved names for this surface: use_skill"),
        "{message}"
    );
    builder()
        .surface(custom)
        .tool(plain_tool("skill"))
        .build()
        .expect("`skill` is free when the Eino tool has another name");
}

#[test]
fn search_reserves_search_skills() {
    for builder in [
        builder().search(true),
        builder().catalog(CatalogMode::OnDemand),
    ] {
        let message = build_error(builder.tool(plain_tool("search_skills")));
        assert!(message.contains("search_skills"), "{message}");
    }
    builder()
        .tool(plain_tool("search_skills"))
        .build()
        .expect("search_skills is free without search");
}

#[test]
fn pool_and_executor_tools_may_not_shadow_skill_tools() {
    let message = build_error(builder().pool_tool(plain_tool("read_skill_file")));
    assert!(message.contains("pool tool `read_skill_file`"), "{message}");

    #[derive(Debug)]
    struct Shadowing;
    #[async_trait]
    impl ExecutionTools for Shadowing {
        fn tools(&self) -> Vec<ToolSpec> {
            vec![plain_tool("load_skill")]
        }
        async fn call(&self, _: &ExecContext<'_>, _: &str, _: &Value) -> Result<String, ToolError> {
            Ok(String::new())
        }
    }
    let message = build_error(
        builder()
            .profile(Profile::Full)
            .executor(Arc::new(Shadowing)),
    );
    assert!(message.contains("executor tool `load_skill`"), "{message}");
}

#[test]
fn duplicate_tool_names_are_refused() {
    let cases = [
        builder().tool(plain_tool("calc")).tool(plain_tool("calc")),
        builder()
            .tool(plain_tool("calc"))
            .pool_tool(plain_tool("calc")),
        builder()
            .pool_tool(plain_tool("calc"))
            .pool_tool(plain_tool("calc")),
        builder()
            .tool(plain_tool("run_script"))
            .profile(Profile::Full)
            .executor(Arc::new(TestRuntime)),
    ];
    for builder in cases {
        let message = build_error(builder);
        assert!(message.contains("is defined twice"), "{message}");
    }
}

#[test]
fn malformed_tool_names_are_refused() {
    for name in ["", "has space", "dots.are.bad", &"x".repeat(65)] {
        let message = build_error(builder().tool(plain_tool(name)));
        assert!(message.contains("not a valid tool name"), "{message}");
    }
}

#[test]
fn eino_tool_name_must_be_valid_and_distinct_from_search() {
    let message = build_error(
        builder()
            .surface(Surface::Eino(
                EinoOptions::default().with_tool_name("search_skills"),
            ))
            .search(true),
    );
    assert!(message.contains("search_skills"), "{message}");
    for name in ["", "use skill"] {
        let message = build_error(
            builder().surface(Surface::Eino(EinoOptions::default().with_tool_name(name))),
        );
        assert!(message.contains("not a valid tool name"), "{message}");
    }
}

#[test]
fn agent_needs_a_name() {
    let provider = builder().build().expect("builds").provider().clone();
    let message = build_error(AgentBuilder::new("  ", provider));
    assert!(message.contains("name"), "{message}");
}

#[test]
fn full_profile_exposes_and_runs_executor_tools() {
    let mut session = start(
        builder()
            .profile(Profile::Full)
            .executor(Arc::new(TestRuntime)),
    );
    let request = session.build_request();
    assert_eq!(
        tool_names(&request),
        ["load_skill", "read_skill_file", "run_failing", "run_script"]
    );
    let text = call_ok(&mut session, "run_script", json!({"script": "build.sh"}));
    assert_eq!(text, "ran build.sh");
    let err = call_err(&mut session, "run_failing", json!({}));
    assert_eq!(err, "Error: exit status 1");
    let results: Vec<&str> = session
        .transcript()
        .iter()
        .filter_map(|m| m.tool_name.as_deref())
        .collect();
    assert_eq!(results, ["run_script", "run_failing"]);
}

#[test]
fn knowledge_only_profile_ignores_the_executor() {
    let mut session = start(builder().executor(Arc::new(TestRuntime)));
    let request = session.build_request();
    assert_eq!(tool_names(&request), ["load_skill", "read_skill_file"]);
    match dispatch_in_turn(&mut session, "run_script", json!({})) {
        Dispatch::Handled(message) => {
            assert!(message.is_error);
            assert!(
                message
                    .content
                    .contains("there is no tool named `run_script`")
            );
        }
        other => panic!("expected an error result, got {other:?}"),
    }
}
