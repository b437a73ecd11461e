//! Snapshots of the catalog in every format, with and without budgets.

use skills_core::{Budget, Catalog, CatalogFormat, RenderOptions};

use super::support::{
    FIXTURE_SKILLS, assert_snapshot, assert_snapshot_in, fixture_metadata, snapshot_dir,
};

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

/// Whether insta accepts `actual` as the stored snapshot `name`: the check
/// runs on a scratch copy of the snapshot's two files, so whatever insta
/// writes on a mismatch (a `.snap.new` for review, or a rewrite under
/// `INSTA_UPDATE=always`) never touches `tests/snapshots`. Accepted means the
/// assertion passed and left the stored bytes as they were.
fn insta_accepts(name: &str, actual: &[u8]) -> bool {
    let (stem, extension) = name.split_once('.').expect("name.extension");
    let scratch = tempfile::tempdir().expect("scratch dir");
    for file in [format!("{stem}.snap"), format!("{stem}.snap.{extension}")] {
        std::fs::copy(snapshot_dir().join(&file), scratch.path().join(&file))
            .unwrap_or_else(|e| panic!("cannot copy snapshot {file}: {e}"));
    }
    let passed = std::panic::catch_unwind(|| assert_snapshot_in(scratch.path(), name, actual));
    let stored = std::fs::read(snapshot_dir().join(format!("{stem}.snap.{extension}")))
        .expect("snapshot exists");
    let after = std::fs::read(scratch.path().join(format!("{stem}.snap.{extension}")))
        .expect("scratch copy exists");
    passed.is_ok() && after == stored
}

/// The comparison is exact: the catalog with its final newline dropped, or
/// with one more, or with a trailing space, does not match its snapshot.
#[test]
fn snapshots_compare_every_byte() {
    let rendered = catalog().render(&RenderOptions::default());
    let stored =
        std::fs::read(snapshot_dir().join("catalog_xml.snap.txt")).expect("snapshot exists");
    assert_eq!(rendered.as_bytes(), stored.as_slice());
    assert!(insta_accepts("catalog_xml.txt", rendered.as_bytes()));

    let trimmed = rendered.strip_suffix('\n').expect("ends with a newline");
    assert!(
        !insta_accepts("catalog_xml.txt", trimmed.as_bytes()),
        "a dropped final newline must fail the comparison"
    );
    let extra = format!("{rendered}\n");
    assert!(!insta_accepts("catalog_xml.txt", extra.as_bytes()));
    let spaced = rendered.replacen('\n', " \n", 1);
    assert!(!insta_accepts("catalog_xml.txt", spaced.as_bytes()));
}
