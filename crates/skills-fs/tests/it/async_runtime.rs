//! `FsProvider` under a multi-thread tokio runtime: file-system work leaves the
//! runtime's threads, refreshes are single-flight, and many concurrent callers
//! racing with edits of the library get no error and, once the edits stop and
//! the cooldown passes, only answers that reflect the final state.
//!
//! Time is a [`ManualClock`]; nothing here asserts a duration.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use skills_core::{ErrorKind, SkillProvider};
use skills_fs::{FileStat, FsEnv, FsOptions, FsProvider, ManualClock, RealFs, Vfs};
use skills_testkit::fixture::SkillDir;
use tokio::task::JoinSet;

use super::support::{GOOD_GUIDE, Root, block_on, write_file};

const COOLDOWN: Duration = Duration::from_secs(2);

/// The skills present from start to end: never removed, edited often.
const STABLE: &[&str] = &["alpha", "beta", "gamma", "delta"];

/// The skill `name` whose body says `body`.
fn skill(name: &str, body: &str) -> SkillDir {
    SkillDir::new(name, &format!("The {name} skill. Use it for tests.")).body(format!("{body}\n"))
}

fn skill_md(name: &str, body: &str) -> String {
    String::from_utf8(skill(name, body).skill_md()).expect("UTF-8")
}

/// Replaces a file through a temporary file and a rename, as editors save: a
/// reader sees the old or the new contents, never a half-written file.
fn save_atomically(path: &Path, contents: &str) {
    let tmp = path.with_extension("tmp~");
    fs::write(&tmp, contents).expect("write temp");
    fs::rename(&tmp, path).expect("rename");
}

/// Creates the skill folder `name` with `body` aside, then renames it into the
/// root in one step.
fn add_skill(root: &Root, name: &str, body: &str) {
    let staged = skill(name, body)
        .in_folder(&format!("staged-{name}"))
        .file("references/guide.md", format!("{name} guide\n"))
        .write_in(&root.outside())
        .expect("stage the skill");
    fs::rename(&staged, root.join(name)).expect("move the skill in");
}

/// Renames the skill folder `name` out of the root in one step, then deletes it.
fn remove_skill(root: &Root, name: &str) {
    let gone = root.outside().join(format!("gone-{name}"));
    fs::rename(root.join(name), &gone).expect("move the skill out");
    fs::remove_dir_all(&gone).expect("delete it");
}

fn body(name: &str, version: usize) -> String {
    format!("{name} body version {version}.")
}

fn guide(name: &str, version: usize) -> String {
    format!("{name} guide version {version}\n")
}

/// The library as the editor task leaves it.
#[derive(Debug, Default)]
struct Library {
    /// Present skill → (body, guide text).
    skills: BTreeMap<String, (String, String)>,
}

fn clock_provider(root: &Root, fs: Arc<dyn Vfs>) -> (FsProvider, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let env = FsEnv::default().with_vfs(fs).with_clock(clock.clone());
    let options = FsOptions::default().with_cooldown(COOLDOWN);
    (FsProvider::with_env([root.path()], options, env), clock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_callers_racing_with_edits_get_no_error_and_no_stale_answer_after_the_cooldown()
{
    const CALLERS: usize = 1_000;
    const ROUNDS: usize = 40;
    let root = Arc::new(Root::new());
    let mut library = Library::default();
    library.skills.insert(
        "good".to_owned(),
        ("Good body.".to_owned(), GOOD_GUIDE.to_owned()),
    );
    for name in STABLE {
        root.write(&format!("{name}/SKILL.md"), skill_md(name, &body(name, 0)));
        root.write(&format!("{name}/references/guide.md"), guide(name, 0));
        library
            .skills
            .insert((*name).to_owned(), (body(name, 0), guide(name, 0)));
    }
    let (provider, clock) = clock_provider(&root, Arc::new(RealFs));
    let provider = Arc::new(provider);
    let editing = Arc::new(AtomicBool::new(true));

    // The callers: each loops over gets and reads until the edits stop.
    let mut callers = JoinSet::new();
    for i in 0..CALLERS {
        let provider = Arc::clone(&provider);
        let editing = Arc::clone(&editing);
        callers.spawn(async move {
            let mut calls = 0_usize;
            loop {
                let name = STABLE[(i + calls) % STABLE.len()];
                let skill = provider
                    .get(name)
                    .await
                    .expect("a stable skill always loads");
                assert_eq!(skill.name(), name);
                assert!(skill.body.starts_with(&format!("{name} body version ")));
                let guide = provider
                    .read_resource(name, "references/guide.md", None)
                    .await
                    .expect("a stable skill's guide always reads");
                assert!(guide.text.starts_with(&format!("{name} guide version ")));
                // A skill that comes and goes: found, or not found, nothing else.
                let extra = format!("extra-{}", (i + calls) % 3);
                match provider.get(&extra).await {
                    Ok(skill) => assert_eq!(skill.name(), extra),
                    Err(err) => assert_eq!(err.kind(), ErrorKind::SkillNotFound, "{err}"),
                }
                calls += 1;
                if !editing.load(Ordering::Acquire) {
                    return calls;
                }
                tokio::task::yield_now().await;
            }
        });
    }

    // The editor: rewrites bodies and guides, adds and removes skills, moves the
    // clock past the cooldown and forces rescans, while the callers run.
    let editor = {
        let root = Arc::clone(&root);
        let provider = Arc::clone(&provider);
        let clock = Arc::clone(&clock);
        tokio::task::spawn_blocking(move || {
            let mut library = library;
            for round in 1..=ROUNDS {
                for name in STABLE {
                    let dir = root.join(name);
                    save_atomically(&dir.join("SKILL.md"), &skill_md(name, &body(name, round)));
                    save_atomically(&dir.join("references/guide.md"), &guide(name, round));
                    library
                        .skills
                        .insert((*name).to_owned(), (body(name, round), guide(name, round)));
                }
                let extra = format!("extra-{}", round % 3);
                if library.skills.remove(&extra).is_some() {
                    remove_skill(&root, &extra);
                } else {
                    let text = body(&extra, round);
                    add_skill(&root, &extra, &text);
                    library
                        .skills
                        .insert(extra.clone(), (text, format!("{extra} guide\n")));
                }
                clock.advance(COOLDOWN);
                if round % 5 == 0 {
                    let handle = tokio::runtime::Handle::current();
                    handle.block_on(provider.rescan());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            library
        })
    };
    let library = editor.await.expect("the editor finished");
    editing.store(false, Ordering::Release);
    while let Some(calls) = callers.join_next().await {
        calls.expect("no caller failed");
    }

    // Edits stopped; the cooldown passes: every answer is the final state.
    clock.advance(COOLDOWN);
    let expected_names: Vec<String> = library.skills.keys().cloned().collect();
    let library = Arc::new(library);
    let mut checks = JoinSet::new();
    for i in 0..CALLERS {
        let provider = Arc::clone(&provider);
        let library = Arc::clone(&library);
        let expected_names = expected_names.clone();
        checks.spawn(async move {
            let catalog = provider.list().await.expect("list");
            let names: Vec<String> = catalog.names().map(str::to_owned).collect();
            assert_eq!(names, expected_names);
            let name = STABLE[i % STABLE.len()];
            let (body, guide) = &library.skills[name];
            let skill = provider.get(name).await.expect("get");
            assert_eq!(&skill.body, body);
            let text = provider
                .read_resource(name, "references/guide.md", None)
                .await
                .expect("read")
                .text;
            assert_eq!(&text, guide);
            for k in 0..3 {
                let extra = format!("extra-{k}");
                match (library.skills.get(&extra), provider.get(&extra).await) {
                    (Some((body, _)), Ok(skill)) => assert_eq!(&skill.body, body),
                    (None, Err(err)) => assert_eq!(err.kind(), ErrorKind::SkillNotFound),
                    (want, got) => panic!("{extra}: expected {want:?}, got {got:?}"),
                }
            }
        });
    }
    while let Some(done) = checks.join_next().await {
        done.expect("every final answer is current");
    }
}

/// A [`Vfs`] over the real file system whose `read_dir` and `metadata` of one
/// folder are slow, and which counts them, records how many `read_dir`s of it
/// overlap and on which threads the calls run.
#[derive(Debug)]
struct SlowRoot {
    root: PathBuf,
    delay: Duration,
    read_dirs: AtomicUsize,
    stats: AtomicUsize,
    running: AtomicUsize,
    max_running: AtomicUsize,
    threads: Mutex<Vec<ThreadId>>,
}

impl SlowRoot {
    fn new(root: PathBuf, delay: Duration) -> Self {
        Self {
            root,
            delay,
            read_dirs: AtomicUsize::new(0),
            stats: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            max_running: AtomicUsize::new(0),
            threads: Mutex::new(Vec::new()),
        }
    }

    fn reset(&self) {
        self.read_dirs.store(0, Ordering::SeqCst);
        self.stats.store(0, Ordering::SeqCst);
    }

    fn threads(&self) -> Vec<ThreadId> {
        self.threads.lock().expect("threads").clone()
    }
}

impl Vfs for SlowRoot {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        self.threads
            .lock()
            .expect("threads")
            .push(std::thread::current().id());
        if path == self.root {
            self.read_dirs.fetch_add(1, Ordering::SeqCst);
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_running.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(self.delay);
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
        RealFs.read_dir(path)
    }

    fn metadata(&self, path: &Path) -> io::Result<FileStat> {
        self.threads
            .lock()
            .expect("threads")
            .push(std::thread::current().id());
        if path == self.root {
            self.stats.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(self.delay);
        }
        RealFs.metadata(path)
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<FileStat> {
        RealFs.symlink_metadata(path)
    }

    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        self.threads
            .lock()
            .expect("threads")
            .push(std::thread::current().id());
        RealFs.read(path, cap)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        RealFs.canonicalize(path)
    }
}

/// Sets every modification time under `path` an hour back, so no stat is racy
/// and an unchanged tree is not re-scanned.
fn backdate(path: &Path) {
    let past = std::time::SystemTime::now() - Duration::from_secs(3600);
    let meta = fs::symlink_metadata(path).expect("stat");
    if meta.is_dir() {
        for entry in fs::read_dir(path).expect("read_dir") {
            backdate(&entry.expect("entry").path());
        }
    }
    fs::File::open(path)
        .expect("open")
        .set_times(fs::FileTimes::new().set_modified(past).set_accessed(past))
        .expect("set times");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_callers_after_the_cooldown_cost_one_check_and_one_scan() {
    const CALLERS: usize = 64;
    let root = Root::new();
    root.skill("alpha", "A.");
    backdate(&root.path());
    let slow = Arc::new(SlowRoot::new(root.path(), Duration::from_millis(30)));
    let (provider, clock) = clock_provider(&root, slow.clone());
    let provider = Arc::new(provider);

    let run = |expected: &'static [&'static str]| {
        let provider = Arc::clone(&provider);
        async move {
            let barrier = Arc::new(tokio::sync::Barrier::new(CALLERS));
            let mut set = JoinSet::new();
            for i in 0..CALLERS {
                let provider = Arc::clone(&provider);
                let barrier = Arc::clone(&barrier);
                set.spawn(async move {
                    barrier.wait().await;
                    // Half list, half get: both go through the one check.
                    if i % 2 == 0 {
                        let catalog = provider.list().await.expect("list");
                        let names: Vec<_> = catalog.names().map(str::to_owned).collect();
                        assert_eq!(names, expected);
                    } else {
                        provider.get("good").await.expect("get good");
                    }
                });
            }
            while let Some(done) = set.join_next().await {
                done.expect("no caller failed");
            }
        }
    };

    // Nothing changed: one stat pass for every caller, no scan.
    slow.reset();
    clock.advance(COOLDOWN);
    run(&["alpha", "good"]).await;
    assert_eq!(slow.stats.load(Ordering::SeqCst), 1, "one check");
    assert_eq!(slow.read_dirs.load(Ordering::SeqCst), 0, "no scan");

    // A skill added: one scan for every caller.
    root.skill("beta", "B.");
    slow.reset();
    clock.advance(COOLDOWN);
    run(&["alpha", "beta", "good"]).await;
    assert_eq!(slow.read_dirs.load(Ordering::SeqCst), 1, "one scan");
    assert_eq!(slow.max_running.load(Ordering::SeqCst), 1);

    // Forced rescans from many tasks at once never overlap.
    let mut set = JoinSet::new();
    for _ in 0..8 {
        let provider = Arc::clone(&provider);
        set.spawn(async move { provider.rescan().await.skills.len() });
    }
    while let Some(found) = set.join_next().await {
        assert_eq!(found.expect("rescan"), 3);
    }
    assert_eq!(
        slow.max_running.load(Ordering::SeqCst),
        1,
        "one scan at a time"
    );
}

/// A gate that a file-system call waits on until an async task opens it.
#[derive(Debug, Default)]
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
    entered: tokio::sync::Notify,
    timed_out: AtomicBool,
}

impl Gate {
    /// Called from the file-system call: announces it and waits (10 s at most).
    fn pass(&self) {
        self.entered.notify_one();
        let open = self.open.lock().expect("gate");
        let (open, timeout) = self
            .opened
            .wait_timeout_while(open, Duration::from_secs(10), |open| !*open)
            .expect("gate");
        if timeout.timed_out() && !*open {
            self.timed_out.store(true, Ordering::SeqCst);
        }
    }

    fn open(&self) {
        *self.open.lock().expect("gate") = true;
        self.opened.notify_all();
    }
}

/// `read_dir` of the root waits at the gate once armed.
#[derive(Debug)]
struct GatedRoot {
    root: PathBuf,
    armed: AtomicBool,
    gate: Arc<Gate>,
}

impl Vfs for GatedRoot {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        if path == self.root && self.armed.swap(false, Ordering::SeqCst) {
            self.gate.pass();
        }
        RealFs.read_dir(path)
    }

    fn metadata(&self, path: &Path) -> io::Result<FileStat> {
        RealFs.metadata(path)
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<FileStat> {
        RealFs.symlink_metadata(path)
    }

    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        RealFs.read(path, cap)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        RealFs.canonicalize(path)
    }
}

/// On a single-threaded runtime, a task opens the gate the scan waits at. Were
/// the scan run on the runtime's thread, that task could never run and the gate
/// would time out.
#[test]
fn a_scan_never_runs_on_the_runtime_thread() {
    let root = Root::new();
    let gate = Arc::new(Gate::default());
    let fs = Arc::new(GatedRoot {
        root: root.path(),
        armed: AtomicBool::new(false),
        gate: Arc::clone(&gate),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let provider = FsProvider::open_with_env(
            [root.path()],
            FsOptions::default(),
            FsEnv::default().with_vfs(fs.clone()),
        )
        .await;
        root.skill("beta", "B.");
        fs.armed.store(true, Ordering::SeqCst);
        let opener = {
            let gate = Arc::clone(&gate);
            tokio::spawn(async move {
                gate.entered.notified().await;
                gate.open();
            })
        };
        let discovery = provider.rescan().await;
        opener.await.expect("opener");
        assert!(
            !gate.timed_out.load(Ordering::SeqCst),
            "the scan blocked the runtime"
        );
        assert_eq!(discovery.skills.len(), 2);
        let catalog = provider.list().await.expect("list");
        assert_eq!(catalog.names().collect::<Vec<_>>(), ["beta", "good"]);
    });
}

#[test]
fn file_work_runs_on_the_blocking_pool_in_a_runtime_and_inline_outside() {
    let root = Root::new();
    let slow = Arc::new(SlowRoot::new(root.path(), Duration::ZERO));
    let options = FsOptions::default().with_cooldown(Duration::ZERO);
    let env = FsEnv::default().with_vfs(slow.clone());

    // Outside a runtime: every call on this thread.
    let here = std::thread::current().id();
    let provider = block_on(FsProvider::open_with_env(
        [root.path()],
        options.clone(),
        env.clone(),
    ));
    block_on(provider.get("good")).expect("get");
    block_on(provider.read_resource("good", "references/guide.md", None)).expect("read");
    let threads = slow.threads();
    assert!(!threads.is_empty());
    assert!(
        threads.iter().all(|t| *t == here),
        "inline outside a runtime"
    );

    // Inside a current-thread runtime driven by this thread: no call on it.
    slow.threads.lock().expect("threads").clear();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let provider = FsProvider::open_with_env([root.path()], options, env).await;
        provider.list().await.expect("list");
        provider.get("good").await.expect("get");
        provider
            .read_resource("good", "references/guide.md", None)
            .await
            .expect("read");
        provider.rescan().await;
    });
    let threads = slow.threads();
    assert!(threads.len() >= 4, "{threads:?}");
    assert!(
        threads.iter().all(|t| *t != here),
        "a file-system call ran on the runtime thread"
    );
}

/// A rescan whose caller gives up keeps the refresh lock until its blocking
/// work is done, so a second scan cannot start beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_rescan_still_finishes_before_the_next_scan_starts() {
    let root = Root::new();
    let slow = Arc::new(SlowRoot::new(root.path(), Duration::from_millis(100)));
    let env = FsEnv::default().with_vfs(slow.clone());
    let provider =
        Arc::new(FsProvider::open_with_env([root.path()], FsOptions::default(), env).await);
    let scans_before = slow.read_dirs.load(Ordering::SeqCst);
    let first = {
        let provider = Arc::clone(&provider);
        tokio::spawn(async move { provider.rescan().await })
    };
    // Let it reach the slow `read_dir` (a count that only grows, so a thread
    // paused past the delay cannot miss it), then cancel it.
    while slow.read_dirs.load(Ordering::SeqCst) == scans_before {
        tokio::task::yield_now().await;
    }
    first.abort();
    // On a loaded machine the rescan may have finished before the abort;
    // either way the next scan must not overlap it.
    if let Err(err) = first.await {
        assert!(err.is_cancelled(), "{err}");
    }
    let discovery = provider.rescan().await;
    assert_eq!(discovery.skills.len(), 1);
    assert_eq!(
        slow.max_running.load(Ordering::SeqCst),
        1,
        "scans overlapped"
    );
}

#[test]
fn get_shares_one_cached_skill() {
    let root = Root::new();
    // Settled files: a racy `get` result is re-read, not shared.
    backdate(&root.path());
    let provider = root.provider();
    let a = block_on(provider.get("good")).expect("get");
    let b = block_on(provider.get("good")).expect("get");
    assert!(Arc::ptr_eq(&a, &b), "the second get is the cached skill");
    assert_eq!(a.body, "Good body.");
}

#[test]
fn a_skill_removed_after_the_scan_is_not_found() {
    let root = Root::new();
    root.skill("doomed", "D.");
    let provider = root.provider();
    fs::remove_dir_all(root.join("doomed")).expect("remove");
    let err = block_on(provider.get("doomed")).expect_err("gone");
    assert_eq!(err.kind(), ErrorKind::SkillNotFound, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_provider_of_standard_roots_equals_the_blocking_one() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    fs::create_dir(project.path().join(".git")).expect(".git");
    let project_skills = project.path().join(".agents/skills");
    let user_skills = home.path().join(".agents/skills");
    write_file(
        &project_skills.join("shared/SKILL.md"),
        skill_md("shared", "Project."),
    );
    write_file(
        &user_skills.join("shared/SKILL.md"),
        skill_md("shared", "User."),
    );
    write_file(
        &user_skills.join("mine/SKILL.md"),
        skill_md("mine", "Mine."),
    );
    let roots = skills_fs::StandardRoots::new()
        .cwd(project.path())
        .home(home.path())
        .codex_home(None)
        .config_home(None);

    let opened = roots.open_provider(FsOptions::default()).await;
    let blocking = tokio::task::block_in_place(|| roots.provider(FsOptions::default()));
    assert_eq!(opened.roots(), blocking.roots());
    let names = |c: skills_core::Catalog| c.names().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        names(opened.list().await.expect("list")),
        ["mine", "shared"]
    );
    assert_eq!(
        names(opened.list().await.expect("list")),
        names(blocking.list().await.expect("list"))
    );
    assert_eq!(opened.get("shared").await.expect("get").body, "Project.");
    let collisions = opened.collisions().await;
    assert_eq!(collisions.len(), 1, "{collisions:#?}");
    opened.rescan().await;
    assert_eq!(opened.get("mine").await.expect("get").body, "Mine.");
}
