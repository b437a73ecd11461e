//! Discovery over odd roots: missing roots, single-skill roots, symlinked
//! roots and loops, duplicates, folders that look like skills.

use std::collections::HashSet;
use std::fs;

use skills_core::{Code, ErrorKind, Severity};
use skills_fs::{FsOptions, FsProvider, SkillFs};

use super::support::{Root, assert_good_loads, block_on, codes, expect_kind, get, names, one_diag};

#[test]
fn folder_without_skill_md_but_with_references_warns_skill_md_missing() {
    let root = Root::new();
    root.write("orphan/references/notes.md", "notes\n");
    root.write("orphan/scripts/run.sh", "echo\n");

    let discovery = SkillFs::new(FsOptions::default()).discover(&[root.path()]);
    let diags: Vec<_> = discovery
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::SkillMdMissing)
        .collect();
    assert_eq!(diags.len(), 1, "{:#?}", discovery.diagnostics);
    assert_eq!(diags[0].severity, Severity::Warning);
    assert!(diags[0].message.contains("orphan"), "{}", diags[0]);
    assert!(diags[0].message.contains("SKILL.md"), "{}", diags[0]);
    assert!(
        discovery.is_valid(),
        "a warning does not make discovery invalid"
    );
    assert_eq!(discovery.skills.len(), 1);

    let provider = root.provider();
    one_diag(&provider, Code::SkillMdMissing);
    assert_eq!(names(&provider), vec!["good"]);
    assert_good_loads(&provider);
}

#[test]
fn plain_folders_without_skill_files_do_not_warn() {
    let root = Root::new();
    root.write("misc/data.json", "{}\n");
    root.write(".hidden/data/x.json", "{}\n");

    let discovery = SkillFs::new(FsOptions::default()).discover(&[root.path()]);
    assert!(
        discovery.diagnostics.is_empty(),
        "{:#?}",
        discovery.diagnostics
    );
    assert_good_loads(&root.provider());
}

#[cfg(unix)]
#[test]
fn symlink_loop_between_folders_terminates_without_duplicates() {
    use std::os::unix::fs::symlink;

    let root = Root::new();
    root.skill("loop-a/nested", "Nested body.");
    fs::create_dir_all(root.join("loop-b")).expect("mkdir");
    symlink("../loop-b", root.join("loop-a/to-b")).expect("symlink");
    symlink("../loop-a", root.join("loop-b/to-a")).expect("symlink");
    symlink(".", root.join("loop-a/me")).expect("symlink");
    symlink("..", root.join("loop-b/up")).expect("symlink");
    symlink("good", root.join("good-again")).expect("symlink");

    let discovery = SkillFs::new(FsOptions::default().with_max_depth(50)).discover(&[root.path()]);
    let real: Vec<_> = discovery
        .skills
        .iter()
        .map(|s| fs::canonicalize(&s.dir).expect("canonical"))
        .collect();
    let unique: HashSet<_> = real.iter().collect();
    assert_eq!(
        real.len(),
        unique.len(),
        "a folder was loaded twice: {real:#?}"
    );
    assert_eq!(real.len(), 2, "{:#?}", discovery.skills);
    let mut found: Vec<_> = discovery.skills.iter().filter_map(|s| s.name()).collect();
    found.sort_unstable();
    assert_eq!(found, vec!["good", "nested"]);
    assert!(
        discovery.skills.iter().all(|s| s.diagnostics.is_empty()),
        "{:#?}",
        discovery.skills
    );

    let provider = root.provider();
    assert_eq!(names(&provider), vec!["good", "nested"]);
    assert!(
        super::support::diags_with(&provider, Code::SkillDuplicate).is_empty(),
        "the same folder reached twice is not a duplicate"
    );
    assert_good_loads(&provider);
}

#[cfg(unix)]
#[test]
fn root_that_is_a_symlink_to_a_folder_of_skills_loads() {
    use std::os::unix::fs::symlink;

    let root = Root::new();
    root.skill("second", "Second body.");
    let link = root.outside().join("linked-root");
    symlink(root.path(), &link).expect("symlink");

    let provider = FsProvider::new([&link], FsOptions::default());
    assert_eq!(names(&provider), vec!["good", "second"]);
    assert!(block_on(skills_core::SkillProvider::diagnostics(&provider)).is_empty());
    let dir = provider.skill_dir("second").expect("second has a folder");
    assert!(
        dir.starts_with(&link),
        "paths stay under the root as given: {dir:?}"
    );
    assert_good_loads(&provider);
}

#[test]
fn nonexistent_root_is_an_io_error_and_other_roots_still_load() {
    let root = Root::new();
    let missing = root.outside().join("no-such-root");
    let provider = FsProvider::new([missing.clone(), root.path()], FsOptions::default());

    let diag = one_diag(&provider, Code::IoError);
    assert_eq!(diag.severity, Severity::Error, "{diag}");
    assert!(
        diag.message.contains(&missing.display().to_string()),
        "the message names the root: {diag}"
    );
    assert_eq!(names(&provider), vec!["good"]);
    assert_good_loads(&provider);

    let discovery = SkillFs::new(FsOptions::default()).discover(&[missing, root.path()]);
    assert!(!discovery.is_valid());
    assert_eq!(codes(&discovery.diagnostics), vec!["io-error"]);
}

#[test]
fn root_that_is_a_file_is_a_root_not_folder_error() {
    let root = Root::new();
    let file = root.outside().join("not-a-folder.txt");
    fs::write(&file, "x").expect("write");
    let provider = FsProvider::new([file, root.path()], FsOptions::default());

    let diag = one_diag(&provider, Code::RootNotFolder);
    assert!(diag.is_error());
    assert!(diag.message.contains("not a folder"), "{diag}");
    assert_good_loads(&provider);
}

#[test]
fn two_skills_with_the_same_name_first_in_byte_order_wins() {
    let root = Root::new();
    // Created in reverse order; `Zeta` sorts before `alpha` in byte order.
    root.write(
        "alpha/SKILL.md",
        "---\nname: same\ndescription: From alpha. Use it for tests.\n---\nAlpha body.\n",
    );
    root.write(
        "Zeta/SKILL.md",
        "---\nname: same\ndescription: From Zeta. Use it for tests.\n---\nZeta body.\n",
    );
    let provider = root.provider();

    assert_eq!(names(&provider), vec!["good", "same"]);
    let winner = provider.skill_dir("same").expect("same loads");
    assert!(winner.ends_with("Zeta"), "{winner:?}");
    assert_eq!(get(&provider, "same").expect("get same").body, "Zeta body.");
    let diag = one_diag(&provider, Code::SkillDuplicate);
    assert_eq!(diag.severity, Severity::Warning);
    assert!(diag.message.contains("alpha"), "names the loser: {diag}");
    assert!(diag.message.contains("Zeta"), "names the winner: {diag}");
    assert!(
        diag.file
            .as_deref()
            .is_some_and(|f| f.ends_with("alpha/SKILL.md")),
        "{diag}"
    );
    assert_good_loads(&provider);
}

/// Three skills of one name among others whose names sort between and
/// around theirs: the first found wins, and each of the other two is
/// warned about once, naming it.
#[test]
fn of_three_skills_with_one_name_the_first_found_wins() {
    let root = Root::new();
    let skill = |folder: &str, name: &str| {
        root.write(
            &format!("{folder}/SKILL.md"),
            format!("---\nname: {name}\ndescription: From {folder}. Use it for tests.\n---\n{folder} body.\n"),
        );
    };
    skill("a1", "zed");
    skill("a2", "twin");
    skill("a3", "alpha");
    skill("a4", "twin");
    skill("a5", "mid");
    skill("a6", "twin");
    let provider = root.provider();

    assert_eq!(
        names(&provider),
        vec!["alpha", "good", "mid", "twin", "zed"]
    );
    assert!(provider.skill_dir("twin").expect("twin").ends_with("a2"));
    let mut duplicates = super::support::diags_with(&provider, Code::SkillDuplicate);
    duplicates.sort_by(|a, b| a.file.cmp(&b.file));
    assert_eq!(duplicates.len(), 2, "{duplicates:?}");
    for (diag, loser) in duplicates.iter().zip(["a4", "a6"]) {
        assert!(
            diag.file
                .as_deref()
                .is_some_and(|f| f.ends_with(&format!("{loser}/SKILL.md"))),
            "{diag}"
        );
        assert!(diag.message.contains("a2"), "names the winner: {diag}");
    }
    assert_good_loads(&provider);
}

#[test]
fn same_name_in_two_roots_first_root_wins() {
    let first = Root::new();
    let second = Root::new();
    first.skill("shared", "From the first root.");
    second.skill("shared", "From the second root.");
    let provider = FsProvider::new([first.path(), second.path()], FsOptions::default());

    assert_eq!(names(&provider), vec!["good", "shared"]);
    assert_eq!(
        get(&provider, "shared").expect("get").body,
        "From the first root."
    );
    assert_eq!(
        super::support::diags_with(&provider, Code::SkillDuplicate).len(),
        2
    );
    assert_good_loads(&provider);
}

#[test]
fn root_that_is_a_single_skill_folder_loads_that_skill() {
    let root = Root::new();
    root.skill("other", "Other body.");
    let provider = FsProvider::new([root.join("good")], FsOptions::default());

    assert_eq!(names(&provider), vec!["good"]);
    assert!(block_on(skills_core::SkillProvider::diagnostics(&provider)).is_empty());
    expect_kind(get(&provider, "other"), ErrorKind::SkillNotFound);
    assert_good_loads(&provider);
}

#[test]
fn root_that_is_a_single_skill_folder_still_checks_the_folder_name() {
    let root = Root::new();
    root.write(
        "folder/SKILL.md",
        "---\nname: declared\ndescription: Mismatch. Use it for tests.\n---\nBody.\n",
    );
    let provider = FsProvider::new(
        [root.join("folder"), root.join("good")],
        FsOptions::default(),
    );

    one_diag(&provider, Code::NameDirMismatch);
    assert_eq!(names(&provider), vec!["declared", "good"]);
    assert_good_loads(&provider);
}

#[test]
fn skills_below_max_depth_are_not_found() {
    let root = Root::new();
    root.skill("a/b/c/deep", "Deep body.");
    root.skill("a/b/c/d/e/deeper", "Deeper body.");

    let provider = root.provider_with(FsOptions::default().with_max_depth(4));
    assert_eq!(names(&provider), vec!["deep", "good"]);
    assert_good_loads(&provider);
}

#[test]
fn folder_budget_stops_the_search_with_a_warning() {
    let root = Root::new();
    for i in 0..20 {
        fs::create_dir_all(root.join(&format!("zz-empty-{i:02}"))).expect("mkdir");
    }
    let provider = root.provider_with(FsOptions::default().with_max_dirs(5));

    let diag = one_diag(&provider, Code::DiscoveryLimit);
    assert_eq!(diag.severity, Severity::Warning, "{diag}");
    assert!(diag.message.contains("5 folders"), "{diag}");
    assert_good_loads(&provider);
}

#[test]
fn skipped_folders_are_not_searched() {
    let root = Root::new();
    root.skill("node_modules/pkg", "Vendored.");
    root.skill("target/build", "Built.");
    root.skill(".git/hooks", "Hidden.");

    let provider = root.provider();
    assert_eq!(names(&provider), vec!["good"]);
    assert_good_loads(&provider);
}

#[test]
fn rescan_picks_up_new_and_removed_skills() {
    let root = Root::new();
    root.skill("later", "Later body.");
    let provider = root.provider();
    assert_eq!(names(&provider), vec!["good", "later"]);

    fs::remove_dir_all(root.join("later")).expect("rm");
    root.skill("newer", "Newer body.");
    assert_eq!(
        names(&provider),
        vec!["good", "later"],
        "snapshot until rescan"
    );
    let discovery = block_on(provider.rescan());
    assert!(discovery.is_valid());
    assert_eq!(names(&provider), vec!["good", "newer"]);
    expect_kind(get(&provider, "later"), ErrorKind::SkillNotFound);
    assert_good_loads(&provider);
}
