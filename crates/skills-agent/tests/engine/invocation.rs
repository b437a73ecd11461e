//! Invocation control (F-DIS-14): `disable-model-invocation` skills load only
//! on the user's `$name` mention; `user-invocable: false` skills are not
//! injected by mention.

use serde_json::json;
use skills_agent::{Event, Role, Session};
use skills_core::{InjectionAction, TaggedMessage};

use super::support::{
    DEPLOY_MARK, INTERNAL_MARK, builder_with, call_err, call_ok, full_library, start, user,
};

fn session() -> Session {
    start(builder_with(full_library()).0)
}

#[test]
fn hidden_skill_is_absent_from_the_catalog() {
    let session = session();
    let request = session.build_request();
    let system = &request.system[0].text;
    assert!(!system.contains("deploy-prod"), "{system}");
    assert!(
        system.contains("<skill name=\"internal-notes\">"),
        "{system}"
    );
    assert!(system.contains("<skill name=\"pdf-forms\">"), "{system}");
}

#[test]
fn model_cannot_load_a_hidden_skill() {
    let mut session = session();
    let err = call_err(&mut session, "load_skill", json!({"name": "deploy-prod"}));
    assert!(err.contains("can only be invoked by the user"), "{err}");
    assert!(err.contains("$deploy-prod"), "{err}");
    assert!(!err.contains(DEPLOY_MARK));
    assert!(session.loaded().is_empty());
}

#[test]
fn user_mention_injects_a_hidden_skill_once() {
    let mut session = session();
    let length = session.transcript().len();
    user(&mut session, "Please $deploy-prod the main branch.");
    assert_eq!(session.transcript().len(), length + 2);
    let injected = session.transcript().last().expect("the injection");
    assert_eq!(injected.role, Role::User);
    assert!(
        injected.content.contains(DEPLOY_MARK),
        "{}",
        injected.content
    );
    assert!(injected.content.contains("The user invoked the skill"));
    let tags = injected.skill_injections();
    assert_eq!(tags.len(), 1);
    assert_eq!(tags[0].action, InjectionAction::Loaded);
    assert_eq!(tags[0].skills, ["deploy-prod"]);
    assert_eq!(
        session.take_events(),
        [Event::SkillLoaded {
            skill: "deploy-prod".to_owned(),
            by_mention: true,
        }]
    );

    // A second mention while loaded adds only the user message.
    let length = session.transcript().len();
    user(&mut session, "Did $deploy-prod finish?");
    assert_eq!(session.transcript().len(), length + 1);
    assert!(session.take_events().is_empty());

    let request = session.build_request();
    let count = request
        .messages
        .iter()
        .filter(|m| m.content.contains(DEPLOY_MARK))
        .count();
    assert_eq!(count, 1);
}

#[test]
fn after_a_mention_the_model_may_use_the_hidden_skill() {
    let mut session = session();
    user(&mut session, "$deploy-prod");
    let file = call_ok(
        &mut session,
        "read_skill_file",
        json!({"skill": "deploy-prod", "path": "references/checklist.md"}),
    );
    assert!(file.contains("Tests pass"), "{file}");
    let again = call_ok(&mut session, "load_skill", json!({"name": "deploy-prod"}));
    assert!(again.contains("already loaded"), "{again}");
}

#[test]
fn user_invocable_false_skills_are_not_injected_by_mention() {
    let mut session = session();
    let length = session.transcript().len();
    user(&mut session, "add to $internal-notes please");
    assert_eq!(session.transcript().len(), length + 1);
    assert!(session.loaded().is_empty());
    // The model may still load it.
    let body = call_ok(
        &mut session,
        "load_skill",
        json!({"name": "internal-notes"}),
    );
    assert!(body.contains(INTERNAL_MARK));
}

#[test]
fn unknown_and_malformed_mentions_are_ignored() {
    let mut session = session();
    let length = session.transcript().len();
    user(
        &mut session,
        "costs $5, see $no-such-skill, not a$pdf-forms nor $Pdf-Forms nor $$csv-report",
    );
    assert_eq!(session.transcript().len(), length + 1);
    assert!(session.loaded().is_empty());
}

#[test]
fn several_mentions_inject_each_skill_in_order() {
    let mut session = session();
    user(
        &mut session,
        "use $csv-report and then $pdf-forms, and $csv-report again",
    );
    let injected: Vec<Vec<String>> = session
        .transcript()
        .iter()
        .flat_map(|m| m.skill_injections())
        .map(|t| t.skills)
        .collect();
    assert_eq!(
        injected,
        vec![vec!["csv-report".to_owned()], vec!["pdf-forms".to_owned()]]
    );
}
