//! Pool tools (F-DIS-11): hidden until a loaded skill declares them in its
//! `Tools:` section or `skill_select_tools` selects them.

use serde_json::json;
use skills_agent::{AgentBuilder, Dispatch, Event, Lifetime, Session, Surface};

use super::support::{
    builder, call_err, call_ok, dispatch_in_turn, plain_tool, start, tool_names, user,
};

fn with_pool(builder: AgentBuilder) -> AgentBuilder {
    builder
        .pool_tool(plain_tool("get_weather"))
        .pool_tool(plain_tool("get_forecast"))
        .pool_tool(plain_tool("send_email"))
}

fn exposed(session: &mut Session) -> Vec<String> {
    let request = session.build_request();
    tool_names(&request)
        .into_iter()
        .filter(|n| ["get_weather", "get_forecast", "send_email"].contains(&n.as_str()))
        .collect()
}

#[test]
fn pool_tools_are_hidden_until_a_declaring_skill_loads() {
    let mut session = start(with_pool(builder()));
    user(&mut session, "weather in Oslo?");
    let first = session.build_request();
    assert_eq!(tool_names(&first), ["load_skill", "read_skill_file"]);

    call_ok(&mut session, "load_skill", json!({"name": "weather"}));
    let second = session.build_request();
    assert_eq!(
        tool_names(&second),
        [
            "get_forecast",
            "get_weather",
            "load_skill",
            "read_skill_file"
        ],
        "tools stay sorted by name"
    );
    let outcome = dispatch_in_turn(&mut session, "get_weather", json!({"city": "Oslo"}));
    assert_eq!(outcome, Dispatch::External);
    let err = call_err(&mut session, "send_email", json!({}));
    assert!(err.contains("No skill declares it"), "{err}");
}

#[test]
fn calling_a_hidden_pool_tool_names_the_skills_that_declare_it() {
    let mut session = start(with_pool(builder()));
    let err = call_err(&mut session, "get_forecast", json!({"city": "Oslo"}));
    assert!(err.contains("`get_forecast` is not active"), "{err}");
    assert!(
        err.contains("Load a skill that declares it first: weather"),
        "{err}"
    );
}

#[test]
fn loading_a_skill_without_tools_keeps_the_tool_list() {
    let mut session = start(with_pool(builder()));
    user(&mut session, "fill a form");
    let before = session.build_request();
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    let after = session.build_request();
    assert_eq!(before.tools, after.tools);
}

#[test]
fn declared_tools_outside_the_pool_stay_hidden() {
    let mut session = start(
        builder()
            .surface(Surface::Trpc)
            .pool_tool(plain_tool("get_weather")),
    );
    call_ok(&mut session, "skill_load", json!({"skill": "weather"}));
    assert_eq!(
        tool_names(&session.build_request())
            .into_iter()
            .filter(|n| n.starts_with("get_"))
            .collect::<Vec<_>>(),
        ["get_weather"]
    );
    let listing = call_ok(
        &mut session,
        "skill_list_tools",
        json!({"skill": "weather"}),
    );
    // As trpc-agent: every tool the skill declares, in its order, whether or
    // not this agent has it.
    assert_eq!(listing, r#"["get_weather","get_forecast"]"#);
}

#[test]
fn select_tools_add_replace_and_clear_change_exposure() {
    let mut session = start(with_pool(builder().surface(Surface::Trpc)));
    call_ok(&mut session, "skill_load", json!({"skill": "weather"}));
    assert_eq!(exposed(&mut session), ["get_forecast", "get_weather"]);

    let text = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["get_weather"], "mode": "replace"}),
    );
    assert_eq!(
        text,
        r#"{"skill":"weather","mode":"replace","selected_tools":["get_weather"],"include_all_tools":false}"#
    );
    assert_eq!(exposed(&mut session), ["get_weather"]);
    let err = call_err(&mut session, "get_forecast", json!({}));
    assert!(err.contains("not active"), "{err}");

    call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["send_email"], "mode": "add"}),
    );
    assert_eq!(exposed(&mut session), ["get_weather", "send_email"]);
    assert_eq!(
        dispatch_in_turn(&mut session, "send_email", json!({})),
        Dispatch::External
    );

    let cleared = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "mode": "clear"}),
    );
    assert_eq!(
        cleared,
        r#"{"skill":"weather","mode":"clear","selected_tools":[],"include_all_tools":false}"#
    );
    assert!(exposed(&mut session).is_empty());
    let events: Vec<Event> = session.take_events();
    let selections: Vec<Vec<String>> = events
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolsSelected { tools, .. } => Some(tools),
            _ => None,
        })
        .collect();
    assert_eq!(
        selections,
        vec![
            vec!["get_weather".to_owned()],
            vec!["get_weather".to_owned(), "send_email".to_owned()],
            vec![],
        ]
    );
}

/// `skill_select_tools` as trpc-agent: the mode defaults to `replace`, is
/// read without regard to case, and an unknown one means `replace`.
#[test]
fn select_tools_mode_defaults_to_replace_ignores_case_and_falls_back() {
    let mut session = start(with_pool(builder().surface(Surface::Trpc)));
    call_ok(&mut session, "skill_load", json!({"skill": "weather"}));
    let text = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["get_forecast"]}),
    );
    assert!(text.contains(r#""mode":"replace""#), "{text}");
    assert_eq!(exposed(&mut session), ["get_forecast"]);

    let text = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["send_email"], "mode": "ADD"}),
    );
    assert!(text.contains(r#""mode":"add""#), "{text}");
    assert_eq!(exposed(&mut session), ["get_forecast", "send_email"]);

    let text = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["get_weather"], "mode": "bogus"}),
    );
    assert_eq!(
        text,
        r#"{"skill":"weather","mode":"replace","selected_tools":["get_weather"],"include_all_tools":false}"#
    );
    assert_eq!(exposed(&mut session), ["get_weather"]);

    let text = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": [], "mode": " Clear "}),
    );
    assert!(text.contains(r#""mode":"clear""#), "{text}");
    assert!(exposed(&mut session).is_empty());
}

/// `include_all_tools` selects every tool the skill declares that the agent
/// has, with the tools named (replace) or on top of the selection (add).
#[test]
fn select_tools_include_all_tools_selects_the_declared_tools() {
    let mut session = start(with_pool(builder().surface(Surface::Trpc)));
    call_ok(&mut session, "skill_load", json!({"skill": "weather"}));
    call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "mode": "clear"}),
    );
    assert!(exposed(&mut session).is_empty());
    let text = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "include_all_tools": true}),
    );
    assert_eq!(
        text,
        r#"{"skill":"weather","mode":"replace","selected_tools":["get_forecast","get_weather"],"include_all_tools":true}"#
    );
    assert_eq!(exposed(&mut session), ["get_forecast", "get_weather"]);

    let text = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["send_email"], "include_all_tools": true}),
    );
    assert!(text.contains(r#""include_all_tools":true"#), "{text}");
    assert_eq!(
        exposed(&mut session),
        ["get_forecast", "get_weather", "send_email"]
    );
}

/// trpc-agent-python names the skill `skill_name`; every trpc skill tool
/// takes it as well as `skill`.
#[test]
fn trpc_tools_accept_skill_name() {
    let mut session = start(with_pool(builder().surface(Surface::Trpc)));
    let listed = call_ok(
        &mut session,
        "skill_list_tools",
        json!({"skill_name": "weather"}),
    );
    assert_eq!(listed, r#"["get_weather","get_forecast"]"#);
    let docs = call_ok(
        &mut session,
        "skill_list_docs",
        json!({"skill_name": "pdf-forms"}),
    );
    assert!(docs.starts_with("[\"references/"), "{docs}");
    let loaded = call_ok(&mut session, "skill_load", json!({"skill_name": "weather"}));
    assert!(loaded.contains("<skill name=\"weather\">"), "{loaded}");
    let selected = call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill_name": "weather", "tools": ["get_weather"]}),
    );
    assert!(
        selected.contains(r#""selected_tools":["get_weather"]"#),
        "{selected}"
    );
    call_ok(
        &mut session,
        "skill_load",
        json!({"skill_name": "pdf-forms"}),
    );
    let docs = call_ok(
        &mut session,
        "skill_select_docs",
        json!({"skill_name": "pdf-forms", "include_all_docs": true}),
    );
    assert!(
        docs.starts_with(r#"{"skill":"pdf-forms","mode":"replace""#),
        "{docs}"
    );
}

#[test]
fn releasing_a_skill_hides_its_tools_again() {
    let mut session = start(with_pool(builder().lifetime(Lifetime::Turn)));
    user(&mut session, "weather?");
    call_ok(&mut session, "load_skill", json!({"name": "weather"}));
    assert_eq!(exposed(&mut session), ["get_forecast", "get_weather"]);
    user(&mut session, "thanks");
    assert!(exposed(&mut session).is_empty());
    let err = call_err(&mut session, "get_weather", json!({}));
    assert!(err.contains("weather"), "{err}");
}

#[test]
fn user_tools_are_always_exposed_and_external() {
    let mut session = start(with_pool(builder()).tool(plain_tool("calculator")));
    assert!(tool_names(&session.build_request()).contains(&"calculator".to_owned()));
    assert_eq!(
        dispatch_in_turn(&mut session, "calculator", json!({"expr": "1+1"})),
        Dispatch::External
    );
}
