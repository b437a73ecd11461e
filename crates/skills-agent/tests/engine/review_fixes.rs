//! Regressions for behaviour fixed after review: tool lists that must not
//! move, docs that must come back after they leave the view, budgets on what
//! one result may carry, and user messages that must not be half-recorded.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use skills_agent::{Agent, CatalogMode, Surface};
use skills_core::{
    Catalog, Error, ErrorKind, InCodeProvider, LineRange, ResourceContent, Skill, SkillProvider,
    define_skill,
};

use super::support::{
    SetSkills, builder, builder_with, call_err, call_ok, deploy_prod, pdf_forms, sized, start,
    start_agent, tool_names, user,
};

#[test]
fn skill_tools_stay_when_every_skill_is_removed() {
    let (builder, provider) = builder_with(vec![pdf_forms()]);
    let mut session = start(builder);
    user(&mut session, "hi");
    let before = session.build_request();
    assert!(tool_names(&before).contains(&"load_skill".to_owned()));
    provider.set_skills(Vec::new());
    pollster::block_on(session.refresh_catalog())
        .expect("lists")
        .expect("a removal is announced");
    let after = session.build_request();
    assert_eq!(
        before.tools, after.tools,
        "tools come first: they must not move"
    );
}

#[test]
fn a_library_of_user_only_skills_still_offers_the_read_tool() {
    let (builder, _) = builder_with(vec![deploy_prod()]);
    let mut session = start(builder);
    user(&mut session, "please run $deploy-prod");
    let request = session.build_request();
    assert!(
        tool_names(&request).contains(&"read_skill_file".to_owned()),
        "the injected body points at read_skill_file, so it must be offered"
    );
    let text = call_ok(
        &mut session,
        "read_skill_file",
        json!({"skill": "deploy-prod", "path": "references/checklist.md"}),
    );
    assert!(text.contains("Tests pass"));
}

#[test]
fn a_doc_named_again_after_compaction_is_delivered_again() {
    let mut session = start(builder().surface(Surface::Trpc));
    user(&mut session, "fill the form");
    let first = call_ok(
        &mut session,
        "skill_load",
        json!({"skill": "pdf-forms", "docs": ["references/fields.md"]}),
    );
    assert!(first.contains("case sensitive"));
    session.compact("The user wants a form filled.");
    // Adding nothing reports the selection: empty.
    let selection = call_ok(
        &mut session,
        "skill_select_docs",
        json!({"skill": "pdf-forms", "mode": "add"}),
    );
    assert_eq!(
        selection,
        r#"{"skill":"pdf-forms","mode":"add","selected_docs":[],"include_all_docs":false}"#,
        "a compaction ends doc selections"
    );
    let again = call_ok(
        &mut session,
        "skill_select_docs",
        json!({"skill": "pdf-forms", "docs": ["references/fields.md"]}),
    );
    assert!(again.contains("case sensitive"), "{again}");
}

#[test]
fn include_all_docs_is_bounded_per_result() {
    let mut skill = define_skill("many-docs", "Has many docs. Use for budget tests.").body("Body.");
    for i in 0..40 {
        skill = skill.resource(format!("references/doc-{i:02}.md"), format!("doc {i}\n"));
    }
    let (builder, _) = builder_with(vec![skill.build().expect("valid")]);
    let mut session = start(builder.surface(Surface::Trpc));
    user(&mut session, "read everything");
    let text = call_ok(
        &mut session,
        "skill_load",
        json!({"skill": "many-docs", "include_all_docs": true}),
    );
    assert_eq!(text.matches("<skill_doc ").count(), 32);
    assert!(text.contains("Selected but not shown"), "{text}");
    assert!(text.contains("references/doc-39.md"));
    // Naming a held-back doc delivers it.
    let named = call_ok(
        &mut session,
        "skill_select_docs",
        json!({"skill": "many-docs", "docs": ["references/doc-39.md"]}),
    );
    assert!(named.contains("doc 39"));
}

#[test]
fn unknown_skill_errors_list_at_most_twenty_names() {
    let skills = (0..30)
        .map(|i| sized(&format!("skill-{i:02}"), 50))
        .collect();
    let (builder, _) = builder_with(skills);
    let mut session = start(builder);
    user(&mut session, "hi");
    let text = call_err(&mut session, "load_skill", json!({"name": "nope"}));
    assert!(
        text.contains("skill-19") && !text.contains("skill-20"),
        "{text}"
    );
    assert!(text.contains("and 10 more"), "{text}");
}

#[test]
fn on_demand_errors_point_to_search_instead_of_listing() {
    let skills = (0..30)
        .map(|i| sized(&format!("skill-{i:02}"), 50))
        .collect();
    let (builder, _) = builder_with(skills);
    let mut session = start(builder.catalog(CatalogMode::OnDemand));
    user(&mut session, "hi");
    let text = call_err(&mut session, "load_skill", json!({"name": "nope"}));
    assert!(!text.contains("skill-00"), "{text}");
    assert!(
        text.contains("30 skills") && text.contains("search_skills"),
        "{text}"
    );
}

/// A provider whose `get` fails for one skill (an I/O error, not "unknown").
#[derive(Debug)]
struct FailingGet {
    inner: InCodeProvider,
}

#[async_trait]
impl SkillProvider for FailingGet {
    async fn list(&self) -> skills_core::Result<Catalog> {
        self.inner.list().await
    }

    async fn get(&self, name: &str) -> skills_core::Result<Arc<Skill>> {
        if name == "pdf-forms" {
            return Err(Error::new(ErrorKind::Io, "disk unplugged"));
        }
        self.inner.get(name).await
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> skills_core::Result<ResourceContent> {
        self.inner.read_resource(name, path, range).await
    }
}

#[test]
fn a_failed_mention_leaves_the_transcript_untouched() {
    let provider = FailingGet {
        inner: InCodeProvider::new([pdf_forms()]).expect("valid"),
    };
    let agent = Agent::builder("a", Arc::new(provider))
        .build()
        .expect("builds");
    let mut session = start_agent(&agent);
    let err = pollster::block_on(session.push_user("use $pdf-forms")).expect_err("get fails");
    assert_eq!(err.kind(), ErrorKind::Io);
    assert!(
        session.transcript().is_empty(),
        "a retry must not duplicate the message"
    );
}
