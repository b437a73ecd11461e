//! Profiles and reserved tool names (F-DIS-8): what `AgentBuilder::build`
//! refuses, and the `full` profile's run tools over a runtime.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use skills_agent::{
    AgentBuilder, BuildErrorKind, CatalogMode, Dispatch, EinoOptions, Profile, Surface,
};
use skills_workspace::{
    Attachment, CleanupReport, InputSpec, RunRequest, RunResult, SessionId, SkillSource,
    StagedInput, StagedSkill, WorkspaceError, WorkspaceErrorKind, WorkspaceFile, WorkspaceInfo,
    WorkspaceResult, WorkspaceRuntime,
};

use super::support::{
    builder, call, call_err, call_ok, dispatch_in_turn, plain_tool, start, tool_names,
};

/// A tiny batch-only runtime: a run echoes its command; the command `fail`
/// fails. It records what was staged.
#[derive(Debug, Default)]
struct TestRuntime {
    staged: Mutex<Vec<String>>,
}

#[async_trait]
impl WorkspaceRuntime for TestRuntime {
    fn name(&self) -> &str {
        "test"
    }
    async fn create_workspace(&self, session_id: &SessionId) -> WorkspaceResult<WorkspaceInfo> {
        Ok(WorkspaceInfo::new(session_id.as_str(), "/nowhere", true))
    }
    async fn stage_skill(
        &self,
        _: &SessionId,
        skill: &SkillSource,
    ) -> WorkspaceResult<StagedSkill> {
        self.staged
            .lock()
            .expect("not poisoned")
            .push(skill.name().to_owned());
        Ok(StagedSkill::new(skill.name(), "digest", true))
    }
    async fn stage_inputs(
        &self,
        _: &SessionId,
        _: &[InputSpec],
    ) -> WorkspaceResult<Vec<StagedInput>> {
        Ok(Vec::new())
    }
    async fn stage_attachments(
        &self,
        _: &SessionId,
        _: &[Attachment],
    ) -> WorkspaceResult<Vec<StagedInput>> {
        Ok(Vec::new())
    }
    async fn run(&self, _: &SessionId, request: &RunRequest) -> WorkspaceResult<RunResult> {
        if request.spec.command == "fail" {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::Spawn,
                "exit status 1",
            ));
        }
        let mut result = RunResult::default();
        result.stdout = format!("ran {}", request.spec.command);
        result.exit_code = Some(0);
        Ok(result)
    }
    async fn read_file(&self, _: &SessionId, path: &str, _: u64) -> WorkspaceResult<WorkspaceFile> {
        Err(WorkspaceError::new(WorkspaceErrorKind::NotFound, path))
    }
    async fn cleanup(&self, _: &SessionId) -> WorkspaceResult<CleanupReport> {
        Ok(CleanupReport::default())
    }
}

fn full(builder: AgentBuilder) -> AgentBuilder {
    builder
        .profile(Profile::Full)
        .runtime(Arc::new(TestRuntime::default()))
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
        BuildErrorKind::MissingRuntime
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
fn full_profile_without_a_runtime_fails_to_build() {
    let message = build_error(builder().profile(Profile::Full));
    assert!(
        message.contains("`full` profile needs a runtime"),
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
fn pool_tools_may_not_shadow_skill_or_run_tools() {
    let message = build_error(builder().pool_tool(plain_tool("read_skill_file")));
    assert!(message.contains("pool tool `read_skill_file`"), "{message}");
    let message = build_error(full(builder().pool_tool(plain_tool("run_skill_command"))));
    assert!(
        message.contains("pool tool `run_skill_command` shadows a skill tool"),
        "{message}"
    );
    let message = build_error(full(
        builder()
            .surface(Surface::Trpc)
            .tool(plain_tool("skill_run")),
    ));
    assert!(
        message.contains("user tool `skill_run` shadows a skill tool"),
        "{message}"
    );
    // Without the `full` profile the run tool names are free.
    builder()
        .tool(plain_tool("run_skill_command"))
        .runtime(Arc::new(TestRuntime::default()))
        .build()
        .expect("knowledge-only agents reserve no run tool");
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
fn full_profile_exposes_and_runs_the_run_tools() {
    let runtime = Arc::new(TestRuntime::default());
    let mut session = start(
        builder()
            .profile(Profile::Full)
            .runtime(runtime.clone())
            .interactive_runs(false),
    );
    let request = session.build_request();
    assert_eq!(
        tool_names(&request),
        ["load_skill", "read_skill_file", "run_skill_command"]
    );
    let err = call_err(
        &mut session,
        "run_skill_command",
        json!({"skill": "pdf-forms", "command": "fill"}),
    );
    assert!(
        err.contains("the skill `pdf-forms` is not loaded; call `load_skill` with it first"),
        "{err}"
    );
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    let text = call_ok(
        &mut session,
        "run_skill_command",
        json!({"skill": "pdf-forms", "command": "fill"}),
    );
    let result: serde_json::Value = serde_json::from_str(&text).expect("JSON result");
    assert_eq!(result["stdout"], "ran fill");
    let err = call_err(
        &mut session,
        "run_skill_command",
        json!({"skill": "pdf-forms", "command": "fail"}),
    );
    assert_eq!(err, "Error: spawn: exit status 1");
    // Staged from the agent's provider before each run.
    assert_eq!(
        *runtime.staged.lock().expect("not poisoned"),
        ["pdf-forms", "pdf-forms"]
    );
    let results: Vec<&str> = session
        .transcript()
        .iter()
        .filter_map(|m| m.tool_name.as_deref())
        .collect();
    assert_eq!(
        results,
        [
            "run_skill_command",
            "load_skill",
            "run_skill_command",
            "run_skill_command"
        ]
    );
}

#[test]
fn run_tools_follow_the_surface_and_the_interactive_switch() {
    let session = start(full(builder().surface(Surface::Trpc)));
    let names = tool_names(&session.build_request());
    for tool in [
        "skill_exec",
        "skill_kill_session",
        "skill_poll_session",
        "skill_run",
        "skill_write_stdin",
    ] {
        assert!(names.iter().any(|n| n == tool), "{tool} in {names:?}");
    }
    let mut session = start(full(builder()));
    // A batch-only runtime answers the session tools with a clear error.
    let err = call_err(
        &mut session,
        "poll_skill_session",
        json!({"session_id": "x"}),
    );
    assert!(err.contains("unsupported"), "{err}");
    let message = call(&mut session, "run_skill_command", json!({"skill": 7}));
    assert!(message.is_error);
    assert!(
        message
            .content
            .contains("invalid arguments for `run_skill_command`"),
        "{}",
        message.content
    );
}

#[test]
fn knowledge_only_profile_ignores_the_runtime() {
    let mut session = start(builder().runtime(Arc::new(TestRuntime::default())));
    let request = session.build_request();
    assert_eq!(tool_names(&request), ["load_skill", "read_skill_file"]);
    match dispatch_in_turn(&mut session, "run_skill_command", json!({})) {
        Dispatch::Handled(message) => {
            assert!(message.is_error);
            assert!(
                message
                    .content
                    .contains("there is no tool named `run_skill_command`")
            );
        }
        other => panic!("expected an error result, got {other:?}"),
    }
}
