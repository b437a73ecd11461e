//! Single-file skills (opencode's shape, `<root>/<name>.md`): which Markdown
//! files are skills, how they are named, how they collide with folder skills,
//! what reads they allow, and that a warm provider notices them change.
#![cfg(unix)]

use std::fs;

use skills_core::{Code, ErrorKind, SkillProvider};
use skills_fs::{FsOp, FsOptions, FsProvider, SkillFs, lint_discovery};

use super::staleness::Fixture;
use super::support::{
    Repo, Root, assert_good_loads, block_on, diags_with, expect_kind, get, names, read, write_file,
};

const NOTES: &str = "---\ndescription: Keeps meeting notes. Use when asked to take notes.\n---\nWrite notes in `notes/`.\n";

/// A repository as opencode lays it out: a single-file skill and a folder
/// skill side by side in `.opencode/skills`, with a README and other
/// Markdown that are not skills, read through the standard roots.
#[test]
fn opencode_repository_layout_through_the_standard_roots() {
    let repo = Repo::new();
    let skills = repo.path(".opencode/skills");
    write_file(&skills.join("notes.md"), NOTES);
    write_file(
        &skills.join("git-release/SKILL.md"),
        "---\nname: git-release\ndescription: Cuts a release with git tags. Use when releasing.\n---\nTag it.\n",
    );
    write_file(
        &skills.join("README.md"),
        "# Our skills\n\nSee the folders.\n",
    );
    // Frontmatter with a description, but a name that is never a skill.
    write_file(
        &skills.join("AGENTS.md"),
        "---\ndescription: Rules for agents.\n---\nBe nice.\n",
    );
    write_file(
        &skills.join("draft.md"),
        "---\ntitle: Not yet\n---\nNo description: not a skill.\n",
    );
    write_file(&skills.join("plain.md"), "Just Markdown.\n");
    // Only the root's top level holds single-file skills.
    write_file(&skills.join("git-release/extra.md"), NOTES);
    let provider = repo.provider();

    let catalog = block_on(provider.list()).expect("list");
    assert_eq!(
        catalog.names().collect::<Vec<_>>(),
        ["git-release", "notes"]
    );
    assert!(
        block_on(provider.diagnostics()).is_empty(),
        "no noise from READMEs and plain Markdown: {:#?}",
        block_on(provider.diagnostics())
    );
    let notes = catalog.get("notes").expect("notes");
    assert_eq!(
        notes.description,
        "Keeps meeting notes. Use when asked to take notes."
    );
    assert_eq!(notes.path.as_deref(), Some("notes.md"));

    let skill = block_on(provider.get("notes")).expect("get");
    assert_eq!(skill.body, "Write notes in `notes/`.");
    assert!(skill.resources.entries.is_empty());
    let location = skill.location.clone().expect("location");
    assert!(location.starts_with("file:///"), "{location}");
    assert!(
        location.ends_with("/repo/.opencode/skills/notes.md"),
        "{location}"
    );

    // Its only file is its SKILL.md; anything else is refused clearly.
    let whole = block_on(provider.read_resource("notes", "SKILL.md", None)).expect("SKILL.md");
    assert_eq!(whole.text, NOTES);
    let bytes = block_on(provider.read_resource_bytes("notes", "SKILL.md")).expect("bytes");
    assert_eq!(bytes.bytes.as_ref(), NOTES.as_bytes());
    for path in ["notes.md", "references/guide.md", "../git-release/SKILL.md"] {
        let err = block_on(provider.read_resource("notes", path, None)).expect_err(path);
        assert!(
            matches!(
                err.kind(),
                ErrorKind::ResourceNotFound | ErrorKind::InvalidPath
            ),
            "{path}: {err}"
        );
    }
    let err = expect_kind(
        block_on(provider.read_resource_bytes("notes", "scripts/run.sh")),
        ErrorKind::ResourceNotFound,
    );
    assert!(
        err.message().contains("single Markdown file"),
        "{}",
        err.message()
    );
}

#[test]
fn named_by_frontmatter_else_by_stem() {
    let root = Root::new();
    root.write(
        "stem-name.md",
        "---\ndescription: Named after its file. Use in tests.\n---\nBody.\n",
    );
    root.write(
        "other.md",
        "---\nname: given\ndescription: Named by its frontmatter. Use in tests.\n---\nBody.\n",
    );
    root.write(
        "Quoted.MD",
        "---\n\"description\": 'Upper-case extension, quoted key.'\n---\nBody.\n",
    );
    let provider = root.provider();
    assert_eq!(names(&provider), ["given", "good", "quoted", "stem-name"]);
    let diagnostics = block_on(provider.diagnostics());
    // No "missing name" for the stem, no "name does not match" for `given`.
    assert!(
        diagnostics
            .iter()
            .all(|d| d.code != Code::NameMissing && d.code != Code::NameDirMismatch),
        "{diagnostics:#?}"
    );
    assert_eq!(
        block_on(provider.read_resource("given", "SKILL.md", None))
            .expect("read")
            .text
            .lines()
            .nth(1),
        Some("name: given")
    );
    assert_eq!(provider.skill_file("given"), Some(root.join("other.md")));
    assert_eq!(provider.skill_dir("given"), None);
    assert_eq!(provider.skill_file("good"), None);
    assert_good_loads(&provider);
}

/// A folder skill of the same name in the same root wins, whatever the file
/// is called, with the usual `skill-duplicate` warning.
#[test]
fn folder_skill_wins_over_a_file_of_the_same_name() {
    let root = Root::new();
    root.skill("deploy", "From the folder.");
    root.write(
        "deploy.md",
        "---\ndescription: Deploys from a file. Use never.\n---\nFrom deploy.md.\n",
    );
    root.write(
        "a-deploy.md",
        "---\nname: deploy\ndescription: Deploys from another file. Use never.\n---\nFrom a-deploy.md.\n",
    );
    let provider = root.provider();
    assert_eq!(names(&provider), ["deploy", "good"]);
    assert_eq!(
        get(&provider, "deploy").expect("get").body,
        "From the folder."
    );
    let duplicates = diags_with(&provider, Code::SkillDuplicate);
    assert_eq!(duplicates.len(), 2, "{duplicates:#?}");
    for file in ["deploy.md", "a-deploy.md"] {
        assert!(
            duplicates.iter().any(|d| d.message.contains(file)
                && d.message
                    .contains(&root.join("deploy").display().to_string())),
            "{file}: {duplicates:#?}"
        );
    }
    assert_good_loads(&provider);
}

/// A file that says it is a skill but is broken is reported like a broken
/// folder skill; one that does not say so is silent.
#[test]
fn broken_file_skill_is_reported_and_others_are_silent() {
    let root = Root::new();
    root.write(
        "broken.md",
        "---\ndescription: Broken YAML. Use never.\nname: [unclosed\n---\nBody.\n",
    );
    root.write("unclosed.md", "---\ndescription: never closed\nBody.\n");
    root.write(
        "bom.md",
        "\u{feff}---\ndescription: With a BOM. Use in tests.\n---\nB.\n",
    );
    root.write("CHANGELOG.md", "---\ndescription: releases\n---\n");
    root.write("notes.txt", "---\ndescription: not Markdown\n---\n");
    root.write(".hidden.md", "---\ndescription: hidden\n---\n");
    let provider = root.provider();
    assert_eq!(names(&provider), ["bom", "good"]);
    let diagnostics = block_on(provider.diagnostics());
    assert!(!diagnostics.is_empty());
    assert!(
        diagnostics
            .iter()
            .all(|d| d.file.as_deref().is_some_and(|f| f.ends_with("broken.md"))),
        "{diagnostics:#?}"
    );
    assert_good_loads(&provider);
}

#[test]
fn links_leading_out_of_the_root_are_not_read() {
    let root = Root::new();
    let outside = root.outside().join("elsewhere.md");
    write_file(&outside, NOTES);
    std::os::unix::fs::symlink(&outside, root.join("escaped.md")).expect("symlink");
    // A link to a file inside the root is followed.
    root.write("shared/notes.txt", NOTES);
    std::os::unix::fs::symlink("shared/notes.txt", root.join("linked.md")).expect("symlink");
    let provider = root.provider();
    assert_eq!(names(&provider), ["good", "linked"]);
    assert!(block_on(provider.diagnostics()).is_empty());
}

#[test]
fn switched_off_by_the_option() {
    let root = Root::new();
    root.write("notes.md", NOTES);
    let on = root.provider();
    assert_eq!(names(&on), ["good", "notes"]);
    let off = root.provider_with(FsOptions::default().with_single_file_skills(false));
    assert_eq!(names(&off), ["good"]);
    assert!(block_on(off.diagnostics()).is_empty());
}

/// A root that is itself a skill folder has no single-file skills.
#[test]
fn a_skill_folder_root_has_no_file_skills() {
    let root = Root::new();
    root.write("notes.md", NOTES);
    // A Markdown file inside a skill folder is one of its files.
    root.write("good/extra.md", NOTES);
    let provider = FsProvider::new([root.join("good")], FsOptions::default());
    assert_eq!(names(&provider), ["good"]);
    let provider = root.provider();
    assert_eq!(names(&provider), ["good", "notes"]);
}

/// `skills validate`-style lint of a single-file skill: no complaint about a
/// folder it does not have.
#[test]
fn lint_does_not_walk_a_file() {
    let root = Root::new();
    root.write("notes.md", NOTES);
    let mut discovery = SkillFs::new(FsOptions::default()).discover(&[root.path()]);
    lint_discovery(&mut discovery);
    let notes = discovery
        .skills
        .iter()
        .find(|s| s.name() == Some("notes"))
        .expect("notes");
    assert!(notes.single_file);
    assert_eq!(notes.dir, root.join("notes.md"));
    assert!(
        notes.diagnostics.iter().all(|d| d.code != Code::IoError),
        "{:#?}",
        notes.diagnostics
    );
}

#[test]
fn warm_provider_notices_files_added_edited_and_removed() {
    let w = Fixture::new(|root| {
        root.write("notes.md", NOTES);
        root.write("plain.md", "Just Markdown.\n");
    });
    w.after_cooldown();
    assert_eq!(w.names(), ["good", "notes"]);
    // The check stats the file (its stamp) and makes no scan.
    let counts = w.fs.counts();
    assert_eq!(counts.on(FsOp::Metadata, &w.root.join("notes.md")), 1);
    assert_eq!(counts.on(FsOp::ReadDir, &w.root.path()), 0);

    // Edited in place (the root folder does not change).
    fs::write(
        w.root.join("notes.md"),
        "---\ndescription: Edited in place.\n---\nBody.\n",
    )
    .expect("edit");
    w.after_cooldown();
    assert_eq!(w.description("notes"), "Edited in place.");
    // A plain Markdown file becomes a skill in place.
    fs::write(
        w.root.join("plain.md"),
        "---\ndescription: Now a skill.\n---\nBody.\n",
    )
    .expect("edit");
    w.after_cooldown();
    assert_eq!(w.names(), ["good", "notes", "plain"]);
    // A new file at the top level.
    w.root.write("added.md", NOTES);
    w.after_cooldown();
    assert_eq!(w.names(), ["added", "good", "notes", "plain"]);
    // `get` follows an edit too.
    assert_eq!(
        get(&w.provider, "added").expect("get").body,
        "Write notes in `notes/`."
    );
    fs::write(
        w.root.join("added.md"),
        "---\ndescription: D.\n---\nNew body.\n",
    )
    .expect("edit");
    w.after_cooldown();
    assert_eq!(get(&w.provider, "added").expect("get").body, "New body.");
    // Removed; and a file that stops being a skill.
    fs::remove_file(w.root.join("added.md")).expect("remove");
    fs::write(w.root.join("plain.md"), "Plain again.\n").expect("edit");
    w.after_cooldown();
    expect_kind(get(&w.provider, "plain"), ErrorKind::SkillNotFound);
    w.after_cooldown();
    assert_eq!(w.names(), ["good", "notes"]);
    expect_kind(
        read(&w.provider, "added", "SKILL.md"),
        ErrorKind::SkillNotFound,
    );
}
