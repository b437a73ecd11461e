//! Shared fixtures and helpers.

use skills_core::{
    InCodeSkill, Origin, ParseOutcome, SkillMetadata, ValidationOptions, define_skill,
    parse_skill_md,
};

/// Asserts that the insta binary snapshot `name` (`<stem>.<extension>`,
/// stored as `tests/snapshots/<stem>.snap` plus `<stem>.snap.<extension>`)
/// holds exactly `actual`, byte for byte, trailing newlines included.
/// Review changes with `cargo insta review` (or `INSTA_UPDATE=always`).
pub(crate) fn assert_snapshot(name: &str, actual: &str) {
    assert_snapshot_in(&snapshot_dir(), name, actual.as_bytes());
}

/// [`assert_snapshot`] against the snapshots in `dir`.
pub(crate) fn assert_snapshot_in(dir: &std::path::Path, name: &str, actual: &[u8]) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_binary_snapshot!(name, actual.to_vec()));
}

/// Where the snapshot files live.
pub(crate) fn snapshot_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// Parses `src` as `skills/<dir>/SKILL.md`.
pub(crate) fn parse_in_dir(src: &str, dir: &str, options: &ValidationOptions) -> ParseOutcome {
    let file = format!("skills/{dir}/SKILL.md");
    parse_skill_md(src, Origin::new(Some(&file), Some(dir)), options)
}

/// The diagnostics' `Display` forms, one per line.
pub(crate) fn diagnostic_lines(outcome: &ParseOutcome) -> String {
    outcome
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error codes of an outcome, in order.
pub(crate) fn codes(outcome: &ParseOutcome) -> Vec<&'static str> {
    outcome
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect()
}

/// `(directory, SKILL.md text)` for the six fixture skills of the catalog snapshots.
pub(crate) const FIXTURE_SKILLS: &[(&str, &str)] = &[
    (
        "pdf-tools",
        "---\nname: pdf-tools\ndescription: Extracts text and tables from PDF files, fills forms and merges documents. Use when the user mentions PDFs, forms or document extraction.\nlicense: Apache-2.0\nallowed-tools: Read Bash\n---\n# PDF tools\n\nTools:\n- read_pdf\n- fill_form\n",
    ),
    (
        "html-to-markdown",
        "---\nname: html-to-markdown\ndescription: |\n  Converts <html> & <xml> fragments to \"clean\" Markdown.\n  Use when the user's text has 'tags' or entities like &amp;.\n---\nStrip the tags, keep the structure.\n",
    ),
    (
        "deploy-prod",
        "---\nname: deploy-prod\ndescription: Deploys the main branch to production. Only when the user explicitly asks for it.\ndisable-model-invocation: true\n---\nRun the deploy checklist.\n",
    ),
    (
        "café-menu",
        "---\nname: café-menu\ndescription: Plans a café menu with seasonal dishes and prices. Use when asked about menus, recipes or café pricing.\n---\nStart from the season.\n",
    ),
    (
        "api-review",
        "---\nname: api-review\ndescription: Reviews REST and GraphQL API designs for consistency, naming and versioning. Use when the user shares an OpenAPI spec or asks for an API review.\n---\nCheck naming first.\n",
    ),
    (
        "zettel-notes",
        "---\nname: zettel-notes\ndescription: >-\n  Keeps a Zettelkasten of atomic, linked notes: captures ideas as one note\n  each, links them to related notes, suggests tags and finds orphans. Use when\n  the user wants to remember something for later, asks what they wrote about a\n  topic, or wants to connect ideas across notes. Also use for weekly reviews of\n  the note collection and for turning notes into an outline for an article.\nmetadata:\n  author: notes-team\n  version: \"2\"\n---\nOne idea per note.\n",
    ),
];

/// The fixture skills' metadata, parsed in lenient mode (the hidden skill needs an
/// extension field), in the given order.
pub(crate) fn fixture_metadata(order: &[usize]) -> Vec<SkillMetadata> {
    order
        .iter()
        .map(|&i| {
            let (dir, src) = FIXTURE_SKILLS[i];
            let outcome = parse_in_dir(src, dir, &ValidationOptions::lenient());
            assert!(
                outcome.diagnostics.is_empty(),
                "{dir}: {}",
                diagnostic_lines(&outcome)
            );
            outcome.document.expect("fixture parses").metadata
        })
        .collect()
}

/// A valid in-code skill with `body` as its body.
pub(crate) fn in_code(name: &str, description: &str, body: &str) -> InCodeSkill {
    define_skill(name, description)
        .body(body)
        .build()
        .expect("valid in-code skill")
}
