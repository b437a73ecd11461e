//! A temporary skills root with one valid skill, `good`, and helpers to add
//! broken neighbours and check that `good` is unaffected.

use std::fs;
use std::path::{Path, PathBuf};

use skills_core::{Code, Diagnostic, Error, ErrorKind, ResourceContent, Skill, SkillProvider};
use skills_fs::{FsOptions, FsProvider, StandardProvider, StandardRoots};
use skills_testkit::fixture::{self, SkillDir};
use tempfile::TempDir;

/// The `SKILL.md` of the valid sibling skill. Small on purpose: tests that
/// shrink `max_skill_md_bytes` rely on it staying under 128 bytes.
pub(crate) const GOOD_SKILL_MD: &str =
    "---\nname: good\ndescription: A good skill. Use it always.\n---\nGood body.\n";
/// `good/references/guide.md`: four lines.
pub(crate) const GOOD_GUIDE: &str = "line one\nline two\nline three\nline four\n";

/// A temporary folder (`base`) holding a skills root (`base/root`) that contains
/// the valid skill `good`. Files outside the root go in `base/outside`.
#[derive(Debug)]
pub(crate) struct Root {
    base: TempDir,
}

impl Root {
    pub(crate) fn new() -> Self {
        let base = tempfile::tempdir().expect("create temp dir");
        fs::create_dir_all(base.path().join("root")).expect("create root");
        fs::create_dir_all(base.path().join("outside")).expect("create outside");
        let root = Self { base };
        root.write("good/SKILL.md", GOOD_SKILL_MD);
        root.write("good/references/guide.md", GOOD_GUIDE);
        root
    }

    /// The skills root.
    pub(crate) fn path(&self) -> PathBuf {
        self.base.path().join("root")
    }

    /// A folder next to the root, outside every skill.
    pub(crate) fn outside(&self) -> PathBuf {
        self.base.path().join("outside")
    }

    /// `root/rel`.
    pub(crate) fn join(&self, rel: &str) -> PathBuf {
        self.path().join(rel)
    }

    /// Writes `root/rel`, creating parent folders.
    pub(crate) fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        write_file(&self.join(rel), contents)
    }

    /// Writes `root/<dir>/SKILL.md` for a valid skill named after the last
    /// component of `dir`.
    pub(crate) fn skill(&self, dir: &str, body: &str) -> PathBuf {
        let name = dir.rsplit('/').next().unwrap_or(dir);
        SkillDir::new(name, &format!("The {name} skill. Use it for tests."))
            .in_folder(dir)
            .body(format!("{body}\n"))
            .write_in(&self.path())
            .expect("write skill")
            .join("SKILL.md")
    }

    /// A provider over this root with default options.
    pub(crate) fn provider(&self) -> FsProvider {
        self.provider_with(FsOptions::default())
    }

    /// A provider over this root.
    pub(crate) fn provider_with(&self, options: FsOptions) -> FsProvider {
        FsProvider::new([self.path()], options)
    }
}

/// A temporary repository (`base/repo`, with a `.git`) whose working
/// directory is its top, beside an empty home folder (`base/home`), for
/// layouts read through the standard roots.
pub(crate) struct Repo {
    base: TempDir,
}

impl Repo {
    pub(crate) fn new() -> Self {
        let base = tempfile::tempdir().expect("create temp dir");
        fs::create_dir_all(base.path().join("repo/.git")).expect("create .git");
        fs::create_dir_all(base.path().join("home")).expect("create home");
        Self { base }
    }

    /// `repo/rel`.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.base.path().join("repo").join(rel)
    }

    /// The standard roots of the repository, with every input injected
    /// (`CODEX_HOME` and `XDG_CONFIG_HOME` unset), and default options.
    pub(crate) fn provider(&self) -> StandardProvider {
        StandardRoots::new()
            .cwd(self.base.path().join("repo"))
            .home(self.base.path().join("home"))
            .codex_home(None)
            .config_home(None)
            .provider(FsOptions::default())
    }
}

/// Writes `path`, creating parent folders.
pub(crate) fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> PathBuf {
    fixture::write_file(path, contents).expect("write file")
}

pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// The sorted names in the provider's catalog.
pub(crate) fn names(provider: &FsProvider) -> Vec<String> {
    let catalog = block_on(provider.list()).expect("list never fails");
    catalog.names().map(str::to_owned).collect()
}

pub(crate) fn get(provider: &FsProvider, name: &str) -> Result<Skill, Error> {
    block_on(provider.get(name)).map(std::sync::Arc::unwrap_or_clone)
}

pub(crate) fn read(
    provider: &FsProvider,
    name: &str,
    path: &str,
) -> Result<ResourceContent, Error> {
    block_on(provider.read_resource(name, path, None))
}

/// Expects an error of `kind` and returns it.
#[track_caller]
pub(crate) fn expect_kind<T: std::fmt::Debug>(result: Result<T, Error>, kind: ErrorKind) -> Error {
    match result {
        Ok(value) => panic!("expected a {kind} error, got Ok({value:?})"),
        Err(err) => {
            assert_eq!(err.kind(), kind, "wrong kind; message: {err}");
            assert!(!err.message().is_empty(), "empty message for {kind}");
            err
        }
    }
}

/// The valid sibling `good` is listed, loads, and its reference reads.
#[track_caller]
pub(crate) fn assert_good_loads(provider: &FsProvider) {
    assert!(
        names(provider).iter().any(|n| n == "good"),
        "the valid sibling `good` is missing from {:?}; diagnostics: {:#?}",
        names(provider),
        block_on(provider.diagnostics())
    );
    let skill = get(provider, "good").expect("get good");
    assert_eq!(skill.body, "Good body.");
    assert_eq!(skill.resources.paths(), vec!["references/guide.md"]);
    let content = read(provider, "good", "references/guide.md").expect("read good guide");
    assert_eq!(content.text, GOOD_GUIDE);
    assert!(!content.truncated);
}

/// All provider diagnostics with `code`.
pub(crate) fn diags_with(provider: &FsProvider, code: Code) -> Vec<Diagnostic> {
    block_on(provider.diagnostics())
        .into_iter()
        .filter(|d| d.code == code)
        .collect()
}

/// The single diagnostic with `code`, asserting there is exactly one.
#[track_caller]
pub(crate) fn one_diag(provider: &FsProvider, code: Code) -> Diagnostic {
    let mut found = diags_with(provider, code);
    assert_eq!(
        found.len(),
        1,
        "expected one `{code}` diagnostic, got {:#?}",
        block_on(provider.diagnostics())
    );
    found.remove(0)
}

/// Codes of a diagnostic list, as strings, for readable assertions.
pub(crate) fn codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().map(|d| d.code.as_str()).collect()
}
