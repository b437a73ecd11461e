//! The `FsProvider` contract: fresh bodies on `get`, typed not-found errors.

use std::fs;

use skills_core::{ErrorKind, SkillProvider};

use super::support::{GOOD_SKILL_MD, Root, assert_good_loads, block_on, expect_kind, get, names};

#[test]
fn get_rereads_an_edited_body() {
    let root = Root::new();
    root.skill("editable", "First body.");
    let provider = root.provider();
    assert_eq!(get(&provider, "editable").expect("get").body, "First body.");

    root.skill("editable", "Second body.\n\nWith more.");
    assert_eq!(
        get(&provider, "editable").expect("get after edit").body,
        "Second body.\n\nWith more."
    );
    assert_good_loads(&provider);
}

#[test]
fn get_sees_new_resources_without_a_rescan() {
    let root = Root::new();
    let provider = root.provider();
    root.write("good/scripts/new.sh", "echo new\n");

    let skill = get(&provider, "good").expect("get");
    assert_eq!(
        skill.resources.paths(),
        vec!["references/guide.md", "scripts/new.sh"]
    );
    fs::remove_file(root.join("good/scripts/new.sh")).expect("rm");
    assert_good_loads(&provider);
}

#[test]
fn get_of_a_skill_broken_since_the_scan_is_invalid_skill() {
    let root = Root::new();
    root.skill("fragile", "Body.");
    let provider = root.provider();
    root.write(
        "fragile/SKILL.md",
        "---\nname: fragile\ndescription: [unclosed\n---\nBroken YAML now.\n",
    );

    let err = expect_kind(get(&provider, "fragile"), ErrorKind::InvalidSkill);
    assert!(err.message().contains("yaml-invalid"), "{err}");
    assert!(err.message().contains("fragile"), "{err}");
    assert_good_loads(&provider);
}

#[test]
fn get_of_a_skill_whose_skill_md_went_away_since_the_scan_is_skill_not_found() {
    // The folder stays (or something else took its place): without its
    // SKILL.md there is no skill of that name any more, not a broken one.
    let root = Root::new();
    root.skill("going", "Body.");
    let provider = root.provider();
    fs::remove_file(root.join("going/SKILL.md")).expect("rm");

    let err = expect_kind(get(&provider, "going"), ErrorKind::SkillNotFound);
    assert!(err.message().contains("going"), "{err}");
    assert_good_loads(&provider);
}

#[test]
fn get_of_a_skill_renamed_since_the_scan_is_skill_not_found() {
    let root = Root::new();
    root.skill("renamed", "Body.");
    let provider = root.provider();
    root.write(
        "renamed/SKILL.md",
        "---\nname: brand-new\ndescription: Renamed. Use it for tests.\n---\nBody.\n",
    );

    expect_kind(get(&provider, "renamed"), ErrorKind::SkillNotFound);
    expect_kind(get(&provider, "brand-new"), ErrorKind::SkillNotFound);
    assert_good_loads(&provider);
}

#[test]
fn get_of_a_deleted_skill_is_an_error_not_a_panic() {
    let root = Root::new();
    root.skill("doomed", "Body.");
    let provider = root.provider();
    fs::remove_dir_all(root.join("doomed")).expect("rm");

    let err = get(&provider, "doomed").expect_err("deleted");
    assert!(
        matches!(
            err.kind(),
            ErrorKind::InvalidSkill | ErrorKind::SkillNotFound | ErrorKind::Io
        ),
        "{err}"
    );
    assert!(!err.message().is_empty());
    assert_good_loads(&provider);
}

#[test]
fn unknown_skill_is_skill_not_found_listing_names() {
    let root = Root::new();
    root.skill("alpha", "A.");
    root.skill("beta", "B.");
    let provider = root.provider();

    let err = expect_kind(get(&provider, "gamma"), ErrorKind::SkillNotFound);
    assert_eq!(err.available(), ["alpha", "beta", "good"]);
    assert_eq!(
        err.to_string(),
        "no skill named `gamma`; available: alpha, beta, good"
    );
    assert_good_loads(&provider);
}

#[test]
fn skill_location_points_at_its_skill_md() {
    let root = Root::new();
    let provider = root.provider();

    let skill = get(&provider, "good").expect("get");
    let location = skill.location.expect("a location");
    assert!(location.ends_with("good/SKILL.md"), "{location}");
    assert_eq!(
        fs::read_to_string(&location).expect("location is a readable path"),
        GOOD_SKILL_MD
    );
    assert_good_loads(&provider);
}

#[test]
fn provider_is_usable_across_threads() {
    let root = Root::new();
    root.skill("other", "Other body.");
    let provider = std::sync::Arc::new(root.provider());

    let handles: Vec<_> = (0..4)
        .map(|_| {
            let provider = std::sync::Arc::clone(&provider);
            std::thread::spawn(move || {
                for _ in 0..20 {
                    let catalog = block_on(provider.list()).expect("list");
                    assert_eq!(catalog.len(), 2);
                    block_on(provider.get("other")).expect("get");
                    block_on(provider.rescan());
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().expect("no panic");
    }
    assert_eq!(names(&provider), vec!["good", "other"]);
    assert_good_loads(&provider);
}
