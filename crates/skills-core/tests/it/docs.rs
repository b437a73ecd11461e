//! A skill's documents (F-PRV-10) over an in-code provider: listing, lookup,
//! reads, and the unknown-document error.

use skills_core::{
    ErrorKind, InCodeProvider, LineRange, ResourceEntry, ResourceListing, ResourcePath,
    SkillProvider, define_skill,
};
use skills_core::{docs_in, find_doc, list_docs, read_doc, read_doc_range};

fn provider() -> InCodeProvider {
    let skill = define_skill("pdf-tools", "Works with PDFs. Use for PDF files.")
        .body("Read the docs.")
        .resource("references/zeta.md", "zeta\n")
        .resource("references/forms/fill.txt", "one\ntwo\nthree\n")
        .resource("references/diagram.png", "not a doc")
        .resource("notes.md", "notes\n")
        .resource("README.TXT", "readme\n")
        .resource("scripts/run.md", "not a doc either\n")
        .resource("assets/template.txt", "asset\n")
        .resource("helper.py", "print()\n")
        .build()
        .expect("valid skill");
    let other = define_skill("plain", "No documents. Use never.")
        .resource("scripts/x.sh", "echo\n")
        .build()
        .expect("valid skill");
    InCodeProvider::new([skill, other]).expect("provider")
}

const DOCS: [&str; 4] = [
    "README.TXT",
    "notes.md",
    "references/forms/fill.txt",
    "references/zeta.md",
];

fn names(docs: &[ResourcePath]) -> Vec<&str> {
    docs.iter().map(ResourcePath::as_str).collect()
}

#[test]
fn lists_docs_beside_skill_md_and_under_references_sorted_by_path() {
    let provider = provider();
    let skill = pollster::block_on(provider.get("pdf-tools")).expect("get");
    assert_eq!(names(&list_docs(&skill)), DOCS);
    let plain = pollster::block_on(provider.get("plain")).expect("get");
    assert!(list_docs(&plain).is_empty());
}

#[test]
fn the_listing_order_does_not_matter() {
    let entry = |p: &str| ResourceEntry::new(ResourcePath::parse(p).expect("path"), None);
    let forward = ResourceListing::new(
        vec![entry("b.md"), entry("references/a.md"), entry("A.txt")],
        100,
    );
    // Reversed by hand: `ResourceListing::new` would sort it again.
    let mut backward = forward.clone();
    backward.entries.reverse();
    assert_eq!(
        names(&docs_in(&forward)),
        ["A.txt", "b.md", "references/a.md"]
    );
    assert_eq!(docs_in(&forward), docs_in(&backward));
}

#[test]
fn reads_a_doc_by_name() {
    let provider = provider();
    pollster::block_on(async {
        let doc = read_doc(&provider, "pdf-tools", "references/forms/fill.txt")
            .await
            .expect("read");
        assert_eq!(doc.text, "one\ntwo\nthree\n");
        let part = read_doc_range(
            &provider,
            "pdf-tools",
            "references/forms/fill.txt",
            LineRange::parse("2:2").ok(),
        )
        .await
        .expect("read range");
        assert_eq!(part.text, "two\n");
        // Through a trait object too.
        let dynamic: &dyn SkillProvider = &provider;
        let doc = read_doc(dynamic, "pdf-tools", "README.TXT")
            .await
            .expect("read");
        assert_eq!(doc.text, "readme\n");
    });
}

#[test]
fn unknown_doc_is_resource_not_found_listing_the_docs() {
    let provider = provider();
    pollster::block_on(async {
        for unknown in [
            "missing.md",
            "zeta.md",
            "references/zeta",
            "../secret.md",
            "",
        ] {
            let err = read_doc(&provider, "pdf-tools", unknown)
                .await
                .expect_err(unknown);
            assert_eq!(err.kind(), ErrorKind::ResourceNotFound, "{unknown}: {err}");
            assert!(
                err.message().contains(&format!("`{unknown}`")),
                "the message names the doc: {err}"
            );
            assert!(err.message().contains("pdf-tools"), "{err}");
            assert_eq!(err.available(), DOCS, "{unknown}");
            assert!(err.to_string().contains("available: README.TXT, notes.md"));
        }
    });
}

#[test]
fn existing_files_that_are_not_docs_are_refused_with_a_reason() {
    let provider = provider();
    pollster::block_on(async {
        for not_doc in [
            "scripts/run.md",
            "assets/template.txt",
            "helper.py",
            "references/diagram.png",
        ] {
            // The file exists and `read_resource` would return it ...
            assert!(
                provider
                    .read_resource("pdf-tools", not_doc, None)
                    .await
                    .is_ok(),
                "{not_doc}"
            );
            // ... but it is not a document.
            let err = read_doc(&provider, "pdf-tools", not_doc)
                .await
                .expect_err(not_doc);
            assert_eq!(err.kind(), ErrorKind::ResourceNotFound);
            assert!(err.message().contains("references/"), "{err}");
            assert_eq!(err.available(), DOCS);
        }
    });
}

#[test]
fn unknown_skill_is_skill_not_found() {
    let provider = provider();
    let err = pollster::block_on(read_doc(&provider, "nope", "notes.md")).expect_err("no skill");
    assert_eq!(err.kind(), ErrorKind::SkillNotFound);
    assert_eq!(err.available(), ["pdf-tools", "plain"]);
}

#[test]
fn a_truncated_listing_still_accepts_doc_shaped_names() {
    let provider = provider();
    let mut skill = std::sync::Arc::unwrap_or_clone(
        pollster::block_on(provider.get("pdf-tools")).expect("get"),
    );
    skill.resources = ResourceListing::new(skill.resources.entries.clone(), 1);
    assert!(skill.resources.omitted > 0);
    let found = find_doc(&skill, "references/not-listed.md").expect("doc-shaped");
    assert_eq!(found.as_str(), "references/not-listed.md");
    let err = find_doc(&skill, "scripts/x.sh").expect_err("not a doc");
    assert_eq!(err.kind(), ErrorKind::ResourceNotFound);
}
