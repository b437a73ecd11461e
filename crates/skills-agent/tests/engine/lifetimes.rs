//! Load lifetimes and the loaded-skill cap (F-DIS-10).

use serde_json::json;
use skills_agent::{Dispatch, Event, Lifetime, LoadState, ReleaseReason, Session};
use skills_core::{InjectionAction, TaggedMessage};

use super::support::{
    CSV_MARK, PDF_MARK, builder, call_ok, dispatch_in_turn, plain_tool, reply, start, tool_names,
    user,
};

fn released(session: &mut Session) -> Vec<(String, ReleaseReason)> {
    session
        .take_events()
        .into_iter()
        .filter_map(|event| match event {
            Event::SkillReleased { skill, reason } => Some((skill, reason)),
            _ => None,
        })
        .collect()
}

fn loaded(session: &Session) -> Vec<String> {
    session.loaded().into_iter().collect()
}

fn load(session: &mut Session, name: &str) -> String {
    call_ok(session, "load_skill", json!({ "name": name }))
}

#[test]
fn turn_lifetime_releases_at_the_next_user_message() {
    let mut session = start(builder().lifetime(Lifetime::Turn));
    user(&mut session, "fill this form");
    assert!(load(&mut session, "pdf-forms").contains(PDF_MARK));
    reply(&mut session, "Done.");
    assert_eq!(
        loaded(&session),
        ["pdf-forms"],
        "a reply does not end a turn"
    );
    session.take_events();

    user(&mut session, "and another one");
    assert!(session.loaded().is_empty());
    assert_eq!(
        released(&mut session),
        [("pdf-forms".to_owned(), ReleaseReason::Lifetime)]
    );
    let last = session.transcript().last().expect("the user message");
    let tags = last.skill_injections();
    assert_eq!(tags.len(), 1);
    assert_eq!(tags[0].action, InjectionAction::Released);

    let again = load(&mut session, "pdf-forms");
    assert!(
        again.contains(PDF_MARK),
        "a re-load returns the body: {again}"
    );
    assert!(!again.contains("already loaded"), "{again}");
}

#[test]
fn once_lifetime_retires_a_load_at_the_request_after_its_answer() {
    let mut session = start(builder().lifetime(Lifetime::Once));
    user(&mut session, "fill this form");
    session.retire_once_loads();
    session.build_request();
    load(&mut session, "pdf-forms");
    assert_eq!(loaded(&session), ["pdf-forms"]);
    // The request that shows the body, and the answer to it: its own tool
    // calls still see the skill loaded.
    session.retire_once_loads();
    session.build_request();
    reply(&mut session, "Here is the filled form.");
    assert_eq!(loaded(&session), ["pdf-forms"]);
    assert!(released(&mut session).is_empty());
    // Building is pure: without the explicit step nothing is retired.
    assert_eq!(session.build_request(), session.build_request());
    assert_eq!(loaded(&session), ["pdf-forms"]);
    // The next request no longer counts it; the release is recorded on the
    // next message, so the transcript replays to the same state.
    assert_eq!(session.retire_once_loads(), ["pdf-forms"]);
    assert!(session.retire_once_loads().is_empty(), "retired once");
    session.build_request();
    user(&mut session, "and another one");
    assert!(session.loaded().is_empty());
    assert_eq!(
        released(&mut session),
        [("pdf-forms".to_owned(), ReleaseReason::Lifetime)]
    );
    assert_eq!(
        LoadState::from_transcript(session.transcript()).loaded(),
        session.loaded()
    );
    let again = load(&mut session, "pdf-forms");
    assert!(again.contains(PDF_MARK) && !again.contains("already loaded"));
}

#[test]
fn once_lifetime_lets_the_answer_use_the_tools_it_was_shown() {
    let mut session = start(
        builder()
            .lifetime(Lifetime::Once)
            .pool_tool(plain_tool("get_weather"))
            .pool_tool(plain_tool("get_forecast")),
    );
    user(&mut session, "weather in Oslo?");
    session.retire_once_loads();
    session.build_request();
    load(&mut session, "weather");
    let shown = session.build_request();
    assert!(tool_names(&shown).contains(&"get_weather".to_owned()));
    // The answer to that request calls the tool it was shown: it runs.
    assert_eq!(
        dispatch_in_turn(&mut session, "get_weather", json!({"city": "Oslo"})),
        Dispatch::External
    );
    session.push_tool_result("call-x", "get_weather", "rain", false);
    // The request after that answer has retired the skill and its tools.
    session.retire_once_loads();
    let next = session.build_request();
    assert!(!tool_names(&next).contains(&"get_weather".to_owned()));
}

#[test]
fn session_lifetime_keeps_loads_across_turns() {
    let mut session = start(builder());
    user(&mut session, "fill this form");
    load(&mut session, "pdf-forms");
    for turn in 0..3 {
        session.build_request();
        reply(&mut session, "ok");
        user(&mut session, &format!("turn {turn}"));
    }
    assert_eq!(loaded(&session), ["pdf-forms"]);
    assert!(released(&mut session).is_empty());
    let again = load(&mut session, "pdf-forms");
    assert!(again.contains("already loaded"), "{again}");
    assert!(
        !again.contains(PDF_MARK),
        "the body is not sent twice: {again}"
    );
}

#[test]
fn cap_evicts_the_least_recently_loaded() {
    let mut session = start(builder().max_loaded(2));
    load(&mut session, "pdf-forms");
    load(&mut session, "csv-report");
    session.take_events();
    load(&mut session, "weather");
    assert_eq!(loaded(&session), ["csv-report", "weather"]);
    assert_eq!(
        released(&mut session),
        [("pdf-forms".to_owned(), ReleaseReason::Cap)]
    );
    // The evicting load carries both tags, so a replay agrees.
    let last = session.transcript().last().expect("the load result");
    let actions: Vec<InjectionAction> = last.skill_injections().iter().map(|t| t.action).collect();
    assert_eq!(
        actions,
        [InjectionAction::Loaded, InjectionAction::Released]
    );
    let again = load(&mut session, "pdf-forms");
    assert!(
        again.contains(PDF_MARK),
        "an evicted skill loads whole again"
    );
}

#[test]
fn reading_a_file_counts_as_use_for_the_cap() {
    let mut session = start(builder().max_loaded(2));
    load(&mut session, "pdf-forms");
    load(&mut session, "csv-report");
    call_ok(
        &mut session,
        "read_skill_file",
        json!({"skill": "pdf-forms", "path": "references/fields.md"}),
    );
    session.take_events();
    load(&mut session, "weather");
    assert_eq!(loaded(&session), ["pdf-forms", "weather"]);
    assert_eq!(
        released(&mut session),
        [("csv-report".to_owned(), ReleaseReason::Cap)]
    );
}

#[test]
fn loading_again_counts_as_use_for_the_cap() {
    let mut session = start(builder().max_loaded(2));
    load(&mut session, "pdf-forms");
    load(&mut session, "csv-report");
    let again = load(&mut session, "pdf-forms");
    assert!(again.contains("already loaded"));
    load(&mut session, "weather");
    assert_eq!(loaded(&session), ["pdf-forms", "weather"]);
}

#[test]
fn reading_a_file_of_an_unloaded_skill_does_not_load_it() {
    let mut session = start(builder().max_loaded(2));
    call_ok(
        &mut session,
        "read_skill_file",
        json!({"skill": "pdf-forms", "path": "references/fields.md"}),
    );
    assert!(session.loaded().is_empty());
}

#[test]
fn mentions_respect_the_cap() {
    let mut session = start(builder().max_loaded(1));
    load(&mut session, "pdf-forms");
    session.take_events();
    user(&mut session, "use $csv-report");
    assert_eq!(loaded(&session), ["csv-report"]);
    assert_eq!(
        released(&mut session),
        [("pdf-forms".to_owned(), ReleaseReason::Cap)]
    );
    let request = session.build_request();
    let last = request.messages.last().expect("the injection");
    assert!(last.content.contains(CSV_MARK));
}

#[test]
fn turn_lifetime_with_a_mention_reinjects_in_the_new_turn() {
    let mut session = start(builder().lifetime(Lifetime::Turn));
    user(&mut session, "use $csv-report");
    assert_eq!(loaded(&session), ["csv-report"]);
    let before = session.transcript().len();
    user(&mut session, "again with $csv-report");
    // The new user message releases the old load, the mention injects anew.
    assert_eq!(session.transcript().len(), before + 2);
    assert_eq!(loaded(&session), ["csv-report"]);
}
