//! Compaction (F-DIS-13): a summary starts the view and loaded bodies are
//! re-attached newest first within the budget; shortened or dropped skills
//! are released.

use serde_json::json;
use skills_agent::{CompactionReport, Event, ReattachBudget, ReleaseReason, Role, Session};
use skills_core::{collect_loaded_skill_names, estimate_tokens};

use super::support::{
    CSV_MARK, GIT_MARK, PDF_MARK, WEATHER_MARK, assert_extends, builder, builder_with, call_ok,
    git_commit, library, reply, sized, start, user,
};

fn load(session: &mut Session, name: &str) -> String {
    call_ok(session, "load_skill", json!({ "name": name }))
}

fn budget(per_skill_tokens: usize, total_tokens: usize) -> ReattachBudget {
    ReattachBudget {
        per_skill_tokens,
        total_tokens,
    }
}

fn compaction_releases(session: &mut Session) -> Vec<String> {
    session
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            Event::SkillReleased {
                skill,
                reason: ReleaseReason::Compaction,
            } => Some(skill),
            _ => None,
        })
        .collect()
}

#[test]
fn compact_reattaches_newest_first_and_the_view_starts_at_the_summary() {
    let mut session = start(builder());
    user(&mut session, "fill the form, then report");
    load(&mut session, "pdf-forms");
    load(&mut session, "csv-report");
    load(&mut session, "weather");
    reply(&mut session, "All done.");
    let loaded = session.loaded();

    let report = session.compact("The user filled a form and got a report.");
    assert_eq!(report.reattached, ["weather", "csv-report", "pdf-forms"]);
    assert!(report.truncated.is_empty() && report.dropped.is_empty());
    assert_eq!(session.loaded(), loaded, "nothing was released");

    let request = session.build_request();
    assert_eq!(
        request.system.len(),
        1,
        "re-attached bodies need no fallback"
    );
    assert_eq!(request.messages.len(), 2);
    let summary = &request.messages[0];
    assert_eq!(summary.role, Role::System);
    assert!(summary.content.starts_with("<conversation_summary>"));
    assert!(summary.content.contains("filled a form"));
    let reattached = &request.messages[1].content;
    let at = |mark: &str| reattached.find(mark).expect("body re-attached");
    assert!(at(WEATHER_MARK) < at(CSV_MARK) && at(CSV_MARK) < at(PDF_MARK));

    let events = session.take_events();
    assert!(events.contains(&Event::Compacted(report)), "{events:?}");
    // The transcript keeps everything; only the view moved.
    assert!(session.transcript().len() > 2);
}

#[test]
fn requests_after_a_compaction_grow_append_only() {
    let mut session = start(builder());
    user(&mut session, "go");
    load(&mut session, "pdf-forms");
    session.compact("summary");
    let first = session.build_request();
    user(&mut session, "continue");
    load(&mut session, "csv-report");
    let second = session.build_request();
    assert_extends(&first, &second);
}

#[test]
fn bodies_over_the_per_skill_budget_are_shortened_and_released() {
    let (builder, _provider) = builder_with(vec![git_commit(), sized("big-manual", 4_000)]);
    let mut session = start(builder.reattach_budget(budget(60, 10_000)));
    let small = load(&mut session, "git-commit");
    let full = load(&mut session, "big-manual");
    assert!(estimate_tokens(&full) > 60);
    session.take_events();

    let report = session.compact("summary");
    assert_eq!(report.reattached, ["git-commit"]);
    assert_eq!(report.truncated, ["big-manual"]);
    assert!(report.dropped.is_empty());
    assert!(
        report.tokens <= estimate_tokens(&small) + 60,
        "the shortened body fits its budget: {report:?}"
    );
    assert_eq!(compaction_releases(&mut session), ["big-manual"]);
    let loaded: Vec<String> = session.loaded().into_iter().collect();
    assert_eq!(loaded, ["git-commit"]);

    let request = session.build_request();
    let reattached = &request.messages[1].content;
    assert!(reattached.contains(GIT_MARK));
    assert!(reattached.contains("[shortened"), "{reattached}");
    assert!(reattached.contains("big-manual"), "{reattached}");
    assert!(reattached.len() < full.len(), "the big body was cut");

    // A new load returns the whole body again.
    let again = load(&mut session, "big-manual");
    assert_eq!(again, full);
}

#[test]
fn shortened_bodies_fit_the_per_skill_budget() {
    let (builder, _provider) =
        builder_with(vec![sized("manual-a", 3_000), sized("manual-b", 3_000)]);
    let mut session = start(builder.reattach_budget(budget(100, 10_000)));
    load(&mut session, "manual-a");
    load(&mut session, "manual-b");
    let report = session.compact("summary");
    assert_eq!(report.truncated, ["manual-b", "manual-a"]);
    assert!(report.tokens <= 200, "{report:?}");
}

#[test]
fn skills_over_the_total_budget_are_dropped_oldest_first() {
    let mut session = start(builder());
    let pdf = load(&mut session, "pdf-forms");
    let csv = load(&mut session, "csv-report");
    let weather = load(&mut session, "weather");
    let total = estimate_tokens(&weather) + estimate_tokens(&csv);
    assert!(estimate_tokens(&pdf) > 0);

    let (builder, _provider) = builder_with(library());
    let mut session = start(builder.reattach_budget(budget(10_000, total)));
    load(&mut session, "pdf-forms");
    load(&mut session, "csv-report");
    load(&mut session, "weather");
    session.take_events();
    let report = session.compact("summary");
    assert_eq!(
        report,
        CompactionReport {
            reattached: vec!["weather".to_owned(), "csv-report".to_owned()],
            truncated: vec![],
            dropped: vec!["pdf-forms".to_owned()],
            tokens: total,
        }
    );
    assert_eq!(compaction_releases(&mut session), ["pdf-forms"]);
    assert!(!session.loaded().contains("pdf-forms"));
    assert_eq!(
        session.loaded(),
        collect_loaded_skill_names(session.transcript())
    );

    let request = session.build_request();
    let reattached = &request.messages[1].content;
    assert!(!reattached.contains(PDF_MARK));
    assert!(reattached.contains("No longer loaded"), "{reattached}");
    assert!(reattached.contains("pdf-forms"), "{reattached}");
    assert_eq!(request.system.len(), 1, "a dropped skill gets no fallback");
    let again = load(&mut session, "pdf-forms");
    assert!(
        again.contains(PDF_MARK),
        "a dropped skill loads whole again"
    );
}

#[test]
fn recently_used_skills_are_reattached_first() {
    let (builder, _provider) = builder_with(library());
    let mut session = start(builder.reattach_budget(budget(10_000, 10_000)));
    load(&mut session, "pdf-forms");
    load(&mut session, "csv-report");
    call_ok(
        &mut session,
        "read_skill_file",
        json!({"skill": "pdf-forms", "path": "references/fields.md"}),
    );
    let report = session.compact("summary");
    assert_eq!(report.reattached, ["pdf-forms", "csv-report"]);
}

#[test]
fn compacting_with_nothing_loaded_appends_only_the_summary() {
    let mut session = start(builder());
    user(&mut session, "hi");
    reply(&mut session, "hello");
    let length = session.transcript().len();
    let report = session.compact("greetings were exchanged");
    assert_eq!(report, CompactionReport::default());
    assert_eq!(session.transcript().len(), length + 1);
    let request = session.build_request();
    assert_eq!(request.messages.len(), 1);
    assert!(
        request.messages[0]
            .content
            .contains("greetings were exchanged")
    );
}

#[test]
fn a_second_compaction_starts_the_view_at_the_newest_summary() {
    let mut session = start(builder());
    load(&mut session, "pdf-forms");
    session.compact("first summary");
    user(&mut session, "more work");
    session.compact("second summary");
    let request = session.build_request();
    assert!(request.messages[0].content.contains("second summary"));
    assert!(
        request
            .messages
            .iter()
            .all(|m| !m.content.contains("first summary"))
    );
    assert!(request.messages[1].content.contains(PDF_MARK));
    assert_eq!(
        session.loaded(),
        collect_loaded_skill_names(session.transcript())
    );
}

/// A counter configured at run time (as a BPE tokenizer loaded from a file
/// would be): one token per `chars_per_token` characters.
#[derive(Debug)]
struct RuntimeCounter {
    chars_per_token: usize,
}

impl skills_core::TokenCounter for RuntimeCounter {
    fn count(&self, text: &str) -> usize {
        text.chars().count().div_ceil(self.chars_per_token)
    }
}

#[test]
fn budgets_count_with_the_agents_counter_object() {
    use skills_core::TokenCounter as _;
    // One token per character: eight times the default estimate's count.
    let counter = std::sync::Arc::new(RuntimeCounter { chars_per_token: 1 });
    let (builder, _provider) = builder_with(vec![git_commit(), sized("big-manual", 2_000)]);
    let mut session = start(
        builder
            .token_counter(counter.clone())
            .reattach_budget(budget(1_000, 10_000)),
    );
    let small = load(&mut session, "git-commit");
    let full = load(&mut session, "big-manual");
    // Under the default estimate both bodies would fit the per-skill budget.
    assert!(estimate_tokens(&full) <= 1_000 && counter.count(&full) > 1_000);
    let report = session.compact("summary");
    assert_eq!(report.reattached, ["git-commit"]);
    assert_eq!(report.truncated, ["big-manual"]);
    assert!(report.tokens <= counter.count(&small) + 1_000, "{report:?}");
    assert!(report.tokens > counter.count(&small), "{report:?}");
}
