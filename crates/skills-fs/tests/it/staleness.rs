//! The staleness cache (F-PRV-4): what `list`/`get` return before and after the
//! cooldown while skills are edited, added, removed and broken on disk, and how
//! many file-system calls each step costs (counted through [`CountingFs`]).
//!
//! Time is a [`ManualClock`]; nothing sleeps for seconds. Its wall time is real,
//! so fixtures that need settled (non-racy) files set their modification times an
//! hour into the past before the provider is built.
#![cfg(unix)]

use std::ffi::OsString;
use std::fs::{self, File, FileTimes};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};

use skills_core::{Code, ErrorKind, SkillProvider};
use skills_fs::{
    CountingFs, FileStat, FsEnv, FsOp, FsOptions, FsProvider, ManualClock, RealFs, Vfs,
};

use super::support::{Root, assert_good_loads, block_on, diags_with, expect_kind, get, names};

const COOLDOWN: Duration = skills_fs::DEFAULT_COOLDOWN;

/// A root, a manual clock, a counting file system and a provider over them.
pub(crate) struct Fixture {
    pub(crate) root: Root,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) fs: Arc<CountingFs>,
    pub(crate) provider: FsProvider,
}

impl Fixture {
    /// `setup` fills the root; then every file is backdated (unless `settled` is
    /// false), the provider is built and the counts are reset.
    pub(crate) fn build(options: FsOptions, settled: bool, setup: impl FnOnce(&Root)) -> Self {
        let root = Root::new();
        setup(&root);
        if settled {
            backdate(&root.path());
        }
        let clock = Arc::new(ManualClock::new());
        let fs = Arc::new(CountingFs::new(RealFs));
        let env = FsEnv::default()
            .with_vfs(fs.clone())
            .with_clock(clock.clone());
        let provider = FsProvider::with_env([root.path()], options, env);
        fs.reset();
        Self {
            root,
            clock,
            fs,
            provider,
        }
    }

    pub(crate) fn new(setup: impl FnOnce(&Root)) -> Self {
        Self::build(FsOptions::default(), true, setup)
    }

    pub(crate) fn names(&self) -> Vec<String> {
        names(&self.provider)
    }

    /// Moves the clock to the end of the cooldown (a check is due at exactly it).
    pub(crate) fn after_cooldown(&self) {
        self.clock.advance(COOLDOWN);
    }

    pub(crate) fn description(&self, name: &str) -> String {
        let catalog = block_on(self.provider.list()).expect("list");
        catalog.get(name).expect("listed").description.clone()
    }

    /// Full scans since the last reset (each scan lists the root once).
    fn scans(&self) -> usize {
        self.fs.counts().on(FsOp::ReadDir, &self.root.path())
    }
}

/// Sets the modification time of everything under `path` (not following
/// symlinks) an hour into the past, as if the tree had been written long ago.
pub(crate) fn backdate(path: &Path) {
    let past = SystemTime::now() - Duration::from_secs(3600);
    let meta = fs::symlink_metadata(path).expect("stat");
    if meta.file_type().is_symlink() {
        return;
    }
    if meta.is_dir() {
        for entry in fs::read_dir(path).expect("read_dir") {
            backdate(&entry.expect("entry").path());
        }
    }
    File::open(path)
        .expect("open")
        .set_times(FileTimes::new().set_modified(past).set_accessed(past))
        .expect("set times");
}

/// Replaces a file through a temporary file and a rename, as many editors save.
fn save_by_rename(path: &Path, contents: &str) {
    let tmp = path.with_extension("tmp~");
    fs::write(&tmp, contents).expect("write temp");
    fs::rename(&tmp, path).expect("rename");
}

fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
}

#[test]
fn warm_list_inside_the_cooldown_makes_no_file_system_call() {
    let f = Fixture::new(|root| {
        root.skill("alpha", "A.");
        root.skill("beta", "B.");
    });
    for _ in 0..50 {
        assert_eq!(f.names(), ["alpha", "beta", "good"]);
        assert!(block_on(f.provider.diagnostics()).is_empty());
        expect_kind(get(&f.provider, "nope"), ErrorKind::SkillNotFound);
        assert!(f.provider.skill_dir("alpha").is_some());
    }
    f.clock.advance(COOLDOWN - Duration::from_millis(1));
    assert_eq!(f.names(), ["alpha", "beta", "good"]);
    assert_eq!(f.fs.total(), 0, "{:#?}", f.fs.counts().calls);
}

#[test]
fn cached_get_makes_no_call_inside_the_cooldown_and_only_stats_after_it() {
    let f = Fixture::new(|_| {});
    let first = get(&f.provider, "good").expect("get");
    assert!(f.fs.counts().of(FsOp::Read) == 1, "the first get reads");
    f.fs.reset();

    for _ in 0..10 {
        assert_eq!(get(&f.provider, "good").expect("get again"), first);
    }
    assert_eq!(f.fs.total(), 0, "{:#?}", f.fs.counts().calls);

    f.clock.advance(COOLDOWN);
    // The catalog's own check (one stat per watched folder) is counted elsewhere.
    f.names();
    f.fs.reset();
    let again = get(&f.provider, "good").expect("get after the cooldown");
    assert_eq!(again, first);
    let counts = f.fs.counts();
    // SKILL.md, the skill folder, references/ and references/guide.md.
    assert_eq!(counts.of(FsOp::Metadata), 4, "{:#?}", counts.calls);
    assert_eq!(counts.total(), 4, "{:#?}", counts.calls);
}

#[test]
fn staleness_check_with_nothing_changed_stats_each_folder_once() {
    let f = Fixture::new(|root| {
        for i in 0..20 {
            root.skill(&format!("skill-{i:02}"), "Body.");
        }
        root.skill("group/inner", "Nested.");
        root.write("group/README.txt", "not a skill\n");
    });
    f.after_cooldown();
    assert_eq!(f.names().len(), 22);

    let counts = f.fs.counts();
    // The root, `group/`, 22 skill folders and the one folder inside a skill
    // (`good/references/`, searched for nested skills); nothing else.
    assert_eq!(
        counts.of(FsOp::Metadata),
        1 + 1 + 22 + 1,
        "{:#?}",
        counts.calls
    );
    assert_eq!(counts.total(), counts.of(FsOp::Metadata));
    for (_, path) in &counts.calls {
        assert_eq!(
            counts.on(FsOp::Metadata, path),
            1,
            "{} twice",
            path.display()
        );
    }
    assert!(!counts.calls.iter().any(|(_, p)| p.ends_with("SKILL.md")));

    // Inside the new cooldown: free again.
    f.fs.reset();
    f.names();
    assert_eq!(f.fs.total(), 0);
}

#[test]
fn a_skill_nested_in_an_existing_folder_of_a_skill_is_noticed() {
    let f = Fixture::new(|root| {
        root.skill("outer", "Outer.");
        root.write("outer/refunds/notes.md", "notes\n");
    });
    assert_eq!(f.names(), ["good", "outer"]);
    f.after_cooldown();
    assert_eq!(f.names(), ["good", "outer"]);
    assert_eq!(f.scans(), 0, "nothing changed");
    // Only `outer/refunds/` changes: it is watched like every searched folder.
    f.root.skill("outer/refunds", "Refunds.");
    f.after_cooldown();
    assert_eq!(f.names(), ["good", "outer", "refunds"]);
}

#[test]
fn watch_skill_md_adds_one_stat_per_skill_md() {
    let options = FsOptions::default().with_watch_skill_md(true);
    let f = Fixture::build(options, true, |root| {
        root.skill("alpha", "A.");
    });
    f.after_cooldown();
    f.names();
    let counts = f.fs.counts();
    // Root + 2 skill folders + `good/references/` + 2 SKILL.md files.
    assert_eq!(counts.of(FsOp::Metadata), 6, "{:#?}", counts.calls);
    assert_eq!(counts.total(), 6);
    assert_eq!(f.scans(), 0);
}

#[test]
fn added_skill_is_listed_after_the_cooldown_not_before() {
    let f = Fixture::new(|_| {});
    f.root.skill("newcomer", "New body.");

    assert_eq!(f.names(), ["good"]);
    expect_kind(get(&f.provider, "newcomer"), ErrorKind::SkillNotFound);
    assert_eq!(f.fs.total(), 0, "the lookup made no file-system call");

    f.after_cooldown();
    assert_eq!(f.names(), ["good", "newcomer"]);
    assert_eq!(f.scans(), 1);
    assert_eq!(get(&f.provider, "newcomer").expect("get").body, "New body.");
    assert_good_loads(&f.provider);
}

#[test]
fn skill_added_in_a_nested_folder_is_noticed() {
    let f = Fixture::new(|root| {
        root.skill("group/first", "First.");
    });
    f.root.skill("group/second", "Second.");
    f.after_cooldown();
    assert_eq!(f.names(), ["first", "good", "second"]);
}

#[test]
fn removed_skill_disappears_after_the_cooldown() {
    let f = Fixture::new(|root| {
        root.skill("doomed", "Body.");
    });
    assert_eq!(get(&f.provider, "doomed").expect("get").body, "Body.");
    fs::remove_dir_all(f.root.join("doomed")).expect("rm");

    // Inside the cooldown nothing is looked at: still listed, still served.
    assert_eq!(f.names(), ["doomed", "good"]);
    assert_eq!(get(&f.provider, "doomed").expect("cached").body, "Body.");

    f.after_cooldown();
    assert_eq!(f.names(), ["good"]);
    expect_kind(get(&f.provider, "doomed"), ErrorKind::SkillNotFound);
    assert_good_loads(&f.provider);
}

#[test]
fn skill_broken_on_disk_is_reported_and_dropped_while_others_stay() {
    let f = Fixture::new(|root| {
        root.skill("fragile", "Body.");
        root.skill("sturdy", "Sturdy body.");
    });
    assert!(diags_with(&f.provider, Code::YamlInvalid).is_empty());
    save_by_rename(
        &f.root.join("fragile/SKILL.md"),
        "---\nname: fragile\ndescription: [unclosed\n---\nBroken YAML now.\n",
    );
    backdate(&f.root.path());

    f.after_cooldown();
    assert_eq!(f.names(), ["good", "sturdy"]);
    let diags = diags_with(&f.provider, Code::YamlInvalid);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(
        diags[0]
            .file
            .as_deref()
            .is_some_and(|p| p.contains("fragile")),
        "{:?}",
        diags[0]
    );
    expect_kind(get(&f.provider, "fragile"), ErrorKind::SkillNotFound);
    assert_eq!(
        get(&f.provider, "sturdy").expect("get").body,
        "Sturdy body."
    );
    assert_good_loads(&f.provider);

    // Fixed again, in place (the folder does not change): the SKILL.md of a
    // skill left out is always watched, so it is back after the cooldown.
    f.fs.reset();
    f.root.skill("fragile", "Fixed.");
    f.after_cooldown();
    assert_eq!(f.names(), ["fragile", "good", "sturdy"]);
    assert_eq!(f.scans(), 1);
    assert!(diags_with(&f.provider, Code::YamlInvalid).is_empty());
}

#[test]
fn get_returns_the_new_body_of_an_edited_skill_after_the_cooldown() {
    let f = Fixture::new(|root| {
        root.skill("editable", "First body.");
    });
    assert_eq!(
        get(&f.provider, "editable").expect("get").body,
        "First body."
    );
    // In place: the folder's modification time does not change. Inside the
    // cooldown the cached body is served; after it, the edit is seen.
    f.root.skill("editable", "Second body, longer.");
    assert_eq!(
        get(&f.provider, "editable").expect("get").body,
        "First body."
    );
    f.clock.advance(COOLDOWN);
    assert_eq!(
        get(&f.provider, "editable").expect("get").body,
        "Second body, longer."
    );
    // A new resource is listed too.
    f.root.write("editable/scripts/run.sh", "echo\n");
    f.clock.advance(COOLDOWN);
    let skill = get(&f.provider, "editable").expect("get");
    assert_eq!(skill.resources.paths(), ["scripts/run.sh"]);
    fs::remove_file(f.root.join("editable/scripts/run.sh")).expect("rm");
    f.clock.advance(COOLDOWN);
    let skill = get(&f.provider, "editable").expect("get");
    assert!(skill.resources.paths().is_empty());
    assert_good_loads(&f.provider);
}

#[test]
fn in_place_description_edit_needs_watch_skill_md_or_a_get() {
    let edit = |root: &Root| {
        root.write(
            "alpha/SKILL.md",
            skill_md("alpha", "Edited in place. Use it now.", "A."),
        );
    };
    let setup = |root: &Root| {
        root.write(
            "alpha/SKILL.md",
            skill_md("alpha", "Original. Use it for tests.", "A."),
        );
    };

    // Option off: the folder did not change, so the check sees nothing...
    let off = Fixture::new(setup);
    edit(&off.root);
    off.after_cooldown();
    assert_eq!(off.description("alpha"), "Original. Use it for tests.");
    assert_eq!(off.scans(), 0);
    // ...until `get` reads the new metadata: the next check re-scans.
    assert_eq!(
        get(&off.provider, "alpha")
            .expect("get")
            .metadata
            .description,
        "Edited in place. Use it now."
    );
    assert_eq!(off.description("alpha"), "Original. Use it for tests.");
    off.after_cooldown();
    assert_eq!(off.description("alpha"), "Edited in place. Use it now.");

    // Option on: the check stats SKILL.md and sees the edit.
    let on = Fixture::build(FsOptions::default().with_watch_skill_md(true), true, setup);
    edit(&on.root);
    assert_eq!(on.description("alpha"), "Original. Use it for tests.");
    on.after_cooldown();
    assert_eq!(on.description("alpha"), "Edited in place. Use it now.");
    assert_eq!(on.scans(), 1);
}

#[test]
fn renamed_files_and_folders_are_noticed_without_watch_skill_md() {
    let f = Fixture::new(|root| {
        root.skill("alpha", "A.");
        root.skill("beta", "B.");
    });
    // Renaming a skill folder: same skill, new place.
    fs::rename(f.root.join("alpha"), f.root.join("alpha-moved")).expect("mv");
    // Renaming a SKILL.md away: the skill is gone.
    fs::rename(f.root.join("beta/SKILL.md"), f.root.join("beta/NOTES.md")).expect("mv");
    f.after_cooldown();

    assert_eq!(f.names(), ["alpha", "good"]);
    let dir = f.provider.skill_dir("alpha").expect("alpha");
    assert!(dir.ends_with("alpha-moved"), "{}", dir.display());
    assert_eq!(get(&f.provider, "alpha").expect("get").body, "A.");
    expect_kind(get(&f.provider, "beta"), ErrorKind::SkillNotFound);
    assert_eq!(diags_with(&f.provider, Code::SkillMdMissing).len(), 1);
}

/// Every `read_dir` and every `stat` of the root sleeps, so concurrent callers
/// pile up behind the one doing the work.
#[derive(Debug)]
struct SlowFs {
    root: PathBuf,
}

impl Vfs for SlowFs {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        std::thread::sleep(Duration::from_millis(30));
        RealFs.read_dir(path)
    }

    fn metadata(&self, path: &Path) -> io::Result<FileStat> {
        if path == self.root {
            std::thread::sleep(Duration::from_millis(30));
        }
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

#[test]
fn concurrent_callers_share_one_check_and_one_scan() {
    const THREADS: usize = 8;
    let root = Root::new();
    root.skill("alpha", "A.");
    backdate(&root.path());
    let clock = Arc::new(ManualClock::new());
    let fs = Arc::new(CountingFs::new(SlowFs { root: root.path() }));
    let env = FsEnv::default()
        .with_vfs(fs.clone())
        .with_clock(clock.clone());
    let provider = Arc::new(FsProvider::with_env(
        [root.path()],
        FsOptions::default(),
        env,
    ));

    let run = |expected: &'static [&'static str]| {
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                let provider = Arc::clone(&provider);
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    barrier.wait();
                    let catalog = block_on(provider.list()).expect("list");
                    let names: Vec<_> = catalog.names().map(str::to_owned).collect();
                    assert_eq!(names, expected);
                })
            })
            .collect();
        for handle in handles {
            handle.join().expect("no panic");
        }
    };

    // Nothing changed: one stat pass for all callers.
    fs.reset();
    clock.advance(COOLDOWN);
    run(&["alpha", "good"]);
    let counts = fs.counts();
    assert_eq!(counts.on(FsOp::Metadata, &root.path()), 1, "one check");
    assert_eq!(counts.of(FsOp::ReadDir), 0, "no scan");

    // A skill added: one scan for all callers.
    root.skill("beta", "B.");
    fs.reset();
    clock.advance(COOLDOWN);
    run(&["alpha", "beta", "good"]);
    let counts = fs.counts();
    assert_eq!(counts.on(FsOp::ReadDir, &root.path()), 1, "one scan");
    assert_eq!(
        counts.on(FsOp::Metadata, &root.path()),
        2,
        "one check, then the scan's own stat"
    );
}

#[test]
fn racy_snapshot_is_rescanned_at_the_next_check() {
    // Files written just now: a second change in the same timestamp tick could
    // leave every stat equal, so the check re-scans although nothing differs.
    let f = Fixture::build(FsOptions::default(), false, |root| {
        root.skill("alpha", "A.");
    });
    f.after_cooldown();
    assert_eq!(f.names(), ["alpha", "good"]);
    assert_eq!(f.scans(), 1);

    // Once the files are old, one more scan records settled stats, then none.
    backdate(&f.root.path());
    f.fs.reset();
    f.after_cooldown();
    f.names();
    assert_eq!(f.scans(), 1);
    f.fs.reset();
    f.after_cooldown();
    f.names();
    assert_eq!(f.scans(), 0);
}

#[test]
fn racy_get_result_is_reread_until_settled() {
    let f = Fixture::build(FsOptions::default(), false, |_| {});
    get(&f.provider, "good").expect("get");
    f.fs.reset();
    get(&f.provider, "good").expect("get");
    assert_eq!(f.fs.counts().of(FsOp::Read), 1, "racy: read again");

    backdate(&f.root.path());
    get(&f.provider, "good").expect("get");
    f.fs.reset();
    get(&f.provider, "good").expect("get");
    assert_eq!(f.fs.counts().of(FsOp::Read), 0, "settled: cached");
}

#[test]
fn zero_cooldown_checks_on_every_call() {
    let f = Fixture::build(
        FsOptions::default().with_cooldown(Duration::ZERO),
        true,
        |_| {},
    );
    f.names();
    let once = f.fs.total();
    assert_eq!(
        once,
        3,
        "root, `good` and `good/references`: {:#?}",
        f.fs.counts().calls
    );
    f.names();
    assert_eq!(f.fs.total(), 2 * once);
    f.root.skill("newcomer", "New.");
    assert_eq!(f.names(), ["good", "newcomer"]);
}

#[test]
fn root_that_is_a_symlink_is_watched_through_the_link() {
    let f = Fixture::new(|_| {});
    let link = f.root.outside().join("link-to-root");
    std::os::unix::fs::symlink(f.root.path(), &link).expect("symlink");
    let fs_ = Arc::new(CountingFs::new(RealFs));
    let clock = Arc::new(ManualClock::new());
    let env = FsEnv::default()
        .with_vfs(fs_.clone())
        .with_clock(clock.clone());
    let provider = FsProvider::with_env([link.clone()], FsOptions::default(), env);
    assert_eq!(names(&provider), ["good"]);

    fs_.reset();
    clock.advance(COOLDOWN);
    assert_eq!(names(&provider), ["good"]);
    assert_eq!(fs_.counts().of(FsOp::ReadDir), 0, "nothing changed");

    f.root.skill("added", "Added.");
    clock.advance(COOLDOWN);
    assert_eq!(names(&provider), ["added", "good"]);
    assert_eq!(get(&provider, "added").expect("get").body, "Added.");
}

#[test]
fn symlink_loops_are_checked_once_and_changes_behind_them_seen() {
    use std::os::unix::fs::symlink;

    let f = Fixture::build(FsOptions::default().with_max_depth(50), true, |root| {
        root.skill("loop-a/nested", "Nested.");
        fs::create_dir_all(root.join("loop-b")).expect("mkdir");
        symlink("../loop-b", root.join("loop-a/to-b")).expect("symlink");
        symlink("../loop-a", root.join("loop-b/to-a")).expect("symlink");
        symlink("..", root.join("loop-b/up")).expect("symlink");
    });
    assert_eq!(f.names(), ["good", "nested"]);
    f.after_cooldown();
    assert_eq!(f.names(), ["good", "nested"]);
    let counts = f.fs.counts();
    assert_eq!(counts.of(FsOp::ReadDir), 0, "{:#?}", counts.calls);
    // Root, good, good/references, loop-a, loop-a/nested, loop-b (reached
    // once, through a link or not).
    assert_eq!(counts.of(FsOp::Metadata), 6, "{:#?}", counts.calls);

    f.root.skill("loop-b/late", "Late.");
    f.after_cooldown();
    assert_eq!(f.names(), ["good", "late", "nested"]);
}

#[test]
fn rescan_is_always_a_full_scan() {
    let f = Fixture::new(|_| {});
    f.root.skill("newcomer", "New.");
    let discovery = block_on(f.provider.rescan());
    assert_eq!(discovery.skills.len(), 2);
    assert_eq!(f.names(), ["good", "newcomer"]);
    assert_eq!(f.scans(), 1);
}

#[test]
fn list_cached_answers_only_while_the_cooldown_confirms_the_snapshot() {
    let f = Fixture::new(|root| {
        root.skill("alpha", "A.");
    });
    let cached = f.provider.list_cached().expect("confirmed at construction");
    assert_eq!(cached.names().collect::<Vec<_>>(), ["alpha", "good"]);
    f.after_cooldown();
    assert!(
        f.provider.list_cached().is_none(),
        "a staleness check is due: only `list` may answer"
    );
    f.root.skill("beta", "B.");
    assert_eq!(f.names(), ["alpha", "beta", "good"]);
    let cached = f.provider.list_cached().expect("confirmed by the list");
    assert_eq!(
        cached.names().collect::<Vec<_>>(),
        ["alpha", "beta", "good"]
    );
    assert!(f.fs.total() > 0, "the due check read the disk");
}

#[test]
fn layered_view_over_fs_layers_notices_a_change_after_the_cooldown() {
    let f = Fixture::new(|root| {
        root.skill("alpha", "A.");
    });
    let layered = skills_core::LayeredProvider::new()
        .with_layer("disk", Arc::new(f.provider.clone()))
        .with_layer(
            "code",
            Arc::new(skills_core::InCodeProvider::new([]).expect("empty")),
        );
    let names = |p: &skills_core::LayeredProvider| {
        block_on(p.list())
            .expect("list")
            .names()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&layered), ["alpha", "good"]);
    f.fs.reset();
    assert_eq!(names(&layered), ["alpha", "good"]);
    assert_eq!(f.fs.total(), 0, "a warm layered list touches no file");
    f.root.skill("beta", "B.");
    backdate(&f.root.path());
    f.after_cooldown();
    assert_eq!(names(&layered), ["alpha", "beta", "good"]);
}

/// [`RealFs`], except that the first failed read of `target` rewrites it in
/// place, as an author's fix landing between that read and whatever the
/// scan does next: new contents, the old modification time (a copy that
/// keeps times, or a write within one timestamp tick).
#[derive(Debug)]
struct FixAfterFailedRead {
    target: PathBuf,
    fixed: String,
    done: std::sync::atomic::AtomicBool,
}

impl FixAfterFailedRead {
    fn fix_once(&self) {
        if self.done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let past = fs::metadata(&self.target)
            .and_then(|m| m.modified())
            .expect("mtime");
        let file = fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&self.target)
            .expect("open for the fix");
        io::Write::write_all(&mut &file, self.fixed.as_bytes()).expect("write the fix");
        file.set_times(FileTimes::new().set_modified(past).set_accessed(past))
            .expect("keep the old mtime");
    }
}

impl Vfs for FixAfterFailedRead {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        RealFs.read_dir(path)
    }
    fn read_dir_kinds(
        &self,
        path: &Path,
    ) -> io::Result<Vec<(OsString, Option<skills_fs::FileKind>)>> {
        RealFs.read_dir_kinds(path)
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
    fn read_beneath(
        &self,
        root: &Path,
        rel: &skills_core::ResourcePath,
        cap: u64,
    ) -> io::Result<(FileStat, Vec<u8>)> {
        let read = RealFs.read_beneath(root, rel, cap);
        if read.is_err() && root.join(rel.as_str()) == self.target {
            self.fix_once();
        }
        read
    }
    fn stat_beneath(
        &self,
        root: &Path,
        rel: Option<&skills_core::ResourcePath>,
    ) -> io::Result<FileStat> {
        RealFs.stat_beneath(root, rel)
    }
    fn read_dir_beneath(
        &self,
        root: &Path,
        rel: Option<&skills_core::ResourcePath>,
    ) -> io::Result<Vec<OsString>> {
        RealFs.read_dir_beneath(root, rel)
    }
}

/// A `SKILL.md` that could not be read, fixed in place right after the
/// failed read with its modification time kept: the stamp of the broken
/// skill must describe the file as it was before the read that decided its
/// fate, so the fix is seen (here at once, at the latest after the
/// cooldown), never cached away as "unchanged".
#[test]
fn skill_md_fixed_right_after_a_failed_read_is_not_cached_as_broken() {
    let cap = 256;
    let root = Root::new();
    let md = root.write(
        "fixme/SKILL.md",
        format!(
            "---\nname: fixme\ndescription: Too large for now.\n---\n{}\n",
            "x".repeat(2 * cap)
        ),
    );
    backdate(&root.path());
    let fs = Arc::new(FixAfterFailedRead {
        target: md,
        fixed: skill_md("fixme", "Fixed. Use it now.", "Small again."),
        done: std::sync::atomic::AtomicBool::new(false),
    });
    let clock = Arc::new(ManualClock::new());
    let env = FsEnv::default()
        .with_vfs(fs.clone())
        .with_clock(clock.clone());
    let options = FsOptions::default().with_max_skill_md_bytes(cap as u64);
    let provider = FsProvider::with_env([root.path()], options, env);
    assert!(
        fs.done.load(std::sync::atomic::Ordering::SeqCst),
        "the scan read the oversized SKILL.md"
    );
    clock.advance(COOLDOWN);
    assert_eq!(names(&provider), ["fixme", "good"]);
    clock.advance(COOLDOWN);
    assert_eq!(names(&provider), ["fixme", "good"]);
    assert_eq!(get(&provider, "fixme").expect("get").body, "Small again.");
}

/// The same for `agents/openai.yaml`: an oversized one is ignored with a
/// warning, and a fix landing right after the failed read (mtime kept) must
/// not be stamped as the ignored state.
#[test]
fn openai_yaml_fixed_right_after_a_failed_read_is_not_cached_as_ignored() {
    let root = Root::new();
    root.skill("codexy", "Body.");
    let padding = "#".repeat(usize::try_from(skills_fs::MAX_OPENAI_YAML_BYTES).expect("cap") + 1);
    let yaml = root.write(
        "codexy/agents/openai.yaml",
        format!("interface:\n  display_name: \"Big\"\n{padding}\n"),
    );
    backdate(&root.path());
    let fs = Arc::new(FixAfterFailedRead {
        target: yaml,
        fixed: "interface:\n  display_name: \"Fixed Title\"\n".to_owned(),
        done: std::sync::atomic::AtomicBool::new(false),
    });
    let clock = Arc::new(ManualClock::new());
    let env = FsEnv::default()
        .with_vfs(fs.clone())
        .with_clock(clock.clone());
    let provider = FsProvider::with_env([root.path()], FsOptions::default(), env);
    assert!(
        fs.done.load(std::sync::atomic::Ordering::SeqCst),
        "the scan read the oversized openai.yaml"
    );
    let title = || {
        let catalog = block_on(provider.list()).expect("list");
        catalog.get("codexy").expect("listed").title.clone()
    };
    clock.advance(COOLDOWN);
    assert_eq!(title().as_deref(), Some("Fixed Title"));
    clock.advance(COOLDOWN);
    assert_eq!(title().as_deref(), Some("Fixed Title"));
}
