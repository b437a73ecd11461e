//! Where loaded bodies reach the model (F-DIS-9): tool results by default,
//! a second system block in the legacy mode, and a fallback block when the
//! loading message is out of view.

use serde_json::json;
use skills_agent::{Materialization, Message, Role, Session};

use super::support::{
    CSV_MARK, PDF_MARK, WEATHER_MARK, builder, call_ok, reply, start, tool_call, user,
};

fn legacy() -> Session {
    start(builder().materialization(Materialization::SystemMessage))
}

#[test]
fn legacy_mode_returns_a_stub_and_moves_the_body_to_the_system_region() {
    let mut session = legacy();
    user(&mut session, "fill this form");
    let before = session.build_request();
    assert_eq!(before.system.len(), 1);

    let result = call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    assert!(!result.contains(PDF_MARK), "the result is a stub: {result}");
    assert!(result.contains("system prompt"), "{result}");

    let after = session.build_request();
    assert_eq!(after.system.len(), 2);
    assert_eq!(
        after.system[0], before.system[0],
        "the stable block is kept"
    );
    assert!(after.system[0].stable && !after.system[1].stable);
    assert!(after.system[1].text.contains(PDF_MARK));
    assert!(!after.system[0].text.contains(PDF_MARK));
}

#[test]
fn legacy_mode_never_has_more_than_two_system_blocks() {
    let mut session = legacy();
    user(&mut session, "go");
    for name in ["pdf-forms", "csv-report", "weather"] {
        call_ok(&mut session, "load_skill", json!({ "name": name }));
        let request = session.build_request();
        assert_eq!(request.system.len(), 2, "after loading {name}");
    }
    user(&mut session, "use $git-commit too");
    session.set_history_limit(Some(1));
    let request = session.build_request();
    assert_eq!(request.system.len(), 2);
    let dynamic = &request.system[1].text;
    for mark in [PDF_MARK, CSV_MARK, WEATHER_MARK] {
        assert!(
            dynamic.contains(mark),
            "{mark} missing from the legacy block"
        );
    }
}

#[test]
fn history_limit_adds_the_fallback_block_for_loads_out_of_view() {
    let mut session = start(builder());
    user(&mut session, "fill this form");
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    reply(&mut session, "Which fields?");
    user(&mut session, "All of them.");
    reply(&mut session, "Done.");

    let full = session.build_request();
    assert_eq!(full.system.len(), 1, "nothing is out of view yet");

    session.set_history_limit(Some(2));
    let limited = session.build_request();
    assert_eq!(limited.messages.len(), 2);
    assert!(
        limited
            .messages
            .iter()
            .all(|m| !m.content.contains(PDF_MARK)),
        "the loading tool result is out of view"
    );
    assert_eq!(limited.system.len(), 2);
    assert_eq!(limited.system[0], full.system[0]);
    let fallback = &limited.system[1];
    assert!(!fallback.stable);
    assert!(
        fallback.text.starts_with("Loaded skill context"),
        "{}",
        fallback.text
    );
    assert!(fallback.text.contains(PDF_MARK));

    session.set_history_limit(None);
    assert_eq!(session.build_request().system.len(), 1);
}

#[test]
fn fallback_block_lists_only_loads_out_of_view() {
    let mut session = start(builder());
    user(&mut session, "go");
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    reply(&mut session, "ok");
    user(&mut session, "now the csv");
    call_ok(&mut session, "load_skill", json!({"name": "csv-report"}));
    session.set_history_limit(Some(3));
    let request = session.build_request();
    assert!(
        request
            .messages
            .iter()
            .any(|m| m.content.contains(CSV_MARK))
    );
    let fallback = &request.system[1].text;
    assert!(fallback.contains(PDF_MARK));
    assert!(!fallback.contains(CSV_MARK), "csv-report is still in view");
}

#[test]
fn released_skills_leave_the_fallback_block() {
    let mut session = start(builder().max_loaded(1));
    user(&mut session, "go");
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    reply(&mut session, "ok");
    user(&mut session, "next");
    call_ok(&mut session, "load_skill", json!({"name": "csv-report"}));
    reply(&mut session, "ok");
    session.set_history_limit(Some(1));
    let request = session.build_request();
    let fallback = &request.system[1].text;
    assert!(fallback.contains(CSV_MARK));
    assert!(!fallback.contains(PDF_MARK), "pdf-forms was evicted");
}

#[test]
fn requests_never_start_with_an_orphan_tool_result() {
    let mut session = start(builder());
    user(&mut session, "two things at once");
    let calls = vec![
        tool_call("load_skill", json!({"name": "pdf-forms"})),
        tool_call("load_skill", json!({"name": "csv-report"})),
    ];
    session.push_assistant(Message::assistant_with_calls("", calls.clone()));
    for call in &calls {
        pollster::block_on(session.handle_tool_call(call));
    }
    reply(&mut session, "Both loaded.");
    user(&mut session, "thanks");
    let total = session.transcript().len();
    for limit in 0..=total + 1 {
        session.set_history_limit(Some(limit));
        let request = session.build_request();
        assert!(
            request
                .messages
                .first()
                .is_none_or(|m| m.role != Role::Tool),
            "limit {limit}: the view starts with a tool result"
        );
        assert!(request.system.len() <= 2, "limit {limit}");
        // Every tool result in view answers a call in view.
        for (i, message) in request.messages.iter().enumerate() {
            if message.role == Role::Tool {
                let id = message.tool_call_id.as_deref().expect("results carry ids");
                assert!(
                    request.messages[..i]
                        .iter()
                        .any(|m| m.tool_calls.iter().any(|c| c.id == id)),
                    "limit {limit}: result {id} has no call in view"
                );
            }
        }
    }
}

#[test]
fn tool_result_mode_sends_each_body_once() {
    let mut session = start(builder());
    user(&mut session, "go");
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    user(&mut session, "and $pdf-forms again");
    let request = session.build_request();
    let count = request
        .messages
        .iter()
        .filter(|m| m.content.contains(PDF_MARK))
        .count();
    assert_eq!(count, 1, "the body appears once in the conversation");
    assert!(request.system.iter().all(|b| !b.text.contains(PDF_MARK)));
}
