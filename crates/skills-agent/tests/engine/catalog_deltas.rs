//! Catalog deltas (F-DIS-3): a changed skill set is announced by one appended
//! message holding only the changes; the system blocks never change.

use serde_json::json;
use skills_agent::{CatalogDelta, CatalogMode, Event, Role, Session};
use skills_core::{InCodeSkill, define_skill};

use super::support::{
    SetSkills, assert_extends, builder_with, call_err, call_ok, csv_report, deploy_prod,
    git_commit, library, pdf_forms, start, user,
};

const NEW_CSV_DESCRIPTION: &str =
    "Builds summary reports and charts from CSV files. Use for spreadsheets.";

fn sql_query() -> InCodeSkill {
    define_skill(
        "sql-query",
        "Writes and explains SQL queries. Use when the user asks about databases.",
    )
    .body("SQL-QUERY-BODY: check the schema before writing joins.")
    .build()
    .expect("sql-query is valid")
}

fn csv_changed() -> InCodeSkill {
    define_skill("csv-report", NEW_CSV_DESCRIPTION)
        .body("CSV-REPORT-BODY v2")
        .build()
        .expect("csv-report v2 is valid")
}

fn refresh(session: &mut Session) -> Option<CatalogDelta> {
    pollster::block_on(session.refresh_catalog()).expect("the provider lists")
}

#[test]
fn refresh_appends_one_message_with_only_the_changes() {
    let (builder, provider) = builder_with(library());
    let mut session = start(builder);
    user(&mut session, "hello");
    let before = session.build_request();
    let length = session.transcript().len();

    // csv-report changes its description, weather goes, sql-query arrives.
    provider.set_skills(vec![pdf_forms(), csv_changed(), git_commit(), sql_query()]);
    let delta = refresh(&mut session).expect("something changed");
    assert_eq!(
        delta.added,
        [(
            "sql-query".to_owned(),
            "Writes and explains SQL queries. Use when the user asks about databases.".to_owned()
        )]
    );
    assert_eq!(
        delta.changed,
        [("csv-report".to_owned(), NEW_CSV_DESCRIPTION.to_owned())]
    );
    assert_eq!(delta.removed, ["weather"]);

    assert_eq!(
        session.transcript().len(),
        length + 1,
        "exactly one message"
    );
    let notice = session.transcript().last().expect("the delta message");
    assert_eq!(notice.role, Role::System);
    for present in ["sql-query", "csv-report", NEW_CSV_DESCRIPTION, "weather"] {
        assert!(
            notice.content.contains(present),
            "{present}: {}",
            notice.content
        );
    }
    for absent in ["pdf-forms", "git-commit", "Fills PDF forms"] {
        assert!(
            !notice.content.contains(absent),
            "{absent}: {}",
            notice.content
        );
    }

    let after = session.build_request();
    assert_extends(&before, &after);
    assert_eq!(after.messages.len(), before.messages.len() + 1);
    let events = session.take_events();
    assert!(events.contains(&Event::CatalogChanged(delta)), "{events:?}");
}

#[test]
fn refresh_without_changes_appends_nothing() {
    let (builder, provider) = builder_with(library());
    let mut session = start(builder);
    assert!(refresh(&mut session).is_none(), "nothing changed yet");
    provider.set_skills(vec![
        pdf_forms(),
        csv_report(),
        super::support::weather(),
        git_commit(),
        sql_query(),
    ]);
    assert!(refresh(&mut session).is_some());
    let length = session.transcript().len();
    assert!(
        refresh(&mut session).is_none(),
        "the change was announced once"
    );
    assert_eq!(session.transcript().len(), length);
}

#[test]
fn successive_changes_are_announced_relative_to_what_was_said() {
    let (builder, provider) = builder_with(library());
    let mut session = start(builder);
    provider.set_skills({
        let mut skills = library();
        skills.push(sql_query());
        skills
    });
    let first = refresh(&mut session).expect("added");
    assert_eq!(first.added.len(), 1);
    provider.set_skills(library());
    let second = refresh(&mut session).expect("removed");
    assert!(second.added.is_empty() && second.changed.is_empty());
    assert_eq!(second.removed, ["sql-query"]);
    provider.set_skills({
        let mut skills = library();
        skills.push(sql_query());
        skills
    });
    let third = refresh(&mut session).expect("added again");
    assert_eq!(third.added[0].0, "sql-query");
}

#[test]
fn hidden_skills_are_never_announced() {
    let (builder, provider) = builder_with(library());
    let mut session = start(builder);
    provider.set_skills({
        let mut skills = library();
        skills.push(deploy_prod());
        skills
    });
    let length = session.transcript().len();
    assert!(refresh(&mut session).is_none());
    assert_eq!(session.transcript().len(), length);
}

#[test]
fn added_skills_load_and_removed_skills_do_not() {
    let (builder, provider) = builder_with(library());
    let mut session = start(builder);
    provider.set_skills(vec![pdf_forms(), csv_report(), git_commit(), sql_query()]);
    refresh(&mut session);
    let body = call_ok(&mut session, "load_skill", json!({"name": "sql-query"}));
    assert!(body.contains("SQL-QUERY-BODY"), "{body}");
    let err = call_err(&mut session, "load_skill", json!({"name": "weather"}));
    assert!(err.contains("no skill is named `weather`"), "{err}");
    let (_, available) = err.split_once("Available skills:").expect("a hint");
    assert!(available.contains("sql-query"), "{err}");
    assert!(!available.contains("weather"), "{err}");
}

#[test]
fn system_blocks_stay_byte_identical_across_refreshes() {
    let (builder, provider) = builder_with(library());
    let mut session = start(builder);
    let before = session.build_request();
    provider.set_skills(vec![sql_query()]);
    refresh(&mut session);
    provider.set_skills(library());
    refresh(&mut session);
    let after = session.build_request();
    assert_eq!(before.system, after.system);
    assert!(after.system[0].text.contains("weather"));
    assert!(!after.system[0].text.contains("sql-query"));
}

#[test]
fn on_demand_mode_appends_nothing_but_search_finds_new_skills() {
    let (builder, provider) = builder_with(library());
    let mut session = start(builder.catalog(CatalogMode::OnDemand));
    user(&mut session, "hello");
    let before = session.build_request();
    let length = session.transcript().len();
    provider.set_skills({
        let mut skills = library();
        skills.push(sql_query());
        skills
    });
    let delta = refresh(&mut session).expect("the set changed");
    assert_eq!(delta.added.len(), 1);
    assert_eq!(session.transcript().len(), length, "nothing is announced");
    let after = session.build_request();
    assert_extends(&before, &after);

    let hits = call_ok(
        &mut session,
        "search_skills",
        json!({"query": "sql database queries"}),
    );
    assert!(hits.contains("<skill name=\"sql-query\""), "{hits}");
    let body = call_ok(&mut session, "load_skill", json!({"name": "sql-query"}));
    assert!(body.contains("SQL-QUERY-BODY"));
}
