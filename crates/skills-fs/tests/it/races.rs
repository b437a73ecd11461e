//! Files swapped while they are read: a symlink to a file outside the skill, or
//! a named pipe, renamed over a resource (or `SKILL.md`) back and forth while
//! other threads read it. No read may return the outside file, and none may
//! hang.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use skills_core::ErrorKind;
use skills_fs::{FsOptions, SkillFs};

use crate::it::support::Root;

const SECRET: &str = "TOP-SECRET-OUTSIDE-THE-SKILL";
const INSIDE: &str = "inside the skill\n";
/// How long the swapper runs.
const SWAP_FOR: Duration = Duration::from_secs(3);
/// How long the swapper may run at most, waiting for enough reads of each kind.
const ENOUGH_WAIT: Duration = Duration::from_secs(60);
/// A read that has not returned after this long is hung (a hang detector, not
/// a timing assertion).
const HANG: Duration = Duration::from_secs(10);

/// Makes a named pipe; fails the test when it cannot.
pub(crate) fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap_or_else(|e| panic!("mkfifo {} failed: {e}", path.display()));
}

#[derive(Debug, Default)]
struct Tally {
    inside: AtomicUsize,
    leaked: AtomicUsize,
    refused: AtomicUsize,
    other: AtomicUsize,
}

/// Runs `swap` in a loop for [`SWAP_FOR`] while 4 threads run `read`; fails if
/// a reader does not finish within [`HANG`] of the end.
fn race(
    swap: impl Fn(usize) + Send + 'static,
    read: impl Fn(&Tally) + Send + Sync + 'static,
    walk: bool,
) -> Arc<Tally> {
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let read = Arc::new(read);
    let (done_tx, done_rx) = mpsc::channel();
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (stop, tally, read, done) = (
                Arc::clone(&stop),
                Arc::clone(&tally),
                Arc::clone(&read),
                done_tx.clone(),
            );
            thread::spawn(move || {
                skills_fs::force_walk_on_this_thread(walk);
                while !stop.load(Ordering::Relaxed) {
                    read(&tally);
                }
                let _ = done.send(());
            })
        })
        .collect();
    let started = Instant::now();
    let mut i = 0;
    // At least `SWAP_FOR`, and on a busy machine until both outcomes were seen
    // often enough for the test to mean something (at most `ENOUGH_WAIT`).
    let enough = |t: &Tally| {
        t.inside.load(Ordering::Relaxed) >= 200 && t.refused.load(Ordering::Relaxed) >= 20
    };
    while started.elapsed() < SWAP_FOR || (!enough(&tally) && started.elapsed() < ENOUGH_WAIT) {
        swap(i);
        i += 1;
    }
    stop.store(true, Ordering::Relaxed);
    for _ in 0..readers.len() {
        done_rx
            .recv_timeout(HANG)
            .expect("a reader is hung: a read did not return within 10 s");
    }
    for reader in readers {
        reader.join().expect("a reader panicked");
    }
    assert!(i >= 10, "the swapper ran only {i} times");
    tally
}

fn tally_text(tally: &Tally, text: &str) {
    if text.contains(SECRET) {
        tally.leaked.fetch_add(1, Ordering::Relaxed);
    } else if text == INSIDE {
        tally.inside.fetch_add(1, Ordering::Relaxed);
    } else {
        tally.other.fetch_add(1, Ordering::Relaxed);
    }
}

struct Swapped {
    root: Root,
    dir: PathBuf,
    secret: PathBuf,
}

fn swapped() -> Swapped {
    let root = Root::new();
    root.skill("racy", "Body.");
    root.write("racy/references/x.md", INSIDE);
    let secret = root.outside().join("secret.md");
    std::fs::write(&secret, SECRET).expect("write the secret");
    let dir = root.join("racy");
    Swapped { root, dir, secret }
}

/// Renames a fresh symlink to `target` over `at`, then a fresh regular file
/// with `contents`: `at` always exists, alternately a link and a file.
fn swap_link(at: &Path, target: &Path, contents: &str, i: usize) {
    let dir = at.parent().expect("parent");
    let link = dir.join(format!(".link-{i}"));
    std::os::unix::fs::symlink(target, &link).expect("symlink");
    std::fs::rename(&link, at).expect("rename the link over");
    let file = dir.join(format!(".file-{i}"));
    std::fs::write(&file, contents).expect("write");
    std::fs::rename(&file, at).expect("rename the file over");
}

fn check_no_leak(tally: &Tally) {
    let (inside, leaked, refused, other) = (
        tally.inside.load(Ordering::Relaxed),
        tally.leaked.load(Ordering::Relaxed),
        tally.refused.load(Ordering::Relaxed),
        tally.other.load(Ordering::Relaxed),
    );
    eprintln!("reads: {inside} inside, {refused} refused, {leaked} leaked, {other} other");
    assert_eq!(
        leaked, 0,
        "reads returned the outside file ({inside} inside, {refused} refused, {other} other)"
    );
    assert_eq!(other, 0, "unexpected read results");
    assert!(
        inside > 100,
        "too few successful reads for the test to mean anything: {inside}"
    );
    assert!(
        refused > 0,
        "no read ever met the symlink: the race did not happen"
    );
}

fn resource_race(walk: bool) {
    let s = swapped();
    let fs = SkillFs::new(FsOptions::default());
    let (dir, at) = (s.dir.clone(), s.dir.join("references/x.md"));
    let secret = s.secret.clone();
    let tally = race(
        move |i| swap_link(&at, &secret, INSIDE, i),
        move |tally| {
            match fs.read_resource(&dir, "references/x.md", None) {
                Ok(content) => tally_text(tally, &content.text),
                Err(err) if err.kind() == ErrorKind::InvalidPath => {
                    assert!(err.message().contains("outside the skill"), "{err}");
                    tally.refused.fetch_add(1, Ordering::Relaxed);
                }
                Err(err) => panic!("unexpected error: {err}"),
            }
            match fs.read_resource_bytes(&dir, "references/x.md") {
                Ok(read) => tally_text(tally, &String::from_utf8_lossy(&read.bytes)),
                Err(err) if err.kind() == ErrorKind::InvalidPath => {
                    tally.refused.fetch_add(1, Ordering::Relaxed);
                }
                Err(err) => panic!("unexpected error: {err}"),
            }
        },
        walk,
    );
    check_no_leak(&tally);
    drop(s.root);
}

/// `openat2(RESOLVE_BENEATH)` where the kernel has it.
#[test]
fn resource_swapped_with_an_outside_symlink_never_leaks() {
    resource_race(false);
}

/// The component walk used where `openat2` is missing.
#[test]
fn resource_swapped_with_an_outside_symlink_never_leaks_without_openat2() {
    resource_race(true);
}

/// `SKILL.md` itself swapped with a symlink to an outside `SKILL.md`: loading
/// the skill never parses the outside file.
#[test]
fn skill_md_swapped_with_an_outside_symlink_never_leaks() {
    let s = swapped();
    let outside_md = s.root.outside().join("SKILL.md");
    std::fs::write(
        &outside_md,
        format!("---\nname: racy\ndescription: {SECRET}\n---\n{SECRET}\n"),
    )
    .expect("write");
    let inside_md = "---\nname: racy\ndescription: The racy skill. Use it for tests.\n---\nBody.\n";
    let fs = SkillFs::new(FsOptions::default());
    let (dir, at) = (s.dir.clone(), s.dir.join("SKILL.md"));
    let tally = race(
        move |i| swap_link(&at, &outside_md, inside_md, i),
        move |tally| {
            let found = fs.load_skill_dir(&dir);
            match &found.document {
                Some(doc)
                    if doc.body.contains(SECRET) || doc.metadata.description.contains(SECRET) =>
                {
                    tally.leaked.fetch_add(1, Ordering::Relaxed);
                }
                Some(_) => {
                    tally.inside.fetch_add(1, Ordering::Relaxed);
                }
                None if found
                    .diagnostics
                    .iter()
                    .any(|d| d.code == skills_core::Code::PathOutsideSkill) =>
                {
                    tally.refused.fetch_add(1, Ordering::Relaxed);
                }
                None => panic!("unexpected diagnostics: {:?}", found.diagnostics),
            }
        },
        false,
    );
    check_no_leak(&tally);
}

fn fifo_race(walk: bool) {
    let s = swapped();
    let fs = SkillFs::new(FsOptions::default());
    let (dir, at) = (s.dir.clone(), s.dir.join("references/x.md"));
    let tally = race(
        move |i| {
            let refs = at.parent().expect("parent");
            let fifo = refs.join(format!(".fifo-{i}"));
            mkfifo(&fifo);
            std::fs::rename(&fifo, &at).expect("rename the pipe over");
            let file = refs.join(format!(".file-{i}"));
            std::fs::write(&file, INSIDE).expect("write");
            std::fs::rename(&file, &at).expect("rename the file over");
        },
        move |tally| match fs.read_resource(&dir, "references/x.md", None) {
            Ok(content) => tally_text(tally, &content.text),
            Err(err) if err.kind() == ErrorKind::InvalidPath => {
                assert!(err.message().contains("not a regular file"), "{err}");
                tally.refused.fetch_add(1, Ordering::Relaxed);
            }
            Err(err) => panic!("unexpected error: {err}"),
        },
        walk,
    );
    check_no_leak(&tally);
}

/// A named pipe swapped in is refused without blocking (nobody ever writes to
/// it: a read that opened it for reading and waited would hang forever).
#[test]
fn resource_swapped_with_a_named_pipe_never_hangs() {
    fifo_race(false);
}

/// The same through the component walk.
#[test]
fn resource_swapped_with_a_named_pipe_never_hangs_without_openat2() {
    fifo_race(true);
}
