//! Skill paths below the root and skills nested in other skills (a
//! `SKILL.md` in a subfolder of a skill folder), as rmcp's folder catalog
//! serves them.

use skills_core::{Code, SkillProvider as _};
use skills_fs::{FsOptions, FsProvider, SkillFs};

use super::support::{Root, assert_good_loads, block_on, codes, diags_with, get, names};

/// `acme/billing` with a nested `refunds` (and `refunds/partial` nested in
/// that), a reference of its own, and a flat `good`.
fn billing(root: &Root) {
    root.skill("acme/billing", "Billing.");
    root.write("acme/billing/references/rates.md", "rates\n");
    root.skill("acme/billing/refunds", "Refunds.");
    root.write("acme/billing/refunds/scripts/refund.sh", "echo refund\n");
    root.skill("acme/billing/refunds/partial", "Partial refunds.");
}

fn path_of(provider: &FsProvider, name: &str) -> Option<String> {
    let catalog = block_on(provider.list()).expect("list");
    catalog.get(name).and_then(|m| m.path.clone())
}

#[test]
fn nested_skills_are_listed_on_their_own_with_their_paths() {
    let root = Root::new();
    billing(&root);
    let provider = root.provider();
    assert_eq!(names(&provider), ["billing", "good", "partial", "refunds"]);
    for (name, path) in [
        ("billing", "acme/billing"),
        ("refunds", "acme/billing/refunds"),
        ("partial", "acme/billing/refunds/partial"),
        ("good", "good"),
    ] {
        assert_eq!(path_of(&provider, name).as_deref(), Some(path), "{name}");
        // `get` reads the folder on its own and still knows where it sits.
        let skill = get(&provider, name).expect("get");
        assert_eq!(skill.metadata.path.as_deref(), Some(path), "{name}");
    }
    // The nested skills' files stay files of the enclosing skill.
    let listing = get(&provider, "billing")
        .expect("billing")
        .resources
        .paths();
    assert_eq!(
        listing,
        [
            "references/rates.md",
            "refunds/SKILL.md",
            "refunds/partial/SKILL.md",
            "refunds/scripts/refund.sh",
        ]
    );
    assert!(block_on(provider.diagnostics()).is_empty());
    assert_good_loads(&provider);
}

#[test]
fn nested_discovery_can_be_turned_off() {
    let root = Root::new();
    billing(&root);
    let provider = root.provider_with(FsOptions::default().with_nested_skills(false));
    assert_eq!(names(&provider), ["billing", "good"]);
    assert_eq!(
        path_of(&provider, "billing").as_deref(),
        Some("acme/billing")
    );
}

#[test]
fn a_root_that_is_a_skill_has_its_folder_name_as_path() {
    let root = Root::new();
    billing(&root);
    let provider = FsProvider::new([root.join("acme/billing")], FsOptions::default());
    assert_eq!(names(&provider), ["billing", "partial", "refunds"]);
    assert_eq!(path_of(&provider, "billing").as_deref(), Some("billing"));
    assert_eq!(
        path_of(&provider, "partial").as_deref(),
        Some("billing/refunds/partial")
    );
}

/// Inside a skill, only its real, visible folders are searched, and nothing
/// skipped there is counted or warned about: dot folders, `skip_dirs`
/// folders and symlinked folders are files (or not) of the skill, not a
/// library.
#[test]
fn inside_a_skill_only_real_visible_folders_are_searched() {
    let root = Root::new();
    root.skill("outer", "Outer.");
    root.skill("outer/.hidden/secret", "Hidden.");
    root.skill("outer/node_modules/dep", "A dependency's skill.");
    root.skill("elsewhere/linked", "Reached through a link.");
    std::os::unix::fs::symlink(root.join("elsewhere"), root.join("outer/link")).expect("symlink");
    for i in 0..3 {
        root.write(&format!("outer/assets/dir-{i}/file.txt"), "x\n");
    }
    let provider = root.provider_with(FsOptions::default().with_max_depth(2));
    assert_eq!(names(&provider), ["good", "linked", "outer"]);
    // `linked` is found at its own place, not through `outer/link`.
    assert_eq!(
        path_of(&provider, "linked").as_deref(),
        Some("elsewhere/linked")
    );
    // No `dirs-skipped` for `node_modules`, no depth warning for
    // `outer/assets/dir-*`: they are the skill's files.
    assert_eq!(codes(&block_on(provider.diagnostics())), Vec::<&str>::new());
}

#[test]
fn a_broken_nested_skill_is_skipped_and_its_parent_loads() {
    let root = Root::new();
    root.skill("parent", "Parent.");
    root.write(
        "parent/templates/SKILL.md",
        "no frontmatter: an example for authors\n",
    );
    let provider = root.provider();
    assert_eq!(names(&provider), ["good", "parent"]);
    let errors = diags_with(&provider, Code::FrontmatterMissing);
    assert_eq!(errors.len(), 1, "{:#?}", block_on(provider.diagnostics()));
    assert!(
        get(&provider, "parent")
            .expect("parent")
            .resources
            .paths()
            .contains(&"templates/SKILL.md".to_owned())
    );
    assert_good_loads(&provider);
}

/// Two skills of one name, one nested: the providers' rule applies (the first
/// found wins, roots in order, then paths in byte order, each folder before
/// what is inside it) with a `skill-duplicate` warning on the other.
#[test]
fn a_name_used_twice_keeps_the_first_found() {
    let root = Root::new();
    billing(&root);
    root.skill("zz/refunds", "Another refunds.");
    let provider = root.provider();
    assert_eq!(
        path_of(&provider, "refunds").as_deref(),
        Some("acme/billing/refunds")
    );
    let duplicates = diags_with(&provider, Code::SkillDuplicate);
    assert_eq!(duplicates.len(), 1);
    assert!(
        duplicates[0].message.contains("zz/refunds"),
        "{}",
        duplicates[0]
    );
    let found = SkillFs::default().discover(&[root.path()]);
    let paths: Vec<Option<&str>> = found.skills.iter().map(|s| s.path.as_deref()).collect();
    assert_eq!(
        paths,
        [
            Some("acme/billing"),
            Some("acme/billing/refunds"),
            Some("acme/billing/refunds/partial"),
            Some("good"),
            Some("zz/refunds"),
        ]
    );
}

/// A library large enough that its skills are read while the walk goes on
/// (handed over in batches): the order, the nested skills and what each
/// folder's listing told (its `agents/openai.yaml`) come out as one walk
/// then one read of each would give.
#[test]
fn a_large_library_read_during_the_walk_keeps_the_walk_order() {
    let root = Root::new();
    let mut expected = Vec::new();
    for i in 0..400 {
        if i % 40 == 7 {
            // A folder of skills, not a skill itself.
            let name = format!("c{i:03}/k{i:03}");
            root.skill(&name, "In a category.");
            expected.push(name);
            continue;
        }
        let name = format!("s{i:03}");
        root.skill(&name, "Flat.");
        expected.push(name.clone());
        if i % 25 == 3 {
            let inner = format!("{name}/in{i:03}");
            root.skill(&inner, "Nested.");
            expected.push(inner);
        }
        if i % 50 == 11 {
            root.write(
                &format!("{name}/agents/openai.yaml"),
                "policy:\n  allow_implicit_invocation: false\n",
            );
        }
    }
    // The walk's order: names in byte order, each skill before the skills
    // inside it (and `Root`'s own `good`).
    expected.push("good".to_owned());
    expected.sort();
    let found = SkillFs::default().discover(&[root.path()]);
    let paths: Vec<&str> = found
        .skills
        .iter()
        .map(|s| s.path.as_deref().unwrap_or("?"))
        .collect();
    assert_eq!(paths, expected);
    let provider = root.provider();
    let catalog = block_on(provider.list()).expect("list");
    for i in (0..400).filter(|i| i % 40 != 7) {
        let meta = catalog.get(&format!("s{i:03}")).expect("listed");
        let manual = (i % 50 == 11).then_some(false);
        assert_eq!(meta.extensions.allow_implicit_invocation, manual, "s{i:03}");
    }
    let diagnostics = block_on(provider.diagnostics());
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
}
