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
    assert!(listing.contains("get_weather (selected)"), "{listing}");
    assert!(
        listing.contains("get_forecast (not available to this agent)"),
        "{listing}"
    );
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
    assert!(text.contains("get_weather"), "{text}");
    assert_eq!(exposed(&mut session), ["get_weather"]);
    let err = call_err(&mut session, "get_forecast", json!({}));
    assert!(err.contains("not active"), "{err}");

    call_ok(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["send_email"]}),
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
    assert!(cleared.contains("No tools are selected"), "{cleared}");
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
