//! Which folders discovery searches, and how every folder it does not search is
//! accounted for: dot folders, the skip list, the limits, odd names, unreadable
//! folders and files (through a fault-injecting file system, since tests run as
//! root and `chmod 000` does not stop root).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_core::{Code, Diagnostic, ResourcePath, Severity};
use skills_fs::{FileStat, FsOptions, RealFs, SkillFs, Vfs};

use crate::it::support::Root;

fn with_code(diags: &[Diagnostic], code: Code) -> Vec<&Diagnostic> {
    diags.iter().filter(|d| d.code == code).collect()
}

fn names(found: &skills_fs::Discovery) -> Vec<String> {
    let mut names: Vec<String> = found
        .skills
        .iter()
        .filter_map(|s| s.name().map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[test]
fn dot_folders_are_searched_but_tool_folders_are_skipped_and_counted() {
    let root = Root::new();
    root.skill(".curated/alpha", "Curated.");
    root.skill(".system/beta", "System.");
    root.skill(".experimental/gamma", "Experimental.");
    root.skill(".git/hooks", "Hidden.");
    root.skill("node_modules/pkg", "Vendored.");
    root.skill("lib/node_modules/other", "Vendored too.");
    root.skill("target/build", "Built.");

    let found = SkillFs::new(FsOptions::default()).discover(&[root.path()]);
    assert_eq!(names(&found), ["alpha", "beta", "gamma", "good"]);
    let skipped = with_code(&found.diagnostics, Code::DirsSkipped);
    assert_eq!(skipped.len(), 1, "{:?}", found.diagnostics);
    assert_eq!(skipped[0].severity, Severity::Warning);
    assert!(
        skipped[0]
            .message
            .contains("skipped 4 folders by name (.git, node_modules ×2, target)"),
        "{}",
        skipped[0]
    );
}

#[test]
fn the_skip_list_can_be_changed() {
    let root = Root::new();
    root.skill("node_modules/pkg", "Vendored.");
    root.skill("vendor/lib", "Vendored elsewhere.");

    let everything = FsOptions::default().with_skip_dirs(Vec::<String>::new());
    let found = SkillFs::new(everything).discover(&[root.path()]);
    assert_eq!(names(&found), ["good", "lib", "pkg"]);
    assert!(with_code(&found.diagnostics, Code::DirsSkipped).is_empty());

    let custom = FsOptions::default().with_skip_dirs(["vendor"]);
    let found = SkillFs::new(custom).discover(&[root.path()]);
    assert_eq!(names(&found), ["good", "pkg"]);
    assert!(
        with_code(&found.diagnostics, Code::DirsSkipped)[0]
            .message
            .contains("(vendor)")
    );
}

#[test]
fn folders_below_the_depth_limit_are_counted() {
    let root = Root::new();
    root.skill("a/b/deep", "Deep.");
    root.skill("x/y/deeper", "Deeper.");

    let found = SkillFs::new(FsOptions::default().with_max_depth(2)).discover(&[root.path()]);
    assert_eq!(names(&found), ["good"]);
    let limits = with_code(&found.diagnostics, Code::DiscoveryLimit);
    assert_eq!(limits.len(), 1, "{:?}", found.diagnostics);
    assert!(
        limits[0]
            .message
            .contains("2 folders at the depth limit (2 levels)"),
        "{}",
        limits[0]
    );
    assert!(with_code(&found.diagnostics, Code::IoError).is_empty());
}

#[test]
fn folders_past_the_folder_limit_are_counted() {
    let root = Root::new();
    for i in 0..10 {
        std::fs::create_dir_all(root.join(&format!("zz-empty-{i:02}"))).expect("mkdir");
    }
    let found = SkillFs::new(FsOptions::default().with_max_dirs(4)).discover(&[root.path()]);
    let limits = with_code(&found.diagnostics, Code::DiscoveryLimit);
    assert_eq!(limits.len(), 1, "{:?}", found.diagnostics);
    // 12 folders (good, good/references searched for nested skills, and 10
    // more): 4 searched, 8 counted.
    assert!(
        limits[0]
            .message
            .contains("after 4 folders (the limit): 8 more folders"),
        "{}",
        limits[0]
    );
}

#[test]
fn a_root_that_is_a_file_has_its_own_code() {
    let root = Root::new();
    let file = root.write("plain.txt", "not a folder");
    let found = SkillFs::new(FsOptions::default()).discover(&[file]);
    let diags = with_code(&found.diagnostics, Code::RootNotFolder);
    assert_eq!(diags.len(), 1, "{:?}", found.diagnostics);
    assert!(diags[0].is_error());
}

#[cfg(unix)]
#[test]
fn a_folder_name_that_is_not_utf8_is_reported() {
    use std::os::unix::ffi::OsStrExt as _;
    let root = Root::new();
    let odd = root
        .path()
        .join(std::ffi::OsStr::from_bytes(b"bad-\xff-name"));
    std::fs::create_dir_all(odd.join("inner")).expect("mkdir");

    let found = SkillFs::new(FsOptions::default()).discover(&[root.path()]);
    let diags = with_code(&found.diagnostics, Code::NameNotUtf8);
    assert_eq!(diags.len(), 1, "{:?}", found.diagnostics);
    assert_eq!(names(&found), ["good"]);
}

/// Answers `PermissionDenied` for every call on `denied` or below it.
#[derive(Debug)]
struct DenyFs {
    denied: PathBuf,
}

impl DenyFs {
    fn check(&self, path: &Path) -> io::Result<()> {
        if path.starts_with(&self.denied) {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "permission denied (injected)",
            ))
        } else {
            Ok(())
        }
    }
}

impl Vfs for DenyFs {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        self.check(path)?;
        RealFs.read_dir(path)
    }
    fn metadata(&self, path: &Path) -> io::Result<FileStat> {
        // The folder itself can be stat'ed (its parent is readable); what is
        // inside cannot.
        if path != self.denied {
            self.check(path)?;
        }
        RealFs.metadata(path)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<FileStat> {
        if path != self.denied {
            self.check(path)?;
        }
        RealFs.symlink_metadata(path)
    }
    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        self.check(path)?;
        RealFs.read(path, cap)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        RealFs.canonicalize(path)
    }
    fn read_beneath(
        &self,
        root: &Path,
        rel: &ResourcePath,
        cap: u64,
    ) -> io::Result<(FileStat, Vec<u8>)> {
        self.check(&root.join(rel.as_str()))?;
        RealFs.read_beneath(root, rel, cap)
    }
}

/// A skill folder that cannot be read (mode 000 for a normal user) is an
/// error, not a silently skipped folder.
#[test]
fn an_unreadable_skill_folder_is_an_error() {
    let root = Root::new();
    root.skill("locked", "Locked.");
    let fs = SkillFs::with_vfs(
        Arc::new(DenyFs {
            denied: root.join("locked"),
        }),
        FsOptions::default(),
    );
    let found = fs.discover(&[root.path()]);
    assert_eq!(names(&found), ["good"]);
    let errors: Vec<&Diagnostic> = found.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 1, "{:?}", found.diagnostics);
    assert_eq!(errors[0].code, Code::IoError);
    assert!(errors[0].message.contains("locked"), "{}", errors[0]);
    assert!(!found.is_valid());
}

/// A `SKILL.md` that cannot be read is an error of its skill.
#[test]
fn an_unreadable_skill_md_is_an_error() {
    let root = Root::new();
    root.skill("secret", "Secret.");
    let fs = SkillFs::with_vfs(
        Arc::new(DenyFs {
            denied: root.join("secret/SKILL.md"),
        }),
        FsOptions::default(),
    );
    let found = fs.discover(&[root.path()]);
    assert_eq!(names(&found), ["good"]);
    let skill = found
        .skills
        .iter()
        .find(|s| s.dir.ends_with("secret"))
        .expect("the skill folder is reported");
    assert!(!skill.is_valid());
    assert!(
        skill
            .diagnostics
            .iter()
            .any(|d| d.code == Code::IoError && d.is_error())
    );
    assert!(!found.is_valid());
}

/// [`RealFs`] as a file system that folds case with Unicode rules (ext4's
/// casefold, APFS) sees one folder: `SKILL.md` opens `ſkill.md` (U+017F
/// LATIN SMALL LETTER LONG S folds to `s`) when only that exists.
#[derive(Debug)]
struct FoldFs;

impl FoldFs {
    fn fold(path: &Path) -> PathBuf {
        let folded = path.with_file_name("\u{17f}kill.md");
        if path.file_name().is_some_and(|n| n == "SKILL.md")
            && std::fs::symlink_metadata(path).is_err()
            && std::fs::symlink_metadata(&folded).is_ok()
        {
            folded
        } else {
            path.to_path_buf()
        }
    }
}

impl Vfs for FoldFs {
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
        RealFs.metadata(&Self::fold(path))
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<FileStat> {
        RealFs.symlink_metadata(&Self::fold(path))
    }
    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        RealFs.read(&Self::fold(path), cap)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        RealFs.canonicalize(&Self::fold(path))
    }
}

/// A skill folder whose `SKILL.md` is listed under a name that only a
/// Unicode case fold matches is found, as a `stat` of `SKILL.md` finds it;
/// the listing alone (folding ASCII only) would miss it.
#[test]
fn a_skill_md_matched_only_by_a_unicode_case_fold_is_found() {
    let root = Root::new();
    root.write(
        "folded/\u{17f}kill.md",
        "---\nname: folded\ndescription: Found through case folding. Use it.\n---\nBody.\n",
    );
    let fs = SkillFs::with_vfs(Arc::new(FoldFs), FsOptions::default());
    let found = fs.discover(&[root.path()]);
    assert_eq!(
        names(&found),
        ["folded", "good"],
        "{:#?}",
        found.diagnostics
    );
}

/// A folder whose listing has a name that is not ASCII costs a `stat` of
/// `SKILL.md` (only the file system knows how it folds case), but is still
/// listed once: the listing that asked is the one searched.
#[test]
fn a_non_ascii_name_asks_a_stat_and_the_folder_is_listed_once() {
    let root = Root::new();
    root.write("group/caf\u{e9}.txt", "not a skill\n");
    root.skill("group/inner", "Inner.");
    let counting = Arc::new(skills_fs::CountingFs::new(RealFs));
    let fs = SkillFs::with_vfs(counting.clone(), FsOptions::default());
    let found = fs.discover(&[root.path()]);
    assert_eq!(names(&found), ["good", "inner"]);
    let counts = counting.counts();
    let group = root.join("group");
    assert_eq!(
        counts.on(skills_fs::FsOp::ReadDir, &group),
        1,
        "{:#?}",
        counts.calls
    );
    assert_eq!(
        counts.on(skills_fs::FsOp::Metadata, &group.join("SKILL.md")),
        1,
        "{:#?}",
        counts.calls
    );
}
