//! Cache strategies (F-AGT-2): Anthropic breakpoints and their wire markers;
//! automatic-prefix caching places none.

use serde_json::{Value, json};
use skills_agent::{
    CacheBreakpoint, CacheStrategy, MAX_BREAKPOINTS, Materialization, ModelRequest,
};
use skills_models::wire;

use super::support::{builder, call_ok, reply, start, user};

/// Every `cache_control` marker in a wire body, as JSON pointers.
fn markers(body: &str) -> Vec<String> {
    fn walk(value: &Value, path: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    if key == "cache_control" {
                        assert_eq!(inner, &json!({"type": "ephemeral"}));
                        out.push(path.clone());
                    } else {
                        walk(inner, format!("{path}/{key}"), out);
                    }
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    walk(inner, format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let value: Value = serde_json::from_str(body).expect("the wire body is JSON");
    let mut out = Vec::new();
    walk(&value, String::new(), &mut out);
    out.sort();
    out
}

fn anthropic_session() -> skills_agent::Session {
    start(builder().cache(CacheStrategy::Anthropic))
}

fn check_bounds(request: &ModelRequest) {
    assert!(request.cache_breakpoints.len() <= MAX_BREAKPOINTS);
    let body = wire::anthropic_messages(request, "claude-test");
    assert_eq!(
        markers(&body).len(),
        request.cache_breakpoints.len(),
        "every breakpoint has exactly one marker"
    );
}

#[test]
fn first_request_marks_tools_system_and_the_latest_message() {
    let mut session = anthropic_session();
    user(&mut session, "fill this form");
    let request = session.build_request();
    assert_eq!(
        request.cache_breakpoints,
        [
            CacheBreakpoint::Tools,
            CacheBreakpoint::System { block: 0 },
            CacheBreakpoint::Message { index: 0 },
        ]
    );
    let body = wire::anthropic_messages(&request, "claude-test");
    assert_eq!(
        markers(&body),
        ["/messages/0/content/0", "/system/0", "/tools/1"]
    );
}

#[test]
fn later_requests_also_mark_the_previous_requests_last_message() {
    let mut session = anthropic_session();
    user(&mut session, "fill this form");
    session.build_request();
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    let request = session.build_request();
    assert_eq!(
        request.cache_breakpoints,
        [
            CacheBreakpoint::Tools,
            CacheBreakpoint::System { block: 0 },
            CacheBreakpoint::Message { index: 0 },
            CacheBreakpoint::Message { index: 2 },
        ]
    );
    // Messages: user(0), assistant tool call(1), tool result(2). On the wire
    // the tool result travels in the second user message.
    let body = wire::anthropic_messages(&request, "claude-test");
    assert_eq!(
        markers(&body),
        [
            "/messages/0/content/0",
            "/messages/2/content/0",
            "/system/0",
            "/tools/1",
        ]
    );
    let value: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(value["messages"][2]["content"][0]["type"], "tool_result");
}

#[test]
fn breakpoints_stay_within_four_over_a_long_session() {
    let mut session = start(
        builder()
            .cache(CacheStrategy::Anthropic)
            .materialization(Materialization::SystemMessage),
    );
    for (turn, name) in ["pdf-forms", "csv-report", "weather", "git-commit"]
        .iter()
        .enumerate()
    {
        user(&mut session, &format!("turn {turn}"));
        check_bounds(&session.build_request());
        call_ok(&mut session, "load_skill", json!({ "name": name }));
        let request = session.build_request();
        check_bounds(&request);
        assert_eq!(request.system.len(), 2);
        assert!(
            request
                .cache_breakpoints
                .contains(&CacheBreakpoint::System { block: 0 }),
            "the breakpoint sits on the stable block"
        );
        assert!(
            !request
                .cache_breakpoints
                .contains(&CacheBreakpoint::System { block: 1 })
        );
        reply(&mut session, "ok");
    }
}

#[test]
fn no_new_message_means_no_extra_breakpoint() {
    let mut session = anthropic_session();
    user(&mut session, "hi");
    let first = session.build_request();
    let second = session.build_request();
    assert_eq!(first.cache_breakpoints, second.cache_breakpoints);
}

#[test]
fn previous_breakpoint_is_dropped_when_out_of_view() {
    let mut session = anthropic_session();
    user(&mut session, "one");
    session.build_request();
    reply(&mut session, "two");
    user(&mut session, "three");
    session.set_history_limit(Some(1));
    let request = session.build_request();
    assert_eq!(
        request.cache_breakpoints,
        [
            CacheBreakpoint::Tools,
            CacheBreakpoint::System { block: 0 },
            CacheBreakpoint::Message { index: 0 },
        ]
    );
    check_bounds(&request);
}

#[test]
fn automatic_prefix_places_no_breakpoints() {
    let mut session = start(builder());
    user(&mut session, "fill this form");
    session.build_request();
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    let request = session.build_request();
    assert!(request.cache_breakpoints.is_empty());
    assert!(markers(&wire::anthropic_messages(&request, "claude-test")).is_empty());
    assert!(!wire::openai_chat(&request, "gpt-test").contains("cache_control"));
}

#[test]
fn openai_wire_never_carries_markers() {
    let mut session = anthropic_session();
    user(&mut session, "hi");
    let request = session.build_request();
    assert!(!request.cache_breakpoints.is_empty());
    assert!(!wire::openai_chat(&request, "gpt-test").contains("cache_control"));
}

#[test]
fn building_the_same_request_twice_gives_the_same_bytes() {
    for lifetime in [
        skills_agent::Lifetime::Session,
        skills_agent::Lifetime::Once,
    ] {
        let mut session = start(builder().cache(CacheStrategy::Anthropic).lifetime(lifetime));
        user(&mut session, "fill the form");
        let first = session.build_request();
        assert_eq!(session.build_request(), first, "{lifetime:?}");
        reply(&mut session, "loading");
        call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
        let second = session.build_request();
        let again = session.build_request();
        assert_eq!(again, second, "{lifetime:?}");
        assert_eq!(
            wire::anthropic_messages(&again, "m"),
            wire::anthropic_messages(&second, "m")
        );
        reply(&mut session, "done");
        user(&mut session, "thanks");
        let third = session.build_request();
        assert_eq!(session.build_request(), third, "{lifetime:?}");
        // The breakpoint on the previous request still points at the end of
        // the second request, not at the repeated build.
        assert!(
            third.cache_breakpoints.contains(&CacheBreakpoint::Message {
                index: second.messages.len() - 1
            }),
            "{:?}",
            third.cache_breakpoints
        );
    }
}
