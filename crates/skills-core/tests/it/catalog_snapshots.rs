//! Snapshots of the catalog in every format, with and without budgets.

use skills_core::{Budget, Catalog, CatalogFormat, RenderOptions};

use super::support::{FIXTURE_SKILLS, assert_snapshot, fixture_metadata, snapshot_dir};

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
        assert_snapshot(&format!("catalog_{label}{suffix}.txt"), &rendered);
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

/// The comparison is exact: the stored catalog with its final newline
/// dropped, or with one more, or with a trailing space, does not match.
#[test]
fn snapshots_compare_every_byte() {
    let rendered = catalog().render(&RenderOptions::default());
    let stored = std::fs::read(snapshot_dir().join("catalog_xml.txt")).expect("snapshot exists");
    assert_eq!(
        skills_testkit::snapshot::compare(&stored, rendered.as_bytes()),
        Ok(())
    );
    assert!(rendered.ends_with('\n'), "the catalog ends with a newline");

    let trimmed = rendered.strip_suffix('\n').expect("ends with a newline");
    let err = skills_testkit::snapshot::compare(&stored, trimmed.as_bytes())
        .expect_err("a dropped final newline must fail");
    assert!(err.contains("without its last 1 byte(s)"), "{err}");

    let extra = format!("{rendered}\n");
    assert!(skills_testkit::snapshot::compare(&stored, extra.as_bytes()).is_err());
    let spaced = rendered.replacen('\n', " \n", 1);
    assert!(skills_testkit::snapshot::compare(&stored, spaced.as_bytes()).is_err());
}
