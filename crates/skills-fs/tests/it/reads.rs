//! Reading resources: binary files, size caps, line ranges, missing files.

use skills_core::{ErrorKind, LineRange, SkillProvider};
use skills_fs::FsOptions;

use super::support::{Root, assert_good_loads, block_on, expect_kind, read};

/// The start of a PNG file: the signature, then an IHDR chunk with NUL bytes.
const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

#[test]
fn binary_resource_is_refused_as_binary() {
    let root = Root::new();
    root.skill("pics", "Body.");
    root.write("pics/assets/logo.png", PNG);
    let provider = root.provider();

    let err = expect_kind(
        read(&provider, "pics", "assets/logo.png"),
        ErrorKind::Binary,
    );
    assert!(err.message().contains("assets/logo.png"), "{err}");
    assert!(err.message().contains("binary"), "{err}");
    // Still listed: it exists, it just is not text.
    let listing = super::support::get(&provider, "pics")
        .expect("pics loads")
        .resources;
    assert_eq!(listing.paths(), vec!["assets/logo.png"]);
    assert_eq!(listing.entries[0].size, Some(PNG.len() as u64));
    assert_good_loads(&provider);
}

#[test]
fn invalid_utf8_resource_is_refused_as_binary() {
    let root = Root::new();
    root.skill("latin", "Body.");
    root.write("latin/references/old.txt", b"caf\xe9 cr\xe8me\n");
    let provider = root.provider();

    expect_kind(
        read(&provider, "latin", "references/old.txt"),
        ErrorKind::Binary,
    );
    assert_good_loads(&provider);
}

#[test]
fn resource_over_max_read_bytes_is_truncated_with_a_marker() {
    let root = Root::new();
    root.skill("big", "Body.");
    let text: String = (1..=200).map(|i| format!("line {i:03}\n")).collect();
    root.write("big/references/long.md", &text);
    let provider = root.provider_with(FsOptions::default().with_max_read_bytes(100));

    let content = read(&provider, "big", "references/long.md").expect("a long file reads");
    assert!(content.truncated);
    assert_eq!(content.total_lines, 200);
    assert_eq!(content.first_line, 1);
    assert!(content.text.starts_with("line 001\nline 002\n"));
    let marker = content.text.lines().last().expect("a marker line");
    assert!(
        marker.starts_with("[truncated: output capped at 100 bytes"),
        "{marker}"
    );
    assert!(marker.contains("read a line range"), "{marker}");
    assert!(content.text.len() < text.len());
    // The good skill's guide (39 bytes) is below the cap.
    assert_good_loads(&provider);
}

/// The marker says "after line N … read a line range to see more": reading on
/// from line N + 1 must not lose any text, so line N must be complete.
#[test]
fn truncated_read_can_be_continued_without_losing_text() {
    let root = Root::new();
    root.skill("big", "Body.");
    // 9-byte lines: a 100-byte cap falls in the middle of line 12.
    let text: String = (1..=200).map(|i| format!("line {i:03}\n")).collect();
    root.write("big/references/long.md", &text);
    let provider = root.provider_with(FsOptions::default().with_max_read_bytes(100));

    let mut seen = String::new();
    let mut next = 1;
    for _ in 0..100 {
        let range = LineRange::new(next, None).expect("range");
        let content = block_on(provider.read_resource("big", "references/long.md", Some(range)))
            .expect("range read");
        let shown = if content.truncated {
            let marker_at = content.text.rfind("[truncated").expect("a marker");
            &content.text[..marker_at]
        } else {
            content.text.as_str()
        };
        seen.push_str(shown);
        if !content.truncated {
            break;
        }
        assert!(content.last_line >= next, "no progress at line {next}");
        next = content.last_line + 1;
    }
    let lost: Vec<&str> = text
        .lines()
        .filter(|line| !seen.lines().any(|s| s == *line))
        .collect();
    assert!(
        lost.is_empty(),
        "continuing from `last_line + 1` after a truncated read never shows these lines whole: {lost:?}"
    );
    assert_eq!(seen, text);
    assert_good_loads(&provider);
}

#[test]
fn truncated_read_of_a_line_range_reaches_the_rest() {
    let root = Root::new();
    root.skill("big", "Body.");
    let text: String = (1..=200).map(|i| format!("line {i:03}\n")).collect();
    root.write("big/references/long.md", &text);
    let provider = root.provider_with(FsOptions::default().with_max_read_bytes(100));

    let range = LineRange::parse("190:").expect("range");
    let content = block_on(provider.read_resource("big", "references/long.md", Some(range)))
        .expect("range read");
    assert!(!content.truncated);
    assert_eq!((content.first_line, content.last_line), (190, 200));
    assert!(content.text.starts_with("line 190\n"));
    assert!(content.text.ends_with("line 200\n"));
    assert_good_loads(&provider);
}

#[test]
fn resource_over_max_resource_bytes_is_too_large() {
    let root = Root::new();
    root.skill("huge", "Body.");
    root.write("huge/assets/data.csv", "x,y\n".repeat(1000));
    let provider = root.provider_with(FsOptions::default().with_max_resource_bytes(1024));

    let err = expect_kind(
        read(&provider, "huge", "assets/data.csv"),
        ErrorKind::TooLarge,
    );
    assert!(err.message().contains("assets/data.csv"), "{err}");
    assert!(err.message().contains("4000 bytes"), "{err}");
    assert!(err.message().contains("1024"), "{err}");
    assert_good_loads(&provider);
}

#[test]
fn line_range_selects_lines() {
    let root = Root::new();
    let provider = root.provider();

    let range = LineRange::parse("2:3").expect("range");
    let content = block_on(provider.read_resource("good", "references/guide.md", Some(range)))
        .expect("range read");
    assert_eq!(content.text, "line two\nline three\n");
    assert_eq!(
        (content.first_line, content.last_line, content.total_lines),
        (2, 3, 4)
    );
    assert!(!content.truncated);
    assert_good_loads(&provider);
}

#[test]
fn line_range_ending_past_the_end_is_clamped() {
    let root = Root::new();
    let provider = root.provider();

    let range = LineRange::parse("3:99").expect("range");
    let content = block_on(provider.read_resource("good", "references/guide.md", Some(range)))
        .expect("range read");
    assert_eq!(content.text, "line three\nline four\n");
    assert_eq!((content.first_line, content.last_line), (3, 4));
    assert_good_loads(&provider);
}

#[test]
fn line_range_starting_past_the_end_is_invalid_range() {
    let root = Root::new();
    let provider = root.provider();

    let range = LineRange::parse("5:6").expect("range");
    let err = expect_kind(
        block_on(provider.read_resource("good", "references/guide.md", Some(range))),
        ErrorKind::InvalidRange,
    );
    assert!(err.message().contains("4 lines"), "{err}");
    assert!(err.message().contains("line 5"), "{err}");
    assert_good_loads(&provider);
}

#[test]
fn unknown_file_is_resource_not_found_listing_files() {
    let root = Root::new();
    root.write("good/scripts/run.sh", "echo hi\n");
    let provider = root.provider();

    let err = expect_kind(
        read(&provider, "good", "references/missing.md"),
        ErrorKind::ResourceNotFound,
    );
    assert!(err.message().contains("references/missing.md"), "{err}");
    assert_eq!(err.available(), ["references/guide.md", "scripts/run.sh"]);
    assert!(
        err.to_string()
            .ends_with("; available: references/guide.md, scripts/run.sh"),
        "{err}"
    );
    std::fs::remove_file(root.join("good/scripts/run.sh")).expect("cleanup");
    assert_good_loads(&provider);
}

#[test]
fn folder_is_not_a_readable_resource() {
    let root = Root::new();
    let provider = root.provider();

    let err = expect_kind(
        read(&provider, "good", "references"),
        ErrorKind::ResourceNotFound,
    );
    assert!(err.message().contains("folder"), "{err}");
    assert_eq!(err.available(), ["references/guide.md"]);
    assert_good_loads(&provider);
}

#[test]
fn skill_md_itself_is_readable() {
    let root = Root::new();
    let provider = root.provider();

    let content = read(&provider, "good", "SKILL.md").expect("SKILL.md reads");
    assert_eq!(content.text, super::support::GOOD_SKILL_MD);
    assert_good_loads(&provider);
}

#[test]
fn read_from_unknown_skill_is_skill_not_found() {
    let root = Root::new();
    let provider = root.provider();

    let err = expect_kind(
        read(&provider, "nope", "references/guide.md"),
        ErrorKind::SkillNotFound,
    );
    assert_eq!(err.available(), ["good"]);
    assert_good_loads(&provider);
}

#[cfg(unix)]
mod special_files {
    use std::fs::OpenOptions;
    use std::path::Path;
    use std::process::Command;
    use std::sync::mpsc;
    use std::time::Duration;

    use skills_core::{ErrorKind, SkillProvider};

    use crate::it::support::{Root, assert_good_loads, block_on, get};

    /// Makes a named pipe with the system `mkfifo`. Panics when it cannot:
    /// a pipe test that cannot make its pipe has checked nothing.
    fn mkfifo(path: &Path) {
        let status = Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap_or_else(|e| panic!("cannot run mkfifo (coreutils): {e}"));
        assert!(
            status.success(),
            "mkfifo {} failed: {status}",
            path.display()
        );
    }

    /// A named pipe inside a skill must not block a reader forever: nobody ever
    /// writes to it, so opening and reading it would hang the caller (a model's
    /// tool call, a server worker).
    #[test]
    fn named_pipe_resource_is_refused_without_blocking() {
        let root = Root::new();
        root.skill("piped", "Body.");
        let fifo = root.join("piped/references/pipe.md");
        std::fs::create_dir_all(root.join("piped/references")).expect("mkdir");
        mkfifo(&fifo);
        let provider = std::sync::Arc::new(root.provider());

        let (tx, rx) = mpsc::channel();
        let reader = {
            let provider = std::sync::Arc::clone(&provider);
            std::thread::spawn(move || {
                let result = block_on(provider.read_resource("piped", "references/pipe.md", None));
                let _ = tx.send(
                    result
                        .map(|c| c.text)
                        .map_err(|e| (e.kind(), e.to_string())),
                );
            })
        };
        let outcome = rx.recv_timeout(Duration::from_secs(5));
        if outcome.is_err() {
            // Unblock the reader: open the write end and close it at once.
            let _ = OpenOptions::new().write(true).open(&fifo);
        }
        reader.join().expect("the reader thread does not panic");
        let result =
            outcome.expect("reading a named pipe blocked for 5 s instead of being refused");
        let (kind, message) = result.expect_err("a named pipe is not a readable text file");
        assert_ne!(kind, ErrorKind::Binary, "{message}");
        assert!(message.contains("references/pipe.md"), "{message}");
        assert_good_loads(&provider);
    }

    /// Files that cannot be read (pipes, sockets) are not offered in the listing.
    #[test]
    fn named_pipe_is_not_listed() {
        let root = Root::new();
        root.skill("piped", "Body.");
        root.write("piped/references/real.md", "real\n");
        mkfifo(&root.join("piped/references/pipe.md"));
        let provider = root.provider();

        let listing = get(&provider, "piped").expect("piped loads").resources;
        assert_eq!(listing.paths(), vec!["references/real.md"]);
        assert_good_loads(&provider);
    }

    /// A `SKILL.md` that is a named pipe is reported, not opened.
    #[test]
    fn named_pipe_skill_md_does_not_block_discovery() {
        let root = Root::new();
        std::fs::create_dir_all(root.join("piped")).expect("mkdir");
        mkfifo(&root.join("piped/SKILL.md"));
        let (tx, rx) = mpsc::channel();
        let path = root.path();
        std::thread::spawn(move || {
            let provider = skills_fs::FsProvider::new([path], skills_fs::FsOptions::default());
            let _ = tx.send(provider);
        });
        let provider = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("discovery blocked on a named pipe");
        let diag = crate::it::support::one_diag(&provider, skills_core::Code::SkillMdNotFile);
        assert!(diag.is_error());
        assert_good_loads(&provider);
    }
}
