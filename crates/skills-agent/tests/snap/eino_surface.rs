//! The Eino surface: one load tool whose description may carry the catalog.

use std::sync::Arc;

use serde_json::json;
use skills_agent::{
    Agent, EinoOptions, Library, Message, PromptContext, PromptHook, Session, Surface,
};
use skills_core::SkillProvider;
use skills_fs::{FsOptions, FsProvider};

use super::{builder, pretty, run, start};

async fn snapshot_variant(label: &str, options: EinoOptions) {
    let tool = options.tool_name.clone();
    let mut session = start(builder().surface(Surface::Eino(options))).await;
    snap!(format!("eino_{label}_spec"), pretty(&session.tools()));
    let system = session.build_request().system_text();
    snap!(format!("eino_{label}_system"), system);
    let load = run(&mut session, &tool, json!({"skill": "pdf-tools"})).await;
    snap!(format!("eino_{label}_load"), load);
}

#[test]
fn default_options() {
    pollster::block_on(snapshot_variant("default", EinoOptions::default()));
}

#[test]
fn custom_name_and_description_hook() {
    let options = EinoOptions::default()
        .with_tool_name("use_skill")
        .with_description_hook(Arc::new(|catalog: &str, default: &str| {
            format!(
                "Office skills ({} characters of catalog follow).\n{catalog}\n\nDefault text was: {default}",
                catalog.len()
            )
        }));
    pollster::block_on(snapshot_variant("custom", options));
}

#[test]
fn catalog_in_system_prompt() {
    let options = EinoOptions::default().with_catalog_in_description(false);
    pollster::block_on(snapshot_variant("prompt_catalog", options));
}

#[test]
fn errors() {
    pollster::block_on(async {
        let mut session = start(builder().surface(Surface::Eino(EinoOptions::default()))).await;
        let unknown = run(&mut session, "skill", json!({"skill": "pdf"})).await;
        snap!("eino_load_unknown", unknown);
        let wrong_arg = run(&mut session, "skill", json!({"name": "pdf-tools"})).await;
        snap!("eino_load_bad_arguments", wrong_arg);
    });
}

/// A skills root on disk with one skill, `log-analyzer`, and its script.
fn skills_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    let folder = root.path().join("log-analyzer");
    std::fs::create_dir_all(folder.join("scripts")).expect("skill folder");
    std::fs::write(
        folder.join("SKILL.md"),
        "---\nname: log-analyzer\ndescription: Counts errors and warnings in a log file. Use when \
         the user shares a log.\n---\nRun `python3 scripts/analyze.py <log>` with the log's path.\n",
    )
    .expect("SKILL.md");
    std::fs::write(
        folder.join("scripts/analyze.py"),
        "import sys\nprint(open(sys.argv[1]).read().count('ERROR'))\n",
    )
    .expect("script");
    root
}

/// The file system provider over `root`.
async fn fs_provider(root: &tempfile::TempDir) -> Arc<dyn SkillProvider> {
    Arc::new(FsProvider::open([root.path()], FsOptions::default()).await)
}

/// Loads `log-analyzer` from disk on `surface`: the result text, with the
/// temporary root written as `<root>` (it differs on every run).
async fn load_from_disk(surface: Surface, tool: &str, argument: &str) -> (String, String) {
    let root = skills_root();
    let provider = fs_provider(&root).await;
    let mut session =
        start(Agent::builder("assistant", provider.clone()).surface(surface.clone())).await;
    let loaded = run(&mut session, tool, json!({ argument: "log-analyzer" })).await;
    // A server without a session answers the same bytes.
    let catalog = provider.list().await.expect("lists");
    let library = Library::new(&provider, &catalog, &surface);
    let stateless = library
        .call(tool, &json!({ argument: "log-analyzer" }))
        .await
        .expect("a load tool")
        .expect("loads");
    assert!(loaded.ends_with(&stateless), "{loaded}\n---\n{stateless}");
    let dir = root.path().join("log-analyzer").display().to_string();
    (loaded.replace(&dir, "<root>/log-analyzer"), dir)
}

/// Eino's load result names the skill's folder, so the model can run its
/// scripts by absolute path.
#[test]
fn load_names_the_base_directory() {
    pollster::block_on(async {
        let (load, dir) =
            load_from_disk(Surface::Eino(EinoOptions::default()), "skill", "skill").await;
        snap!("eino_base_directory_load", load.clone());
        assert!(std::path::Path::new(&dir).is_absolute(), "{dir}");
        assert!(
            load.contains("Base directory for this skill: <root>/log-analyzer\n<skill name="),
            "{load}"
        );
    });
}

/// The line can be turned off, and is never on other presets.
#[test]
fn base_directory_line_is_optional_and_eino_only() {
    pollster::block_on(async {
        let off = Surface::Eino(EinoOptions::default().with_base_directory(false));
        let (load, _) = load_from_disk(off, "skill", "skill").await;
        assert!(!load.contains("Base directory"), "{load}");
        let (load, _) = load_from_disk(Surface::Default, "load_skill", "name").await;
        assert!(!load.contains("Base directory"), "{load}");
        let (load, _) = load_from_disk(Surface::Trpc, "skill_load", "skill").await;
        assert!(!load.contains("Base directory"), "{load}");
    });
}

/// An in-code skill has no folder: no line.
#[test]
fn in_code_skill_has_no_base_directory() {
    pollster::block_on(async {
        let mut session = start(builder().surface(Surface::Eino(EinoOptions::default()))).await;
        let load = run(&mut session, "skill", json!({"skill": "pdf-tools"})).await;
        assert!(!load.contains("Base directory"), "{load}");
        assert!(load.contains("<skill name=\"pdf-tools\">"), "{load}");
    });
}

/// The prompt hook (Eino's custom system prompt): its text is the stable
/// system block, in place of the default one, with what it was given.
fn hooked(catalog_in_description: bool) -> skills_agent::AgentBuilder {
    let hook: PromptHook = Arc::new(|context: &PromptContext<'_>| {
        format!(
            "You are an office assistant.\n{}\nSkills load with `{}`.\n{}",
            context.instructions, context.load_tool, context.catalog
        )
    });
    builder()
        .surface(Surface::Eino(
            EinoOptions::default().with_catalog_in_description(catalog_in_description),
        ))
        .prompt_hook(hook)
}

/// A conversation of two turns with a load between: the stable system block
/// of every request.
async fn stable_blocks(builder: skills_agent::AgentBuilder) -> Vec<String> {
    let mut session = start(builder).await;
    let mut blocks = Vec::new();
    let mut stable = |session: &mut Session| {
        let request = session.build_request();
        let first = request.system.first().expect("a system block");
        assert!(first.stable);
        blocks.push(first.text.clone());
    };
    session
        .push_user("Summarize this PDF.")
        .await
        .expect("user");
    stable(&mut session);
    run(&mut session, "skill", json!({"skill": "pdf-tools"})).await;
    stable(&mut session);
    session.push_assistant(Message::assistant("Done."));
    session.push_user("And the tables?").await.expect("user");
    stable(&mut session);
    blocks
}

#[test]
fn prompt_hook_replaces_the_system_text_and_stays_stable() {
    pollster::block_on(async {
        for (label, in_description) in [
            ("hook_catalog_in_tool", true),
            ("hook_catalog_in_prompt", false),
        ] {
            let blocks = stable_blocks(hooked(in_description)).await;
            assert!(
                blocks.iter().all(|b| b == &blocks[0]),
                "{label}: {blocks:#?}"
            );
            let text = blocks[0].clone();
            assert!(text.starts_with("You are an office assistant.\n"), "{text}");
            assert!(text.contains("Skills load with `skill`."), "{text}");
            // The catalog is where the options put it: in the hook's text
            // only when it is not in the tool description.
            assert_eq!(text.contains("pdf-tools"), !in_description, "{text}");
            let default = stable_blocks(builder().surface(Surface::Eino(
                EinoOptions::default().with_catalog_in_description(in_description),
            )))
            .await;
            assert_ne!(text, default[0], "the hook replaces the default text");
            snap!(format!("eino_{label}_system"), text);
        }
    });
}

/// A `$name` mention delivers the same body as a load: with the base
/// directory on the Eino surface.
#[test]
fn a_mention_names_the_base_directory_too() {
    pollster::block_on(async {
        let root = skills_root();
        let provider = fs_provider(&root).await;
        let mut session = start(
            Agent::builder("assistant", provider).surface(Surface::Eino(EinoOptions::default())),
        )
        .await;
        session
            .push_user("Use $log-analyzer on this log.")
            .await
            .expect("user");
        let injected = &session.transcript().last().expect("injected").content;
        let dir = root.path().join("log-analyzer").display().to_string();
        assert!(
            injected.contains(&format!("Base directory for this skill: {dir}\n")),
            "{injected}"
        );
    });
}
