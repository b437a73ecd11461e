//! Resource paths that try to leave the skill folder, lexically or through
//! symlinks.

use skills_core::ErrorKind;

use super::support::{Root, assert_good_loads, expect_kind, read};

/// A hostile path is refused with `InvalidPath` before any file is touched,
/// both through the provider and through the free `read_resource` function;
/// `good` still loads afterwards.
#[track_caller]
fn assert_refused(raw: &str, why: &str) {
    let root = Root::new();
    root.skill("victim", "Victim body.");
    root.write("victim/references/ok.md", "ok\n");
    root.write("secret.txt", "top secret\n");
    let provider = root.provider();

    let err = expect_kind(read(&provider, "victim", raw), ErrorKind::InvalidPath);
    let message = err.to_string();
    assert!(
        message.contains("refused resource path"),
        "message should say the path was refused: {message}"
    );
    assert!(
        message.contains(why),
        "message should explain `{why}`: {message}"
    );
    assert!(!message.contains("top secret"));

    let direct = skills_fs::SkillFs::new(provider.options().clone()).read_resource(
        &root.join("victim"),
        raw,
        None,
    );
    expect_kind(direct, ErrorKind::InvalidPath);

    assert_good_loads(&provider);
}

#[test]
fn dot_dot_is_refused() {
    assert_refused("../x", "`..`");
}

#[test]
fn dot_dot_after_a_folder_is_refused() {
    assert_refused("a/../../x", "`..`");
}

#[test]
fn dot_dot_to_a_real_file_is_refused() {
    assert_refused("../secret.txt", "`..`");
}

#[test]
fn absolute_path_is_refused() {
    assert_refused("/etc/passwd", "absolute");
}

#[test]
fn nul_byte_is_refused() {
    assert_refused("references/ok.md\0.txt", "NUL");
}

#[test]
fn backslash_is_refused() {
    assert_refused("a\\b", "`\\`");
}

#[test]
fn backslash_traversal_is_refused() {
    assert_refused("..\\secret.txt", "`\\`");
}

#[test]
fn drive_letter_with_slash_is_refused() {
    assert_refused("C:/x", "drive letter");
}

#[test]
fn drive_relative_path_is_refused() {
    assert_refused("c:x", "drive letter");
}

#[test]
fn empty_path_is_refused() {
    assert_refused("", "empty");
}

#[cfg(unix)]
mod symlinks {
    use std::fs;
    use std::os::unix::fs::symlink;

    use skills_core::{ErrorKind, SkillProvider};

    use crate::it::support::{
        GOOD_GUIDE, Root, assert_good_loads, block_on, expect_kind, get, read,
    };

    #[test]
    fn file_symlink_to_outside_is_refused() {
        let root = Root::new();
        root.skill("linker", "Body.");
        let secret = root.outside().join("secret.txt");
        fs::write(&secret, "top secret\n").expect("write secret");
        symlink(&secret, root.join("linker/notes.md")).expect("symlink");
        let provider = root.provider();

        let err = expect_kind(
            read(&provider, "linker", "notes.md"),
            ErrorKind::InvalidPath,
        );
        assert!(
            err.message().contains("outside the skill folder"),
            "message should say where the link leads: {err}"
        );
        assert!(!err.to_string().contains("top secret"));
        // Not offered in the listing either.
        let skill = get(&provider, "linker").expect("linker loads");
        assert!(skill.resources.is_empty(), "{:?}", skill.resources);
        assert_good_loads(&provider);
    }

    #[test]
    fn relative_file_symlink_to_a_sibling_skill_is_refused() {
        // Inside the root, but outside this skill: still refused.
        let root = Root::new();
        root.skill("linker", "Body.");
        symlink("../good/SKILL.md", root.join("linker/steal.md")).expect("symlink");
        let provider = root.provider();

        expect_kind(
            read(&provider, "linker", "steal.md"),
            ErrorKind::InvalidPath,
        );
        assert_good_loads(&provider);
    }

    #[test]
    fn symlink_to_a_folder_sharing_the_skill_name_prefix_is_refused() {
        // `good-evil` starts with the text `good` but is not inside `good`.
        let root = Root::new();
        root.write("good-evil/payload.md", "payload\n");
        symlink(
            "../../good-evil/payload.md",
            root.join("good/references/p.md"),
        )
        .expect("symlink");
        let provider = root.provider();

        expect_kind(
            read(&provider, "good", "references/p.md"),
            ErrorKind::InvalidPath,
        );
        // The refused link is left out of the listing, so `good` is unchanged.
        assert_good_loads(&provider);
    }

    #[test]
    fn dir_symlink_to_outside_is_refused_and_not_listed() {
        let root = Root::new();
        root.skill("linker", "Body.");
        root.write("linker/references/own.md", "own\n");
        let outside = root.outside().join("docs");
        fs::create_dir_all(&outside).expect("mkdir");
        fs::write(outside.join("secret.md"), "top secret\n").expect("write");
        symlink(&outside, root.join("linker/references/linked")).expect("symlink");
        let provider = root.provider();

        let err = expect_kind(
            read(&provider, "linker", "references/linked/secret.md"),
            ErrorKind::InvalidPath,
        );
        assert!(!err.to_string().contains("top secret"));
        let listing = get(&provider, "linker").expect("linker loads").resources;
        assert_eq!(listing.paths(), vec!["references/own.md"]);
        assert_eq!(listing.omitted, 0);
        let direct = skills_fs::SkillFs::new(provider.options().clone())
            .list_resources(&root.join("linker"));
        assert!(
            direct.paths().iter().all(|p| !p.contains("linked")),
            "{direct:?}"
        );
        assert_good_loads(&provider);
    }

    #[test]
    fn dangling_symlink_to_outside_is_not_readable() {
        let root = Root::new();
        root.skill("linker", "Body.");
        symlink(
            root.outside().join("missing.md"),
            root.join("linker/gone.md"),
        )
        .expect("symlink");
        let provider = root.provider();

        let err = block_on(provider.read_resource("linker", "gone.md", None))
            .expect_err("a dangling link cannot be read");
        assert!(
            matches!(
                err.kind(),
                ErrorKind::ResourceNotFound | ErrorKind::InvalidPath
            ),
            "{err}"
        );
        assert_good_loads(&provider);
    }

    #[test]
    fn symlink_inside_the_skill_is_allowed() {
        let root = Root::new();
        symlink("references/guide.md", root.join("good/alias.md")).expect("symlink");
        symlink("references", root.join("good/refs")).expect("symlink");
        let provider = root.provider();

        let content = read(&provider, "good", "alias.md").expect("read through an inner link");
        assert_eq!(content.text, GOOD_GUIDE);
        let content =
            read(&provider, "good", "refs/guide.md").expect("read through an inner dir link");
        assert_eq!(content.text, GOOD_GUIDE);
        let listing = get(&provider, "good").expect("good loads").resources;
        assert!(
            listing.paths().contains(&"alias.md".to_owned()),
            "{listing:?}"
        );
    }

    #[test]
    fn symlink_loop_inside_a_skill_is_bounded() {
        let root = Root::new();
        root.skill("loopy", "Body.");
        root.write("loopy/references/a.md", "a\n");
        symlink(".", root.join("loopy/references/again")).expect("symlink");
        symlink("..", root.join("loopy/references/up")).expect("symlink");
        symlink("self", root.join("loopy/self")).expect("symlink");
        let provider = root.provider();

        let skill = get(&provider, "loopy").expect("loopy loads");
        assert!(
            skill
                .resources
                .paths()
                .contains(&"references/a.md".to_owned())
        );
        // The self-referencing link cannot be resolved, so it is an error, not a hang.
        let err = read(&provider, "loopy", "self").expect_err("a link to itself");
        assert_ne!(err.kind(), ErrorKind::Binary, "{err}");
        assert_good_loads(&provider);
    }
}
