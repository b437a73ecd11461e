//! The resource listing: grouped, sorted, without `SKILL.md` and dot files,
//! capped with a count of what was left out.

use skills_core::ResourceKind;
use skills_fs::{FsOptions, SkillFs};

use super::support::{Root, assert_good_loads, get};

fn populate(root: &Root) {
    root.skill("lister", "Lister body.");
    for (path, text) in [
        ("lister/zz-notes.md", "z"),
        ("lister/scripts/run.sh", "echo run"),
        ("lister/references/b.md", "b"),
        ("lister/assets/template.txt", "t"),
        ("lister/references/a.md", "a"),
        ("lister/references/sub/c.md", "c"),
        ("lister/README.md", "readme"),
        ("lister/scripts/.cache", "hidden"),
        ("lister/.env", "SECRET=1"),
        ("lister/.git/config", "[core]"),
        ("lister/assets/Big.csv", "x,y\n1,2\n"),
        (
            "lister/references/SKILL.md",
            "a nested SKILL.md stays a file of the enclosing skill",
        ),
    ] {
        root.write(path, text);
    }
}

#[test]
fn listing_is_grouped_sorted_and_excludes_skill_md_and_dot_files() {
    let root = Root::new();
    populate(&root);
    let provider = root.provider();

    let listing = get(&provider, "lister").expect("lister loads").resources;
    assert_eq!(
        listing.paths(),
        vec![
            "references/SKILL.md",
            "references/a.md",
            "references/b.md",
            "references/sub/c.md",
            "scripts/run.sh",
            "assets/Big.csv",
            "assets/template.txt",
            "README.md",
            "zz-notes.md",
        ]
    );
    assert_eq!(listing.omitted, 0);
    let kinds: Vec<_> = listing.entries.iter().map(|e| e.kind).collect();
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(kinds, sorted, "grouped by kind");
    assert_eq!(listing.of_kind(ResourceKind::Reference).count(), 4);
    assert_eq!(listing.of_kind(ResourceKind::Script).count(), 1);
    assert_eq!(listing.of_kind(ResourceKind::Asset).count(), 2);
    assert_eq!(listing.of_kind(ResourceKind::Other).count(), 2);
    let run = &listing.entries[4];
    assert_eq!(run.size, Some(8));
    assert_good_loads(&provider);
}

#[test]
fn listing_is_capped_at_max_listed_with_omitted() {
    let root = Root::new();
    populate(&root);
    let mut options = FsOptions::default();
    options.max_listed = 3;
    let provider = root.provider_with(options.clone());

    let listing = get(&provider, "lister").expect("lister loads").resources;
    assert_eq!(
        listing.paths(),
        vec!["references/SKILL.md", "references/a.md", "references/b.md"]
    );
    assert_eq!(listing.omitted, 6);
    assert_eq!(
        SkillFs::new(options.clone()).list_resources(&root.join("lister")),
        listing
    );
    // `good` has a single file, well under the cap.
    assert_good_loads(&provider);
}

#[test]
fn listing_stops_at_max_listing_depth() {
    let root = Root::new();
    root.skill("deep", "Body.");
    root.write("deep/references/1/2/3/4/5/6/7/8/far.md", "far");
    root.write("deep/references/near.md", "near");
    let provider = root.provider();

    let listing = get(&provider, "deep").expect("deep loads").resources;
    assert_eq!(listing.paths(), vec!["references/near.md"]);
    assert_good_loads(&provider);
}

#[test]
fn listing_is_the_same_on_every_call() {
    let root = Root::new();
    populate(&root);
    let options = FsOptions::default();
    let first = SkillFs::new(options.clone()).list_resources(&root.join("lister"));
    for _ in 0..5 {
        assert_eq!(
            SkillFs::new(options.clone()).list_resources(&root.join("lister")),
            first
        );
    }
    assert_good_loads(&root.provider());
}

#[test]
fn listing_of_a_missing_folder_is_empty() {
    let root = Root::new();
    let listing = SkillFs::new(FsOptions::default()).list_resources(&root.join("nowhere"));
    assert!(listing.is_empty());
    assert_eq!(listing.omitted, 0);
    assert_good_loads(&root.provider());
}

/// A skill with more entries than the walk looks at: the listing is the same
/// every time, holds the first files in listing order, and says "more than".
#[test]
fn a_listing_cut_by_the_walk_cap_is_deterministic_and_says_more_than() {
    let root = Root::new();
    root.skill("huge", "Huge.");
    let cap = skills_fs::LISTING_WALK_CAP;
    // Assets sort after references in the listing, and come first in byte order:
    // a walk in byte order would list assets; the listing order lists references.
    for i in 0..(cap / 2 + 50) {
        root.write(&format!("huge/assets/a{i:05}.txt"), "a");
        root.write(&format!("huge/references/r{i:05}.md"), "r");
    }
    let fs = SkillFs::new(FsOptions::default());
    let listing = fs.list_resources(&root.join("huge"));
    assert!(listing.truncated, "the walk stopped at its cap");
    assert_eq!(listing.entries.len(), FsOptions::default().max_listed);
    assert_eq!(listing.paths()[0], "references/r00000.md");
    assert_eq!(listing.paths()[499], "references/r00499.md");
    // Everything walked but not listed is counted: the cap minus what was
    // listed, minus the three top-level entries (SKILL.md and two folders).
    assert_eq!(listing.omitted, cap - 500 - 3);
    assert_eq!(
        listing.omitted_note().as_deref(),
        Some(format!("more than {} not listed", cap - 503).as_str())
    );
    for _ in 0..2 {
        assert_eq!(fs.list_resources(&root.join("huge")), listing);
    }
}

/// Under the cap, `omitted` is exact and the listing is not marked cut.
#[test]
fn a_listing_under_the_walk_cap_has_an_exact_omitted_count() {
    let root = Root::new();
    root.skill("many", "Many.");
    for i in 0..700 {
        root.write(&format!("many/references/r{i:04}.md"), "r");
    }
    let listing = SkillFs::new(FsOptions::default()).list_resources(&root.join("many"));
    assert!(!listing.truncated);
    assert_eq!(listing.entries.len(), 500);
    assert_eq!(listing.omitted, 200);
    assert_eq!(
        listing.omitted_note().as_deref(),
        Some("200 more not listed")
    );
}

/// Files sort before a folder of the same stem, as in path order.
#[test]
fn listing_order_is_path_order_inside_groups() {
    let root = Root::new();
    root.skill("order", "Order.");
    for path in [
        "order/references/a/b.md",
        "order/references/a.md",
        "order/references/a-b.md",
    ] {
        root.write(path, "x");
    }
    let listing = SkillFs::new(FsOptions::default()).list_resources(&root.join("order"));
    assert_eq!(
        listing.paths(),
        ["references/a-b.md", "references/a.md", "references/a/b.md"]
    );
}
