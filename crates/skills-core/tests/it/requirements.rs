//! Requirements read from realistic `SKILL.md` files of other hosts, checked
//! against a fake machine, and kept by the catalog's stored form.

use skills_core::{
    Catalog, Missing, Probe, SkillMetadata, ValidationOptions, VisibilityPolicy, describe_missing,
};

use super::support::{codes, parse_in_dir};

/// An OpenClaw skill: `metadata` is one JSON flow map with an install recipe.
const OPENCLAW: &str = r#"---
name: github
description: Work with GitHub issues, pull requests and CI runs through the gh CLI.
homepage: https://cli.github.com
metadata: {"openclaw": {"emoji": "🐙", "primaryEnv": "GH_TOKEN", "requires": {"bins": ["gh"], "config": ["github.org"]}, "install": [{"id": "brew", "kind": "brew", "formula": "gh", "bins": ["gh"], "label": "Install GitHub CLI (brew)"}]}}
---
# GitHub

Use `gh issue list` to see open issues.
"#;

/// A Hermes skill: top-level environment variables and platforms, and its
/// own metadata namespace.
const HERMES: &str = "---
name: notion-sync
description: Syncs meeting notes to a Notion database.
version: 1.0.0
author: Someone
platforms: [linux, macos]
required_environment_variables:
  - name: NOTION_API_KEY
    prompt: Your Notion integration token
    help: https://www.notion.so/my-integrations
    required_for: all operations
metadata:
  hermes:
    tags: [notes, notion]
    related_skills: [meeting-notes]
---
Sync the notes.
";

/// A Google ADK skill: extra tools under `metadata`.
const ADK: &str = "---
name: web-research
description: Researches a topic on the web and cites its sources.
metadata:
  author: team
  adk_additional_tools:
    - google_search
    - load_web_page
---
Search, then read.
";

/// Our canonical spelling.
const CANONICAL: &str = "---
name: release-notes
description: Drafts release notes from the git log.
metadata:
  requires:
    bins:
      - git
    anyBins:
      - rg
      - grep
    env:
      - GITHUB_TOKEN
---
Read the log.
";

/// OpenClaw's `always: true`: never gated.
const ALWAYS: &str = r#"---
name: weather
description: Tells the weather.
metadata: {"openclaw": {"always": true, "requires": {"bins": ["curl"]}}}
---
Ask wttr.in.
"#;

fn load(dir: &str, src: &str) -> SkillMetadata {
    let out = parse_in_dir(src, dir, &ValidationOptions::lenient());
    assert!(codes(&out).is_empty(), "{dir}: {:?}", out.diagnostics);
    match out.document {
        Some(doc) => doc.metadata,
        None => panic!("{dir} did not load"),
    }
}

/// A machine with git, grep and `GITHUB_TOKEN`, on Linux.
struct Machine;

impl Probe for Machine {
    fn has_bin(&self, name: &str) -> bool {
        matches!(name, "git" | "grep" | "curl")
    }
    fn has_env(&self, name: &str) -> bool {
        name == "GITHUB_TOKEN"
    }
    fn os(&self) -> &str {
        "linux"
    }
}

#[test]
fn realistic_skills_are_gated_by_what_they_need() {
    let skills = [
        load("github", OPENCLAW),
        load("notion-sync", HERMES),
        load("web-research", ADK),
        load("release-notes", CANONICAL),
        load("weather", ALWAYS),
    ];
    let needs: Vec<String> = skills
        .iter()
        .map(|s| describe_missing(&s.extensions.requires.missing(&Machine)))
        .collect();
    assert_eq!(
        needs,
        [
            "bin gh; env GH_TOKEN",
            "env NOTION_API_KEY",
            // No tool table here: tools are not judged.
            "",
            "",
            "",
        ]
    );
    assert_eq!(skills[1].extensions.requires.os, ["linux", "macos"]);
    assert_eq!(
        skills[2].extensions.requires.tools,
        ["google_search", "load_web_page"]
    );
    assert_eq!(
        skills[2].metadata.get("author").map(String::as_str),
        Some("team")
    );

    let mut policy = VisibilityPolicy::new();
    assert_eq!(policy.check_requirements(&skills, &Machine), 2);
    let listed: Vec<&str> = skills
        .iter()
        .filter(|s| policy.is_listed(s))
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(listed, ["web-research", "release-notes", "weather"]);
    assert_eq!(
        policy.missing("notion-sync"),
        Some(&[Missing::Env("NOTION_API_KEY".into())][..])
    );
}

#[test]
fn the_stored_catalog_keeps_requirements() {
    let catalog = Catalog::new(vec![load("release-notes", CANONICAL)]);
    let json = serde_json::to_string(&catalog).unwrap_or_else(|e| panic!("{e}"));
    let back: Catalog = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
    let entry = back
        .entries()
        .first()
        .unwrap_or_else(|| panic!("one entry"));
    assert_eq!(entry.extensions.requires.bins, ["git"]);
    assert_eq!(entry.extensions.requires.any_bins, ["rg", "grep"]);
    assert_eq!(entry.extensions.requires.env, ["GITHUB_TOKEN"]);
}
