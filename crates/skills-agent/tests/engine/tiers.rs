//! Visibility tiers, requirements and app-declared loads (issue 23): what the
//! model sees is decided by the app's policy without touching the skills, and
//! declared loads arrive as the model's own load calls before the first model
//! call.

use std::sync::Arc;

use serde_json::json;
use skills_agent::{Event, Role, Session};
use skills_core::{Extensions, InCodeSkill, Probe, Tier, VisibilityPolicy, define_skill};

use super::support::{
    CSV_MARK, DEPLOY_MARK, PDF_MARK, SetSkills, WEATHER_MARK, builder_with, call_err, call_ok,
    full_library, library, plain_tool, start, user,
};

/// A machine with `git` and `HOME` only.
struct Machine;

impl Probe for Machine {
    fn has_bin(&self, name: &str) -> bool {
        name == "git"
    }
    fn has_env(&self, name: &str) -> bool {
        name == "HOME"
    }
    fn os(&self) -> &str {
        "linux"
    }
}

fn needy(name: &str, bins: &[&str], tools: &[&str]) -> InCodeSkill {
    let mut extensions = Extensions::default();
    extensions.requires.bins = bins.iter().map(|b| (*b).to_owned()).collect();
    extensions.requires.tools = tools.iter().map(|t| (*t).to_owned()).collect();
    define_skill(name, format!("Needs things ({name}). Use for setup tests."))
        .body(format!("{name} body"))
        .extensions(extensions)
        .build()
        .expect("valid skill")
}

fn system(session: &Session) -> String {
    session.build_request().system[0].text.clone()
}

#[test]
fn tiers_decide_the_catalog_and_the_model_s_loads() {
    let policy = VisibilityPolicy::new()
        .with_tier("pdf-forms", Tier::Pinned)
        .with_tier("csv-report", Tier::NameOnly)
        .with_tier("weather", Tier::Off)
        .with_tier("deploy-prod", Tier::Listed)
        .with_tier("git-commit", Tier::Manual);
    let mut session = start(builder_with(full_library()).0.visibility(policy));
    let text = system(&session);
    // What the session lists is what the prompt shows: not `off`, not `manual`.
    let listed: Vec<&str> = session.listed_skills().collect();
    assert!(listed.contains(&"pdf-forms") && listed.contains(&"csv-report"));
    assert!(!listed.contains(&"weather") && !listed.contains(&"git-commit"));
    assert!(session.pinned_catalog().contains("weather"));
    assert!(text.contains("<skill name=\"pdf-forms\">Fills"), "{text}");
    assert!(text.contains("<skill name=\"csv-report\"/>"), "{text}");
    assert!(
        text.contains("<skill name=\"deploy-prod\">Deploys"),
        "{text}"
    );
    assert!(
        !text.contains("weather") && !text.contains("git-commit"),
        "{text}"
    );

    // Off is unknown, even by mention; manual loads only by mention.
    let err = call_err(&mut session, "load_skill", json!({"name": "weather"}));
    assert!(err.contains("no skill is named `weather`"), "{err}");
    assert!(
        !err.contains("weather,") && err.contains("csv-report"),
        "{err}"
    );
    let err = call_err(&mut session, "load_skill", json!({"name": "git-commit"}));
    assert!(err.contains("can only be invoked by the user"), "{err}");
    let length = session.transcript().len();
    user(&mut session, "Use $weather please.");
    assert_eq!(
        session.transcript().len(),
        length + 1,
        "no injection for off"
    );
    assert!(
        !session
            .transcript()
            .iter()
            .any(|m| m.content.contains(WEATHER_MARK))
    );
    // The policy beats the skill's own `disable-model-invocation`.
    let body = call_ok(&mut session, "load_skill", json!({"name": "deploy-prod"}));
    assert!(body.contains(DEPLOY_MARK), "{body}");
    // A name-only skill loads like any listed one.
    let body = call_ok(&mut session, "load_skill", json!({"name": "csv-report"}));
    assert!(body.contains(CSV_MARK), "{body}");
}

#[test]
fn unmet_requirements_keep_a_skill_out_and_say_what_is_missing() {
    let mut skills = library();
    skills.push(needy("jq-report", &["git", "jq"], &[]));
    skills.push(needy("git-only", &["git"], &["get_weather"]));
    skills.push(needy("slack-post", &[], &["post_to_slack"]));
    let builder = builder_with(skills)
        .0
        .pool_tool(plain_tool("get_weather"))
        .requirements_probe(Arc::new(Machine));
    let mut session = start(builder);
    let text = system(&session);
    assert!(text.contains("<skill name=\"git-only\">"), "{text}");
    assert!(
        !text.contains("jq-report") && !text.contains("slack-post"),
        "{text}"
    );
    let err = call_err(&mut session, "load_skill", json!({"name": "jq-report"}));
    assert!(
        err.contains("the skill `jq-report` needs setup on this machine")
            && err.contains("missing bin jq."),
        "{err}"
    );
    let err = call_err(&mut session, "load_skill", json!({"name": "slack-post"}));
    assert!(err.contains("missing tool post_to_slack"), "{err}");
    // A user's mention still loads it: the user may be setting it up.
    user(&mut session, "I installed jq, try $jq-report.");
    assert!(session.loaded().iter().any(|s| s == "jq-report"));

    // Without a probe nothing is checked.
    let mut skills = library();
    skills.push(needy("jq-report", &["jq"], &[]));
    let session = start(builder_with(skills).0);
    assert!(system(&session).contains("<skill name=\"jq-report\">"));
}

#[test]
fn declared_loads_arrive_as_the_model_s_own_calls_before_the_first_model_call() {
    let policy = VisibilityPolicy::new().with_tier("csv-report", Tier::Preloaded);
    let builder = builder_with(full_library())
        .0
        .visibility(policy)
        // deploy-prod is manual: the app may still load it.
        .preload(["pdf-forms", "deploy-prod", "pdf-forms"]);
    let mut session = start(builder);
    let before = session.build_request();
    user(&mut session, "Fill in the form.");
    let messages = session.transcript();
    let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Tool,
            Role::Tool
        ]
    );
    let calls = &messages[1].tool_calls;
    let names: Vec<&str> = calls
        .iter()
        .map(|c| c.arguments["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names, ["pdf-forms", "deploy-prod", "csv-report"]);
    assert!(calls.iter().all(|c| c.name == "load_skill"));
    for (call, result) in calls.iter().zip(&messages[2..]) {
        assert_eq!(result.tool_call_id.as_deref(), Some(call.id.as_str()));
        assert!(!result.is_error, "{}", result.content);
    }
    assert!(messages[2].content.contains(PDF_MARK));
    assert!(messages[3].content.contains(DEPLOY_MARK));
    assert!(messages[4].content.contains(CSV_MARK));
    assert_eq!(
        session.take_events(),
        ["pdf-forms", "deploy-prod", "csv-report"].map(|skill| Event::SkillLoaded {
            skill: skill.to_owned(),
            by_mention: false,
        })
    );
    // The prompt only grew: the system blocks are those of the empty session.
    let after = session.build_request();
    assert_eq!(before.system, after.system);
    // Only before the first model call.
    session.push_assistant(skills_agent::Message::assistant("Done."));
    let length = session.transcript().len();
    user(&mut session, "Thanks.");
    assert_eq!(session.transcript().len(), length + 1);
}

#[test]
fn a_declared_load_that_cannot_happen_loads_nothing() {
    let cases: [(&[&str], VisibilityPolicy, &str); 3] = [
        (
            &["pdf-forms", "nope"],
            VisibilityPolicy::new(),
            "unknown: `nope`",
        ),
        (
            &["pdf-forms", "weather"],
            VisibilityPolicy::new().with_tier("weather", Tier::Off),
            "unknown: `weather`",
        ),
        (
            &["pdf-forms", "jq-report"],
            VisibilityPolicy::new(),
            "missing bin jq",
        ),
    ];
    for (names, policy, expected) in cases {
        let mut skills = library();
        skills.push(needy("jq-report", &["jq"], &[]));
        let builder = builder_with(skills)
            .0
            .visibility(policy)
            .requirements_probe(Arc::new(Machine))
            .preload(names.iter().copied());
        let mut session = start(builder);
        let err = pollster::block_on(session.push_user("go")).expect_err("refused");
        assert!(err.to_string().contains(expected), "{err}");
        assert!(session.transcript().is_empty(), "nothing written");
        assert!(session.take_events().is_empty());
    }
    // More than the cap.
    let builder = builder_with(library())
        .0
        .max_loaded(1)
        .preload(["pdf-forms", "csv-report"]);
    let mut session = start(builder);
    let err = pollster::block_on(session.push_user("go")).expect_err("refused");
    assert!(
        err.to_string()
            .contains("more than the agent keeps loaded (1)"),
        "{err}"
    );
}

#[test]
fn deltas_follow_the_tiers() {
    let policy = VisibilityPolicy::new()
        .with_tier("sql-query", Tier::Off)
        .with_tier("lint-code", Tier::NameOnly);
    let (builder, provider) = builder_with(library());
    let mut session = start(builder.visibility(policy));
    user(&mut session, "hello");
    let mut skills = library();
    for name in ["sql-query", "lint-code"] {
        skills.push(
            define_skill(name, format!("The {name} skill. Use for tests."))
                .body("body")
                .build()
                .expect("valid"),
        );
    }
    provider.set_skills(skills);
    let delta = pollster::block_on(session.refresh_catalog())
        .expect("lists")
        .expect("changed");
    assert_eq!(delta.added, [("lint-code".to_owned(), String::new())]);
    let notice = &session.transcript().last().expect("notice").content;
    assert!(
        notice.contains("lint-code") && !notice.contains("sql-query"),
        "{notice}"
    );
    assert!(!notice.contains("The lint-code skill"), "{notice}");
    assert!(notice.contains("<skill name=\"lint-code\"/>"), "{notice}");
}

#[test]
fn a_mention_and_declared_loads_in_the_first_message() {
    let builder = builder_with(full_library())
        .0
        .lifetime(skills_agent::Lifetime::Once)
        .preload(["pdf-forms", "csv-report"]);
    let mut session = start(builder);
    user(&mut session, "Please $deploy-prod and $csv-report.");
    let roles: Vec<Role> = session.transcript().iter().map(|m| m.role).collect();
    // The message, the declared load (csv-report loads by its mention), then
    // the mentions' injections.
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::User,
            Role::User
        ]
    );
    assert_eq!(session.transcript()[1].tool_calls.len(), 1);
    assert!(session.transcript()[2].content.contains(PDF_MARK));
    // The declared loads are not an answer: nothing retires before the model
    // has answered once.
    assert!(session.retire_once_loads().is_empty());
    let loaded: Vec<String> = session.loaded().into_iter().collect();
    assert_eq!(loaded, ["csv-report", "deploy-prod", "pdf-forms"]);

    // The cap counts the mentions too.
    let builder = builder_with(full_library())
        .0
        .max_loaded(2)
        .preload(["pdf-forms", "csv-report"]);
    let mut session = start(builder);
    let err = pollster::block_on(session.push_user("Now $deploy-prod.")).expect_err("over the cap");
    assert!(
        err.to_string().contains("with 1 the message mentions"),
        "{err}"
    );
    assert!(session.transcript().is_empty());
}
