//! Resume: a session rebuilt from its pinned catalog and transcript has the
//! same load state and builds the same request bytes.

use serde_json::json;
use skills_agent::{CacheStrategy, Materialization, Message, Session, Surface};

use super::support::{
    SetSkills, builder, builder_with, call, call_ok, csv_report, git_commit, library, pdf_forms,
    plain_tool, reply, request_json, sized, start, tool_call, user,
};

fn resume(session: &Session) -> Session {
    pollster::block_on(session.agent().resume_session(
        session.pinned_catalog().clone(),
        session.transcript().to_vec(),
    ))
    .expect("the session resumes")
}

fn assert_same(original: &mut Session, resumed: &mut Session) {
    assert_eq!(original.state(), resumed.state());
    assert_eq!(original.loaded(), resumed.loaded());
    assert_eq!(
        request_json(&original.build_request()),
        request_json(&resumed.build_request()),
        "the resumed session builds different request bytes"
    );
}

fn work(session: &mut Session) {
    user(session, "fill the form and use $git-commit for the message");
    call_ok(session, "load_skill", json!({"name": "pdf-forms"}));
    call_ok(
        session,
        "read_skill_file",
        json!({"skill": "pdf-forms", "path": "references/fields.md", "start_line": 2}),
    );
    session.build_request();
    reply(session, "Filled.");
    user(session, "now the CSV");
    call_ok(session, "load_skill", json!({"name": "csv-report"}));
    // As in a real loop, the last reply answers a request built just before it.
    session.build_request();
    let failed = call(session, "load_skill", json!({"name": "no-such-skill"}));
    assert!(failed.is_error);
}

/// Runs the same call (same id) in both sessions, as a replayed tool loop would.
fn both(sessions: [&mut Session; 2], tool: &str, arguments: serde_json::Value) {
    let call = tool_call(tool, arguments);
    for session in sessions {
        session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
        pollster::block_on(session.handle_tool_call(&call));
    }
}

#[test]
fn resume_rebuilds_state_and_request_bytes() {
    let mut original = start(builder());
    work(&mut original);
    let mut resumed = resume(&original);
    assert_eq!(resumed.transcript(), original.transcript());
    assert_same(&mut original, &mut resumed);
}

#[test]
fn resumed_session_continues_like_the_original() {
    let mut original = start(builder());
    work(&mut original);
    let mut resumed = resume(&original);
    for session in [&mut original, &mut resumed] {
        reply(session, "Report ready.");
        user(session, "thanks, and load weather");
    }
    both(
        [&mut original, &mut resumed],
        "load_skill",
        json!({"name": "weather"}),
    );
    both(
        [&mut original, &mut resumed],
        "load_skill",
        json!({"name": "pdf-forms"}),
    );
    assert_eq!(original.loaded().len(), 4);
    assert_same(&mut original, &mut resumed);
}

#[test]
fn resume_after_a_compaction_matches() {
    let mut original = start(builder());
    work(&mut original);
    original.compact("The form was filled.");
    user(&mut original, "next");
    let mut resumed = resume(&original);
    assert_same(&mut original, &mut resumed);
}

#[test]
fn resume_in_legacy_mode_rebuilds_the_system_block() {
    let mut original = start(builder().materialization(Materialization::SystemMessage));
    work(&mut original);
    let mut resumed = resume(&original);
    let request = resumed.build_request();
    assert_eq!(request.system.len(), 2);
    assert_same(&mut original, &mut resumed);
}

#[test]
fn resume_rebuilds_the_fallback_block() {
    let mut original = start(builder());
    work(&mut original);
    reply(&mut original, "done");
    original.set_history_limit(Some(1));
    let mut resumed = resume(&original);
    resumed.set_history_limit(Some(1));
    assert_eq!(resumed.build_request().system.len(), 2);
    assert_same(&mut original, &mut resumed);
}

#[test]
fn resume_keeps_doc_and_tool_selections() {
    let make = || {
        builder()
            .surface(Surface::Trpc)
            .pool_tool(plain_tool("get_weather"))
            .pool_tool(plain_tool("get_forecast"))
    };
    let mut original = start(make());
    call_ok(
        &mut original,
        "skill_load",
        json!({"skill": "pdf-forms", "docs": ["references/fields.md"]}),
    );
    call_ok(
        &mut original,
        "skill_select_docs",
        json!({"skill": "pdf-forms", "docs": ["references/signing.md"], "mode": "add"}),
    );
    call_ok(&mut original, "skill_load", json!({"skill": "weather"}));
    call_ok(
        &mut original,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["get_forecast"], "mode": "replace"}),
    );
    let mut resumed = resume(&original);
    // Adding nothing reports the selection both sessions kept.
    both(
        [&mut original, &mut resumed],
        "skill_select_docs",
        json!({"skill": "pdf-forms", "mode": "add"}),
    );
    let selection = &resumed.transcript().last().expect("the selection").content;
    assert_eq!(
        selection,
        r#"{"skill":"pdf-forms","mode":"add","selected_docs":["references/fields.md","references/signing.md"],"include_all_docs":false}"#
    );
    assert_same(&mut original, &mut resumed);
    assert!(resumed.build_request().tool("get_forecast").is_some());
    assert!(resumed.build_request().tool("get_weather").is_none());
}

#[test]
fn resume_does_not_announce_a_delta_twice() {
    let (builder, provider) = builder_with(library());
    let mut original = start(builder);
    user(&mut original, "hi");
    provider.set_skills(vec![pdf_forms(), csv_report(), git_commit()]);
    let delta = pollster::block_on(original.refresh_catalog()).expect("lists");
    assert_eq!(delta.expect("weather left").removed, ["weather"]);

    let mut resumed = resume(&original);
    let again = pollster::block_on(resumed.refresh_catalog()).expect("lists");
    assert_eq!(again, None, "the transcript already announced the change");
    assert_same(&mut original, &mut resumed);

    // A later change is announced relative to what the transcript said.
    provider.set_skills(vec![
        pdf_forms(),
        csv_report(),
        git_commit(),
        sized("new-skill", 100),
    ]);
    let next = pollster::block_on(resumed.refresh_catalog())
        .expect("lists")
        .expect("changed");
    assert_eq!(next.added.len(), 1);
    assert_eq!(next.removed, Vec::<String>::new());
    assert_eq!(next.added[0].0, "new-skill");
}

#[test]
fn resume_with_explicit_breakpoints_keeps_the_prefix() {
    let mut original = start(builder().cache(CacheStrategy::Anthropic));
    work(&mut original);
    let resumed = resume(&original);
    let a = original.build_request();
    let b = resumed.build_request();
    assert_eq!(a.system, b.system);
    assert_eq!(a.tools, b.tools);
    assert_eq!(a.messages, b.messages);
    assert_eq!(a.cache_breakpoints, b.cache_breakpoints);
}
