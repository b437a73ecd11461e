//! Load state belongs to one session of one agent: a sub-agent's loads never
//! reach its coordinator, and two sessions of one agent do not share loads.

use std::sync::Arc;

use serde_json::json;
use skills_agent::{Agent, Dispatch, Message, ModelRequest, ToolCall};
use skills_core::SkillProvider;

use super::support::{
    CSV_MARK, PDF_MARK, call_ok, library, plain_tool, request_json, start_agent, swap_provider,
    tool_call, user,
};

fn assert_clean(requests: &[ModelRequest], needles: &[&str]) {
    for (i, request) in requests.iter().enumerate() {
        let text = request_json(request);
        for needle in needles {
            assert!(
                !text.contains(needle),
                "coordinator request {i} contains {needle:?}"
            );
        }
    }
}

#[test]
fn sub_agent_loads_never_reach_the_coordinator() {
    let provider: Arc<dyn SkillProvider> = swap_provider(library());
    let coordinator = Agent::builder("coordinator", provider.clone())
        .instructions("You delegate work to a helper.")
        .tool(plain_tool("delegate"))
        .build()
        .expect("coordinator builds");
    let helper = Agent::builder("helper", provider)
        .instructions("You do the work.")
        .build()
        .expect("helper builds");

    let mut boss = start_agent(&coordinator);
    let mut requests = Vec::new();
    user(&mut boss, "Fill in this PDF form and summarise the CSV.");
    requests.push(boss.build_request());

    let delegate: ToolCall = tool_call("delegate", json!({"task": "fill the form"}));
    boss.push_assistant(Message::assistant_with_calls("", vec![delegate.clone()]));
    let dispatched = pollster::block_on(boss.handle_tool_call(&delegate));
    assert_eq!(dispatched, Dispatch::External);

    // The helper runs its own session over the same provider.
    let mut worker = start_agent(&helper);
    user(&mut worker, "fill the form");
    let body = call_ok(&mut worker, "load_skill", json!({"name": "pdf-forms"}));
    assert!(body.contains(PDF_MARK));
    call_ok(&mut worker, "load_skill", json!({"name": "csv-report"}));
    let file = call_ok(
        &mut worker,
        "read_skill_file",
        json!({"skill": "pdf-forms", "path": "references/fields.md"}),
    );
    worker.push_assistant(Message::assistant("The form is filled."));
    assert_eq!(worker.loaded().len(), 2);

    boss.push_tool_result(
        &delegate.id,
        "delegate",
        "The helper filled the form.",
        false,
    );
    requests.push(boss.build_request());
    user(&mut boss, "Thanks. Anything else?");
    requests.push(boss.build_request());

    assert_clean(
        &requests,
        &[
            PDF_MARK,
            CSV_MARK,
            "Field names are case sensitive",
            "skills.injection",
        ],
    );
    // The needles are real: they are in the helper's own request.
    assert!(file.contains("Field names are case sensitive"), "{file}");
    let helper_request = request_json(&worker.build_request());
    assert!(helper_request.contains(PDF_MARK) && helper_request.contains(CSV_MARK));
    assert!(boss.loaded().is_empty(), "the coordinator loaded nothing");
    assert!(boss.state().is_empty());
    assert!(
        boss.take_events().is_empty(),
        "the helper's events leaked to the coordinator"
    );
    assert!(
        boss.transcript().iter().all(|m| m.metadata.is_empty()),
        "the coordinator's transcript carries skill metadata"
    );
}

#[test]
fn two_sessions_of_one_agent_do_not_share_loads() {
    let provider: Arc<dyn SkillProvider> = swap_provider(library());
    let agent = Agent::builder("assistant", provider)
        .search(true)
        .build()
        .expect("agent builds");
    let mut first = start_agent(&agent);
    let mut second = start_agent(&agent);

    user(&mut first, "fill a pdf");
    call_ok(&mut first, "search_skills", json!({"query": "pdf form"}));
    call_ok(&mut first, "load_skill", json!({"name": "pdf-forms"}));
    assert_eq!(first.loaded().len(), 1);

    user(&mut second, "fill a pdf too");
    let request = second.build_request();
    assert!(!request_json(&request).contains(PDF_MARK));
    assert!(second.loaded().is_empty());
    // The second session's own load returns the whole body, not "already loaded".
    let body = call_ok(&mut second, "load_skill", json!({"name": "pdf-forms"}));
    assert!(body.contains(PDF_MARK), "{body}");
    assert!(!body.contains("already loaded"), "{body}");

    // And the first session is unaffected by the second's work.
    let again = call_ok(&mut first, "load_skill", json!({"name": "pdf-forms"}));
    assert!(again.contains("already loaded"), "{again}");
    assert_eq!(first.loaded(), second.loaded());
    assert_ne!(first.transcript().len(), 0);
    assert_ne!(first.transcript(), second.transcript());
}
