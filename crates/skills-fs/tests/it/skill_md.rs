//! Broken `SKILL.md` files: each is reported with a stable code and skipped,
//! and never stops its siblings from loading.

use skills_core::{Code, ErrorKind, Severity, ValidationOptions};
use skills_fs::{FsOptions, SkillFs};

use super::support::{Root, assert_good_loads, codes, expect_kind, get, names, one_diag};

/// The skill in `root/<dir>` is skipped with an error `code` located in its
/// `SKILL.md`; `good` still loads.
#[track_caller]
fn assert_skipped(root: &Root, options: FsOptions, dir: &str, code: Code) -> String {
    let provider = root.provider_with(options.clone());
    let diag = one_diag(&provider, code);
    assert_eq!(diag.severity, Severity::Error, "{diag}");
    let file = diag.file.clone().expect("the diagnostic names a file");
    assert!(
        file.ends_with(&format!("{dir}/SKILL.md")),
        "diagnostic should point at {dir}/SKILL.md: {diag}"
    );
    assert!(!diag.message.is_empty());
    assert_eq!(names(&provider), vec!["good"], "only `good` loads");
    expect_kind(get(&provider, dir), ErrorKind::SkillNotFound);
    assert_good_loads(&provider);

    // The same verdict through discovery and the one-folder loader.
    let discovery = SkillFs::new(options.clone()).discover(&[root.path()]);
    let skill = discovery
        .skills
        .iter()
        .find(|s| s.dir.ends_with(dir))
        .expect("the broken skill is reported by discovery");
    assert!(!skill.is_valid());
    assert!(skill.document.is_none());
    assert!(codes(&skill.diagnostics).contains(&code.as_str()));
    let again = SkillFs::new(options.clone()).load_skill_dir(&root.join(dir));
    assert!(codes(&again.diagnostics).contains(&code.as_str()));
    diag.to_string()
}

#[test]
fn ten_megabyte_frontmatter_is_frontmatter_too_large() {
    let root = Root::new();
    let mut md = String::from("---\nname: huge-fm\ndescription: Big.\nfiller: ");
    md.push_str(&"a".repeat(10 * 1024 * 1024));
    md.push_str("\n---\nBody.\n");
    root.write("huge-fm/SKILL.md", md);

    let shown = assert_skipped(
        &root,
        FsOptions::default(),
        "huge-fm",
        Code::FrontmatterTooLarge,
    );
    assert!(shown.contains("error[frontmatter-too-large]"), "{shown}");
    assert!(shown.contains("limit is 65536 bytes"), "{shown}");
}

#[test]
fn ten_megabyte_frontmatter_without_closing_fence_is_reported() {
    let root = Root::new();
    let mut md = String::from("---\nname: open-fm\ndescription: Big.\nfiller: ");
    md.push_str(&"a\n".repeat(5 * 1024 * 1024));
    root.write("open-fm/SKILL.md", md);

    let provider = root.provider();
    let diags = skills_core::SkillProvider::diagnostics(&provider);
    let diags = super::support::block_on(diags);
    let mine: Vec<_> = diags
        .iter()
        .filter(|d| d.file.as_deref().is_some_and(|f| f.contains("open-fm")))
        .collect();
    assert!(
        mine.iter().any(|d| d.is_error()
            && matches!(
                d.code,
                Code::FrontmatterUnclosed | Code::FrontmatterTooLarge
            )),
        "{mine:#?}"
    );
    assert_good_loads(&provider);
}

#[test]
fn skill_md_over_max_skill_md_bytes_is_skill_md_too_large() {
    let root = Root::new();
    let body = "x".repeat(400);
    root.skill("wordy", &body);
    let options = FsOptions::default().with_max_skill_md_bytes(128);

    let shown = assert_skipped(&root, options, "wordy", Code::SkillMdTooLarge);
    assert!(shown.contains("the limit is 128 bytes"), "{shown}");
}

/// Nine levels of ten aliases: 10^9 nodes if expanded.
fn alias_bomb(name: &str) -> String {
    let mut md = format!("---\nname: {name}\ndescription: Boom.\nmetadata:\n  l0: &l0 lol\n");
    for level in 1..=9 {
        md.push_str(&format!("  l{level}: &l{level}\n"));
        for _ in 0..10 {
            md.push_str(&format!("    - *l{}\n", level - 1));
        }
    }
    md.push_str("---\nBody.\n");
    md
}

#[test]
fn yaml_alias_bomb_is_yaml_alias_budget_in_lenient_mode() {
    let root = Root::new();
    root.write("bomb/SKILL.md", alias_bomb("bomb"));

    let shown = assert_skipped(&root, FsOptions::default(), "bomb", Code::YamlAliasBudget);
    assert!(shown.contains("bomb/SKILL.md:"), "located: {shown}");
}

#[test]
fn yaml_alias_bomb_is_yaml_anchor_in_strict_mode() {
    let root = Root::new();
    root.write("bomb/SKILL.md", alias_bomb("bomb"));
    let options = FsOptions::default().with_validation(ValidationOptions::strict());

    let provider = root.provider_with(options.clone());
    let diags = super::support::diags_with(&provider, Code::YamlAnchor);
    assert!(!diags.is_empty(), "strict mode refuses anchors");
    assert!(
        diags.iter().all(|d| d.is_error() && d.line.is_some()),
        "{diags:#?}"
    );
    assert!(super::support::diags_with(&provider, Code::YamlAliasBudget).is_empty());
    assert_eq!(names(&provider), vec!["good"]);
    assert_good_loads(&provider);
}

#[test]
fn non_utf8_skill_md_is_not_utf8() {
    let root = Root::new();
    root.write(
        "latin/SKILL.md",
        b"---\nname: latin\ndescription: Caf\xe9.\n---\nBody.\n".as_slice(),
    );

    let shown = assert_skipped(&root, FsOptions::default(), "latin", Code::NotUtf8);
    assert!(
        shown.contains("latin/SKILL.md:3: error[not-utf8]"),
        "{shown}"
    );
}

#[test]
fn empty_skill_md_is_frontmatter_missing() {
    let root = Root::new();
    root.write("empty/SKILL.md", "");

    let shown = assert_skipped(
        &root,
        FsOptions::default(),
        "empty",
        Code::FrontmatterMissing,
    );
    assert!(
        shown.contains("empty/SKILL.md:1: error[frontmatter-missing]"),
        "{shown}"
    );
}

#[test]
fn skill_md_without_frontmatter_is_frontmatter_missing() {
    let root = Root::new();
    root.write("plain/SKILL.md", "# Just Markdown\n\nNo fields here.\n");

    assert_skipped(
        &root,
        FsOptions::default(),
        "plain",
        Code::FrontmatterMissing,
    );
}

#[test]
fn skill_md_that_is_a_directory_is_skill_md_not_file() {
    let root = Root::new();
    std::fs::create_dir_all(root.join("dirmd/SKILL.md/inner")).expect("mkdir");

    let shown = assert_skipped(&root, FsOptions::default(), "dirmd", Code::SkillMdNotFile);
    assert!(shown.contains("directory"), "{shown}");
}

#[cfg(unix)]
#[test]
fn dangling_skill_md_symlink_is_io_error() {
    let root = Root::new();
    std::fs::create_dir_all(root.join("dangling")).expect("mkdir");
    std::os::unix::fs::symlink("nowhere.md", root.join("dangling/SKILL.md")).expect("symlink");

    assert_skipped(&root, FsOptions::default(), "dangling", Code::IoError);
}

#[test]
fn missing_description_is_reported_with_a_line() {
    let root = Root::new();
    root.write("nodesc/SKILL.md", "---\nname: nodesc\n---\nBody.\n");

    // Strict mode skips the skill.
    let strict = FsOptions::default().with_validation(ValidationOptions::strict());
    let shown = assert_skipped(&root, strict, "nodesc", Code::DescriptionMissing);
    assert!(shown.contains("nodesc/SKILL.md:"), "{shown}");

    // Lenient mode loads it with the body's first paragraph, and warns.
    let provider = root.provider();
    let diag = one_diag(&provider, Code::DescriptionMissing);
    assert_eq!(diag.severity, Severity::Warning, "{diag}");
    assert!(diag.to_string().contains("nodesc/SKILL.md:1:"), "{diag}");
    assert_eq!(names(&provider), vec!["good", "nodesc"]);
    let skill = get(&provider, "nodesc").expect("loads");
    assert_eq!(skill.metadata.description, "Body.");
}

#[test]
fn name_dir_mismatch_loads_with_a_warning_in_lenient_mode() {
    let root = Root::new();
    root.write(
        "folder-name/SKILL.md",
        "---\nname: other-name\ndescription: Mismatched. Use it for tests.\n---\nMismatch body.\n",
    );
    let provider = root.provider();

    let diag = one_diag(&provider, Code::NameDirMismatch);
    assert_eq!(diag.severity, Severity::Warning, "{diag}");
    assert!(diag.message.contains("folder-name"), "{diag}");
    assert!(diag.message.contains("other-name"), "{diag}");
    assert!(diag.line.is_some(), "{diag}");
    assert_eq!(names(&provider), vec!["good", "other-name"]);
    let skill = get(&provider, "other-name").expect("loads under its declared name");
    assert_eq!(skill.body, "Mismatch body.");
    expect_kind(get(&provider, "folder-name"), ErrorKind::SkillNotFound);
    assert_good_loads(&provider);
}

#[test]
fn name_dir_mismatch_is_an_error_in_strict_mode() {
    let root = Root::new();
    root.write(
        "folder-name/SKILL.md",
        "---\nname: other-name\ndescription: Mismatched. Use it for tests.\n---\nBody.\n",
    );
    let options = FsOptions::default().with_validation(ValidationOptions::strict());
    let provider = root.provider_with(options);

    let diag = one_diag(&provider, Code::NameDirMismatch);
    assert_eq!(diag.severity, Severity::Error, "{diag}");
    assert_eq!(names(&provider), vec!["good"]);
    expect_kind(get(&provider, "other-name"), ErrorKind::SkillNotFound);
    assert_good_loads(&provider);
}

#[test]
fn unknown_field_warns_nothing_in_lenient_and_errors_in_strict() {
    let root = Root::new();
    root.write(
        "extra/SKILL.md",
        "---\nname: extra\ndescription: Extra field. Use it for tests.\nflavour: mint\n---\nBody.\n",
    );

    let lenient = root.provider();
    assert_eq!(names(&lenient), vec!["extra", "good"]);
    assert_good_loads(&lenient);

    let strict =
        root.provider_with(FsOptions::default().with_validation(ValidationOptions::strict()));
    let diag = one_diag(&strict, Code::FieldUnknown);
    assert!(diag.message.contains("flavour"), "{diag}");
    assert_eq!(diag.line, Some(4), "{diag}");
    assert_eq!(names(&strict), vec!["good"]);
    assert_good_loads(&strict);
}

/// `SKILL.md` is read beneath its folder like any resource: a symlink that
/// stays inside is followed, one leading out is a `path-outside-skill` error
/// (for discovery, `get` and direct loads alike).
#[cfg(unix)]
#[test]
fn skill_md_symlinks_follow_the_resource_rule() {
    let root = Root::new();
    std::fs::write(
        root.outside().join("SKILL.md"),
        "---\nname: escaped\ndescription: Outside. Use it never.\n---\nOutside body.\n",
    )
    .expect("write");
    std::fs::create_dir_all(root.join("escaped")).expect("mkdir");
    std::os::unix::fs::symlink(
        root.outside().join("SKILL.md"),
        root.join("escaped/SKILL.md"),
    )
    .expect("symlink");
    let shown = assert_skipped(
        &root,
        FsOptions::default(),
        "escaped",
        Code::PathOutsideSkill,
    );
    assert!(shown.contains("outside the skill folder"), "{shown}");
    let fs = SkillFs::new(FsOptions::default());
    let err = fs
        .load_skill(&root.join("escaped"))
        .expect_err("not loaded");
    assert!(err.to_string().contains("path-outside-skill"), "{err}");
    root.write(
        "linked/docs/real.md",
        "---\nname: linked\ndescription: Linked inside. Use it for tests.\n---\nInside body.\n",
    );
    std::os::unix::fs::symlink("docs/real.md", root.join("linked/SKILL.md")).expect("symlink");

    let linked = fs
        .load_skill(&root.join("linked"))
        .expect("an inner link is followed");
    assert_eq!(linked.body.trim(), "Inside body.");
}
