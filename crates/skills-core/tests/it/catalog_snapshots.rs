//! Snapshots of the catalog in every format, with and without budgets.

use skills_core::{Budget, Catalog, CatalogFormat, RenderOptions};

use super::support::{FIXTURE_SKILLS, fixture_metadata, snapshot_settings};

const FORMATS: [(CatalogFormat, &str); 3] = [
    (CatalogFormat::Xml, "xml"),
    (CatalogFormat::Markdown, "markdown"),
    (CatalogFormat::Json, "json"),
];

fn catalog() -> Catalog {
    let order: Vec<usize> = (0..FIXTURE_SKILLS.len()).collect();
    Catalog::new(fixture_metadata(&order))
}

fn snapshot_all(suffix: &str, budget: Budget) {
    let catalog = catalog();
    for (format, label) in FORMATS {
        let options = RenderOptions::default()
            .with_format(format)
            .with_budget(budget);
        let rendered = catalog.render(&options);
        snapshot_settings().bind(|| {
            insta::assert_snapshot!(format!("catalog_{label}{suffix}"), rendered);
        });
    }
}

#[test]
fn fixture_catalog_has_six_skills_one_hidden() {
    let catalog = catalog();
    assert_eq!(
        catalog.names().collect::<Vec<_>>(),
        vec![
            "api-review",
            "café-menu",
            "deploy-prod",
            "html-to-markdown",
            "pdf-tools",
            "zettel-notes"
        ]
    );
    let hidden: Vec<_> = catalog
        .entries()
        .iter()
        .filter(|m| m.extensions.disable_model_invocation)
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(hidden, vec!["deploy-prod"]);
    for (format, _) in FORMATS {
        let out = catalog.render(&RenderOptions::default().with_format(format));
        assert!(!out.contains("deploy-prod"), "{out}");
    }
}

#[test]
fn unlimited() {
    snapshot_all("", Budget::unlimited());
}

#[test]
fn char_budget() {
    snapshot_all("_chars_1000", Budget::chars(1000));
}

#[test]
fn token_budget() {
    snapshot_all("_tokens_200", Budget::tokens(200));
}

#[test]
fn description_cap() {
    snapshot_all(
        "_description_cap_40",
        Budget::unlimited().with_description_cap(40),
    );
}

#[test]
fn custom_load_tool_is_named_in_the_guardrail() {
    let out = catalog().render(&RenderOptions::default().with_load_tool("activate_skill"));
    assert!(
        out.contains("call `activate_skill` with the skill's name"),
        "{out}"
    );
    assert!(!out.contains("load_skill"));
}
