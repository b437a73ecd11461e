//! Codex's `agents/openai.yaml` beside `SKILL.md`: what it adds to a skill's
//! metadata (manual tier, title, required tools), what a broken, oversized,
//! hostile or escaping file does (a warning, never a lost skill), and that a
//! warm provider notices it being edited, created and removed.
#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use skills_core::{Code, SkillMetadata, SkillProvider, Tier, VisibilityPolicy};
use skills_fs::{FsOp, FsOptions, MAX_OPENAI_YAML_BYTES};

use super::staleness::{Fixture, backdate};
use super::support::{Repo, Root, assert_good_loads, block_on, diags_with, get, write_file};

/// The file as Codex's skill creator writes it (openai/skills,
/// `skill-creator/references/openai_yaml.md`), with the policy that makes
/// the skill explicit-only.
const CODEX_OPENAI_YAML: &str = r##"interface:
  display_name: "Release Notes"
  short_description: "Draft release notes from merged pull requests"
  icon_small: "./assets/small-400px.png"
  icon_large: "./assets/large-logo.svg"
  brand_color: "#3B82F6"
  default_prompt: "Use $release-notes to draft the notes for v2.1"
dependencies:
  tools:
    - type: "mcp"
      value: "github"
      description: "GitHub MCP server"
      transport: "streamable_http"
      url: "https://api.githubcopilot.com/mcp/"
policy:
  allow_implicit_invocation: false
"##;

fn metadata(provider: &impl SkillProvider, name: &str) -> SkillMetadata {
    let catalog = block_on(provider.list()).expect("list");
    catalog.get(name).expect("listed").clone()
}

/// A repository as Codex lays it out: `.codex/skills/<name>/SKILL.md` with
/// `agents/openai.yaml`, read through the standard roots.
#[test]
fn codex_repository_layout_through_the_standard_roots() {
    let repo = Repo::new();
    let skill = repo.path(".codex/skills/release-notes");
    write_file(
        &skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Drafts release notes. Use when cutting a release.\n---\nCollect the merged pull requests.\n",
    );
    write_file(&skill.join("agents/openai.yaml"), CODEX_OPENAI_YAML);
    write_file(&skill.join("assets/small-400px.png"), b"\x89PNG");
    let plain = repo.path(".codex/skills/plain");
    write_file(
        &plain.join("SKILL.md"),
        "---\nname: plain\ndescription: A skill without openai.yaml. Use it anywhere.\n---\nBody.\n",
    );
    let provider = repo.provider();

    let meta = metadata(&provider, "release-notes");
    assert_eq!(meta.extensions.allow_implicit_invocation, Some(false));
    assert_eq!(meta.title.as_deref(), Some("Release Notes"));
    assert_eq!(meta.extensions.requires.tools, ["github"]);
    assert_eq!(VisibilityPolicy::new().tier(&meta), Tier::Manual);
    let plain_meta = metadata(&provider, "plain");
    assert_eq!(plain_meta.extensions.allow_implicit_invocation, None);
    assert_eq!(VisibilityPolicy::new().tier(&plain_meta), Tier::Listed);
    assert!(
        block_on(provider.diagnostics()).is_empty(),
        "{:#?}",
        block_on(provider.diagnostics())
    );
    // `get` reads the same file and gives the same metadata; the file stays
    // one of the skill's files.
    let loaded = block_on(provider.get("release-notes")).expect("get");
    assert_eq!(loaded.metadata, meta);
    assert!(
        loaded
            .resources
            .paths()
            .contains(&"agents/openai.yaml".to_owned())
    );
}

/// A title written in `SKILL.md` is kept; `display_name` only fills a gap.
#[test]
fn display_name_does_not_replace_a_title_from_skill_md() {
    let root = Root::new();
    root.write(
        "pdf/SKILL.md",
        "---\nname: PDF Tools\ndescription: Fills PDF forms. Use for PDFs.\n---\nBody.\n",
    );
    root.write(
        "pdf/agents/openai.yaml",
        "interface:\n  display_name: Other\n",
    );
    let provider = root.provider();
    assert_eq!(
        metadata(&provider, "pdf").title.as_deref(),
        Some("PDF Tools")
    );
}

#[test]
fn broken_and_mistyped_files_warn_and_the_skill_loads() {
    let root = Root::new();
    root.skill("syntax", "Body.");
    root.write("syntax/agents/openai.yaml", "policy: [unclosed\n");
    root.skill("shapes", "Body.");
    root.write(
        "shapes/agents/openai.yaml",
        "interface:\n  display_name: [not, text]\npolicy:\n  allow_implicit_invocation: \"false\"\ndependencies:\n  tools:\n    - github\n    - type: mcp\n    - type: mcp\n      value: linear\n    - type: mcp\n      value: linear\nunknown_key: ignored\n",
    );
    root.skill("scalar", "Body.");
    root.write("scalar/agents/openai.yaml", "just text\n");
    root.skill("empty", "Body.");
    root.write("empty/agents/openai.yaml", "# nothing yet\n");
    root.skill("binary", "Body.");
    root.write("binary/agents/openai.yaml", b"\xff\xfe\x00policy");
    let provider = root.provider();

    let warnings = diags_with(&provider, Code::OpenaiYamlInvalid);
    let about = |skill: &str| -> Vec<String> {
        warnings
            .iter()
            .filter(|d| {
                d.file.as_deref().is_some_and(|f| {
                    Path::new(f) == root.join(&format!("{skill}/agents/openai.yaml"))
                })
            })
            .map(|d| d.message.clone())
            .collect()
    };
    assert!(warnings.iter().all(|d| !d.is_error()), "{warnings:#?}");
    let syntax = about("syntax");
    assert_eq!(syntax.len(), 1, "{warnings:#?}");
    assert!(syntax[0].contains("not valid YAML"), "{syntax:?}");
    let shapes = about("shapes");
    assert_eq!(shapes.len(), 4, "{shapes:#?}");
    for needle in [
        "`interface.display_name` must be a string",
        "`policy.allow_implicit_invocation` must be true or false, found a string",
        "`dependencies.tools[0]` must be a mapping",
        "`dependencies.tools[1].value` must be the tool's name, found nothing",
    ] {
        assert!(
            shapes.iter().any(|m| m.contains(needle)),
            "{needle}: {shapes:#?}"
        );
    }
    assert_eq!(about("scalar").len(), 1, "{warnings:#?}");
    assert!(about("empty").is_empty(), "{warnings:#?}");
    assert_eq!(about("binary").len(), 1, "{warnings:#?}");

    // Every skill loads; the good parts of a partly wrong file apply.
    let shapes_meta = metadata(&provider, "shapes");
    assert_eq!(shapes_meta.extensions.allow_implicit_invocation, None);
    assert_eq!(shapes_meta.extensions.requires.tools, ["linear"]);
    assert_eq!(shapes_meta.title, None);
    for name in ["syntax", "scalar", "empty", "binary"] {
        assert!(metadata(&provider, name).extensions.is_empty(), "{name}");
    }
    assert_good_loads(&provider);
}

#[test]
fn oversized_file_is_ignored_unread() {
    let root = Root::new();
    root.skill("big", "Body.");
    let mut text = String::from("policy:\n  allow_implicit_invocation: false\n");
    while text.len() as u64 <= MAX_OPENAI_YAML_BYTES {
        text.push_str("# padding padding padding padding padding padding padding\n");
    }
    root.write("big/agents/openai.yaml", &text);
    let provider = root.provider();
    let warnings = diags_with(&provider, Code::OpenaiYamlInvalid);
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0]
            .message
            .contains(&format!("the limit is {MAX_OPENAI_YAML_BYTES}")),
        "{warnings:#?}"
    );
    assert_eq!(
        metadata(&provider, "big")
            .extensions
            .allow_implicit_invocation,
        None
    );
    assert_good_loads(&provider);
}

/// A billion-laughs file stays within the parser's budgets: one warning,
/// quickly, and the skill loads.
#[test]
fn alias_bomb_is_a_warning() {
    let root = Root::new();
    root.skill("bomb", "Body.");
    let mut text = String::from(
        "a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
    );
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        text.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    text.push_str("policy:\n  allow_implicit_invocation: false\n");
    root.write("bomb/agents/openai.yaml", &text);
    let started = std::time::Instant::now();
    let provider = root.provider();
    assert!(started.elapsed() < Duration::from_secs(10));
    let warnings = diags_with(&provider, Code::OpenaiYamlInvalid);
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].message.contains("not valid YAML"),
        "{warnings:#?}"
    );
    assert_eq!(
        metadata(&provider, "bomb")
            .extensions
            .allow_implicit_invocation,
        None
    );
    assert_good_loads(&provider);
}

/// A link leading out of the skill is refused, whether the file or its
/// `agents/` folder is the link.
#[test]
fn symlink_leading_outside_is_refused() {
    let root = Root::new();
    let outside = root.outside().join("openai.yaml");
    write_file(&outside, "policy:\n  allow_implicit_invocation: false\n");
    root.skill("linked-file", "Body.");
    fs::create_dir_all(root.join("linked-file/agents")).expect("agents");
    std::os::unix::fs::symlink(&outside, root.join("linked-file/agents/openai.yaml"))
        .expect("symlink");
    root.skill("linked-folder", "Body.");
    std::os::unix::fs::symlink(root.outside(), root.join("linked-folder/agents")).expect("symlink");
    // A link that stays inside the skill is followed.
    root.skill("inside", "Body.");
    root.write(
        "inside/config/openai.yaml",
        "policy:\n  allow_implicit_invocation: false\n",
    );
    fs::create_dir_all(root.join("inside/agents")).expect("agents");
    std::os::unix::fs::symlink(
        "../config/openai.yaml",
        root.join("inside/agents/openai.yaml"),
    )
    .expect("symlink");
    let provider = root.provider();

    let warnings = diags_with(&provider, Code::OpenaiYamlInvalid);
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    for d in &warnings {
        assert!(d.message.contains("outside the skill folder"), "{d:#?}");
    }
    for name in ["linked-file", "linked-folder"] {
        assert_eq!(
            metadata(&provider, name)
                .extensions
                .allow_implicit_invocation,
            None,
            "{name}"
        );
        assert!(get(&provider, name).is_ok(), "{name}");
    }
    assert_eq!(
        metadata(&provider, "inside")
            .extensions
            .allow_implicit_invocation,
        Some(false)
    );
    assert_good_loads(&provider);
}

/// `allow_implicit_invocation` of `name` as `list` gives it after the cooldown.
fn implicit(f: &Fixture, name: &str) -> Option<bool> {
    f.after_cooldown();
    metadata(&f.provider, name)
        .extensions
        .allow_implicit_invocation
}

#[test]
fn warm_provider_notices_edits_creation_and_removal() {
    for nested in [true, false] {
        let options = FsOptions::default().with_nested_skills(nested);
        let w = Fixture::build(options, true, |root| {
            root.skill("codex", "Body.");
            root.write(
                "codex/agents/openai.yaml",
                "policy:\n  allow_implicit_invocation: false\n",
            );
        });
        let file = w.root.join("codex/agents/openai.yaml");
        assert_eq!(implicit(&w, "codex"), Some(false), "nested: {nested}");
        // A check with nothing changed stats the file once.
        assert_eq!(w.fs.counts().on(FsOp::Metadata, &file), 1);
        assert_eq!(w.fs.counts().on(FsOp::ReadDir, &w.root.path()), 0);

        // Edited in place: the folders do not change, the file does.
        fs::write(&file, "policy:\n  allow_implicit_invocation: true\n").expect("edit");
        assert_eq!(implicit(&w, "codex"), Some(true), "nested: {nested}");
        // Removed.
        fs::remove_file(&file).expect("remove");
        assert_eq!(implicit(&w, "codex"), None, "nested: {nested}");
        // Created again in the existing `agents/` folder.
        backdate(&w.root.path());
        implicit(&w, "codex");
        write_file(&file, "policy:\n  allow_implicit_invocation: false\n");
        assert_eq!(implicit(&w, "codex"), Some(false), "nested: {nested}");
        // A whole new `agents/` folder in another skill.
        w.root.skill("late", "Body.");
        backdate(&w.root.path());
        assert_eq!(implicit(&w, "late"), None);
        w.root.write(
            "late/agents/openai.yaml",
            "policy:\n  allow_implicit_invocation: false\n",
        );
        assert_eq!(implicit(&w, "late"), Some(false), "nested: {nested}");
    }
}

/// `get` sees the edit too, and gives the same metadata as `list`.
#[test]
fn get_rereads_an_edited_file() {
    let w = Fixture::new(|root| {
        root.skill("codex", "Body.");
        root.write(
            "codex/agents/openai.yaml",
            "interface:\n  display_name: One\n",
        );
    });
    let first = block_on(w.provider.get("codex")).expect("get");
    assert_eq!(first.metadata.title.as_deref(), Some("One"));
    fs::write(
        w.root.join("codex/agents/openai.yaml"),
        "interface:\n  display_name: Two\n",
    )
    .expect("edit");
    w.after_cooldown();
    let second = block_on(w.provider.get("codex")).expect("get");
    assert_eq!(second.metadata.title.as_deref(), Some("Two"));
    assert_eq!(metadata(&w.provider, "codex").title.as_deref(), Some("Two"));
}

/// Skills without an `agents/` folder cost nothing more to scan when the walk
/// lists their folder (nested skills on, the default).
#[test]
fn skills_without_agents_folder_cost_no_call() {
    let w = Fixture::new(|root| {
        root.skill("plain", "Body.");
    });
    block_on(w.provider.rescan());
    let counts = w.fs.counts();
    for skill in ["plain", "good"] {
        let agents = w.root.join(&format!("{skill}/agents"));
        assert_eq!(counts.on(FsOp::Metadata, &agents), 0, "{:#?}", counts.calls);
        assert_eq!(
            counts.on(FsOp::Read, &agents.join("openai.yaml")),
            0,
            "{:#?}",
            counts.calls
        );
    }
}
