//! [`Library`]: the stateless operations answer exactly as a fresh session
//! does, call for call, in every preset (the MCP server relies on it).

use serde_json::{Value, json};
use skills_agent::{Library, SearchCache, Surface, ToolErrorKind};
use skills_core::SkillProvider;

use super::support::{builder_with, call, full_library, start};

/// Every call below on a fresh session and through [`Library::call`]: the
/// same text, the same error flag.
fn assert_same(surface: &Surface, search: bool, calls: &[(&str, Value)]) {
    let (mut builder, provider) = builder_with(full_library());
    builder = builder.surface(surface.clone());
    if search {
        builder = builder.search(true);
    }
    let provider: std::sync::Arc<dyn SkillProvider> = provider;
    let catalog = pollster::block_on(provider.list()).expect("lists");
    let cache = std::sync::Arc::new(SearchCache::new());
    let mut library = Library::new(&provider, &catalog, surface);
    if search {
        library = library.search(&cache, cache.mark());
    }
    for (tool, arguments) in calls {
        let mut session = start(builder.clone());
        let expected = call(&mut session, tool, arguments.clone());
        let got = pollster::block_on(library.call(tool, arguments))
            .unwrap_or_else(|| panic!("`{tool}` is a stateless operation"));
        let (text, is_error) = match got {
            Ok(text) => (text, false),
            Err(err) => (format!("Error: {err}"), true),
        };
        assert_eq!(
            (text.as_str(), is_error),
            (expected.content.as_str(), expected.is_error),
            "`{tool}` {arguments}"
        );
    }
}

#[test]
fn default_preset_answers_as_a_fresh_session() {
    assert_same(
        &Surface::Default,
        true,
        &[
            ("load_skill", json!({"name": "pdf-forms"})),
            ("load_skill", json!({"name": "nobody"})),
            ("load_skill", json!({"name": "deploy-prod"})),
            ("load_skill", json!({"nme": "pdf-forms"})),
            ("load_skill", json!({"name": "x".repeat(300)})),
            (
                "read_skill_file",
                json!({"skill": "pdf-forms", "path": "references/fields.md"}),
            ),
            (
                "read_skill_file",
                json!({"skill": "pdf-forms", "path": "references/fields.md", "start_line": 2, "end_line": 3}),
            ),
            (
                "read_skill_file",
                json!({"skill": "pdf-forms", "path": "references/fields.md", "start_line": 5, "end_line": 2}),
            ),
            (
                "read_skill_file",
                json!({"skill": "pdf-forms", "path": "../../etc/passwd"}),
            ),
            (
                "read_skill_file",
                json!({"skill": "pdf-forms", "path": "missing.md"}),
            ),
            ("search_skills", json!({"query": "pdf form"})),
            ("search_skills", json!({"query": "q".repeat(2_000)})),
        ],
    );
}

#[test]
fn trpc_preset_answers_as_a_fresh_session() {
    assert_same(
        &Surface::Trpc,
        false,
        &[
            ("skill_list", json!({})),
            ("skill_load", json!({"skill": "pdf-forms"})),
            (
                "skill_load",
                json!({"skill": "pdf-forms", "docs": ["references/fields.md"]}),
            ),
            (
                "skill_load",
                json!({"skill": "pdf-forms", "include_all_docs": true}),
            ),
            (
                "skill_load",
                json!({"skill": "pdf-forms", "docs": ["nope.md"]}),
            ),
            ("skill_list_docs", json!({"skill": "pdf-forms"})),
            ("skill_list_docs", json!({"skill": "nobody"})),
        ],
    );
}

#[test]
fn eino_preset_answers_as_a_fresh_session() {
    assert_same(
        &Surface::Eino(Default::default()),
        false,
        &[
            ("skill", json!({"skill": "weather"})),
            ("skill", json!({"skill": "internal-notes"})),
        ],
    );
}

#[test]
fn session_operations_and_other_tools_are_not_stateless() {
    let provider: std::sync::Arc<dyn SkillProvider> = builder_with(full_library()).1;
    let catalog = pollster::block_on(provider.list()).expect("lists");
    let trpc = Surface::Trpc;
    let library = Library::new(&provider, &catalog, &trpc);
    for tool in [
        "skill_select_docs",
        "skill_list_tools",
        "skill_select_tools",
        "run_skill_command",
        "load_skill",
        "search_skills",
    ] {
        assert!(
            pollster::block_on(library.call(tool, &json!({}))).is_none(),
            "`{tool}` is not a stateless operation of the trpc preset without search"
        );
    }
    let err = pollster::block_on(library.load("deploy-prod")).expect_err("user-only");
    assert_eq!(err.kind(), ToolErrorKind::UnknownSkill);
    assert!(pollster::block_on(library.list_docs("pdf-forms")).is_ok());
    let text = pollster::block_on(library.read("pdf-forms", "references/fields.md", None, None))
        .expect("reads");
    assert!(text.contains("fields.md"), "{text}");
}
