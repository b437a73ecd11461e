//! `search_skills` (F-DIS-12): ranking over name, description, body and
//! reference docs; on-demand mode without a catalog in the prompt.

use serde_json::json;
use skills_agent::{CatalogMode, Surface};
use skills_core::{InCodeSkill, define_skill};

use super::support::{
    PDF_MARK, assert_extends, builder, builder_with, call_ok, deploy_prod, full_library, reply,
    start, user,
};

/// Four skills that each mention "zebra" in exactly one field.
fn zoo() -> Vec<InCodeSkill> {
    vec![
        define_skill(
            "zebra-care",
            "Looks after striped animals. Use for feeding schedules.",
        )
        .body("Feed twice a day.")
        .build()
        .expect("valid"),
        define_skill(
            "stripe-guide",
            "Identifies a zebra by its stripe pattern. Use for photos.",
        )
        .body("Compare the shoulder stripes.")
        .build()
        .expect("valid"),
        define_skill(
            "savanna-trip",
            "Plans safari trips. Use when the user books a safari.",
        )
        .body("Book the lodge first. Mention the zebra migration season.")
        .build()
        .expect("valid"),
        define_skill(
            "animal-facts",
            "Answers questions about wild animals. Use for trivia.",
        )
        .body("Keep answers short.")
        .resource(
            "references/equids.md",
            "Horses, donkeys and the zebra are equids.\n",
        )
        .build()
        .expect("valid"),
        define_skill(
            "git-helper",
            "Explains git commands. Use for version control.",
        )
        .body("Prefer rebase.")
        .build()
        .expect("valid"),
    ]
}

/// The skill names in a search result, in order.
fn hit_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("<skill name=\""))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn search_ranks_name_then_description_then_body_then_references() {
    let mut session = start(builder_with(zoo()).0.search(true));
    let text = call_ok(&mut session, "search_skills", json!({"query": "zebra"}));
    assert_eq!(
        hit_names(&text),
        ["zebra-care", "stripe-guide", "savanna-trip", "animal-facts"],
        "{text}"
    );
    assert!(
        text.contains("load_skill"),
        "the result says how to load: {text}"
    );
}

#[test]
fn search_limit_caps_the_hits() {
    let mut session = start(builder_with(zoo()).0.search(true));
    let text = call_ok(
        &mut session,
        "search_skills",
        json!({"query": "zebra", "limit": 2}),
    );
    assert_eq!(hit_names(&text), ["zebra-care", "stripe-guide"]);
}

#[test]
fn search_without_matches_says_so() {
    let mut session = start(builder_with(zoo()).0.search(true));
    let text = call_ok(
        &mut session,
        "search_skills",
        json!({"query": "kubernetes"}),
    );
    assert!(text.contains("No skill matches"), "{text}");
}

#[test]
fn search_leaves_out_skills_the_model_may_not_invoke() {
    let mut skills = zoo();
    skills.push(deploy_prod());
    let mut session = start(builder_with(skills).0.search(true));
    let text = call_ok(
        &mut session,
        "search_skills",
        json!({"query": "deploy production main branch checklist"}),
    );
    assert!(
        !hit_names(&text).contains(&"deploy-prod".to_owned()),
        "{text}"
    );
}

#[test]
fn search_names_the_load_tool_of_the_surface() {
    let mut session = start(builder().surface(Surface::Trpc).search(true));
    let text = call_ok(&mut session, "search_skills", json!({"query": "pdf form"}));
    assert_eq!(
        hit_names(&text).first().map(String::as_str),
        Some("pdf-forms")
    );
    assert!(text.contains("`skill_load`"), "{text}");
}

#[test]
fn on_demand_mode_keeps_the_catalog_out_of_the_prompt() {
    let session = start(
        builder_with(full_library())
            .0
            .catalog(CatalogMode::OnDemand),
    );
    let request = session.build_request();
    let system = &request.system[0].text;
    assert!(system.contains("search_skills"), "{system}");
    for name in ["pdf-forms", "csv-report", "weather", "<skill name="] {
        assert!(!system.contains(name), "{name} in the on-demand prompt");
    }
    assert!(
        request.tool("search_skills").is_some(),
        "search is always on"
    );
}

#[test]
fn on_demand_mode_stays_append_only() {
    let mut session = start(
        builder_with(full_library())
            .0
            .catalog(CatalogMode::OnDemand),
    );
    let mut previous = session.build_request();
    let mut check = |session: &mut skills_agent::Session| {
        let next = session.build_request();
        assert_extends(&previous, &next);
        assert_eq!(next.system.len(), 1);
        previous = next;
    };
    user(&mut session, "I need to fill a PDF form");
    check(&mut session);
    call_ok(&mut session, "search_skills", json!({"query": "pdf form"}));
    check(&mut session);
    let body = call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
    assert!(body.contains(PDF_MARK));
    check(&mut session);
    call_ok(
        &mut session,
        "read_skill_file",
        json!({"skill": "pdf-forms", "path": "references/fields.md"}),
    );
    check(&mut session);
    reply(&mut session, "Filled.");
    check(&mut session);
    user(&mut session, "now $csv-report");
    check(&mut session);
}
