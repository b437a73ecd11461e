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
            "a nested SKILL.md is an ordinary file",
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
