//! The standard skill folders of agent tools (F-PRV-7), opt in.
//!
//! [`StandardRoots`] finds, in precedence order:
//!
//! 1. **Project scope**, for every folder from the working directory up to the
//!    repository root (the nearest ancestor, the working directory included,
//!    holding a `.git` folder or file; without one, only the working directory):
//!    `<dir>/.agents/skills`, `<dir>/.claude/skills`, `<dir>/.codex/skills`,
//!    then `<dir>/.opencode/skills`. Nearer folders come first.
//! 2. **User scope**: `~/.agents/skills`, `~/.claude/skills`, then
//!    `$CODEX_HOME/skills` (`~/.codex/skills` when `CODEX_HOME` is unset or empty),
//!    then opencode's `$XDG_CONFIG_HOME/opencode/skills`
//!    (`~/.config/opencode/skills` when `XDG_CONFIG_HOME` is unset or empty).
//!
//! Earlier roots win. Missing folders are skipped without a word; a path that
//! exists but is not a folder gets a warning. A folder reached twice (the same
//! path in both scopes, or `.claude/skills` symlinked to `.agents/skills`) is kept
//! once, at its first position.
//!
//! [`StandardRoots::provider`] builds a [`StandardProvider`]: one [`FsProvider`] per
//! root, stacked in a [`LayeredProvider`]. Its diagnostics name *both* skill folders
//! of every collision between roots (`layer-collision` warnings); collisions inside
//! one root are the `skill-duplicate` warnings of [`FsProvider`]. Symlinked skill
//! folders inside a root are followed; resource reads still refuse targets outside
//! the skill folder. The depth and folder limits of [`FsOptions`] apply to each
//! root.
//!
//! ```no_run
//! use skills_core::SkillProvider;
//! use skills_fs::{FsOptions, standard_provider};
//! let provider = standard_provider(FsOptions::default());
//! for root in provider.roots() {
//!     eprintln!("{} {}", root.scope, root.path.display());
//! }
//! let diagnostics = pollster::block_on(provider.diagnostics());
//! let catalog = pollster::block_on(provider.list()).expect("list");
//! ```

use std::collections::HashSet;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use skills_core::{
    Catalog, Code, Diagnostic, Error, LayeredProvider, LineRange, ResourceBytes, ResourceContent,
    Skill, SkillProvider,
};

use crate::options::FsOptions;
use crate::provider::FsProvider;

/// The project-scope folders looked for in each folder from the working directory
/// up to the repository root, in precedence order: the tool-neutral folder,
/// then Claude Code's, Codex's and opencode's.
pub const PROJECT_DIRS: &[&str] = &[
    ".agents/skills",
    ".claude/skills",
    ".codex/skills",
    ".opencode/skills",
];

/// The user-scope folders under the home folder, before Codex's
/// (`$CODEX_HOME/skills`) and opencode's (`$XDG_CONFIG_HOME/opencode/skills`).
pub const USER_DIRS: &[&str] = &[".agents/skills", ".claude/skills"];

/// Where a standard root comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// The working directory and its ancestors up to the repository root.
    Project,
    /// The user's home folder (and `$CODEX_HOME`, `$XDG_CONFIG_HOME`).
    User,
}

impl Scope {
    /// `"project"` or `"user"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One standard root, in precedence order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StandardRoot {
    /// Project or user.
    pub scope: Scope,
    /// The label used in diagnostics: the root's path as text.
    pub label: String,
    /// The folder.
    pub path: PathBuf,
}

impl StandardRoot {
    fn new(scope: Scope, path: PathBuf) -> Self {
        Self {
            scope,
            label: path.display().to_string(),
            path,
        }
    }
}

/// An input of the builder: read from the environment, or given.
#[derive(Debug, Clone)]
enum Input {
    FromEnv,
    Given(Option<PathBuf>),
}

/// The roots that were found, and the problems met while looking.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct FoundRoots {
    /// Existing root folders, highest precedence first, each folder once.
    pub roots: Vec<StandardRoot>,
    /// Problems: no working directory or home folder, a root that is not a folder.
    /// Missing root folders are not problems.
    pub diagnostics: Vec<Diagnostic>,
}

/// Builder for the standard roots. Every input defaults to the environment
/// (`std::env::current_dir`, `$HOME`, `$CODEX_HOME`, `$XDG_CONFIG_HOME`) and
/// can be given instead,
/// so tests never depend on the real home folder.
#[derive(Debug, Clone)]
pub struct StandardRoots {
    cwd: Option<PathBuf>,
    home: Input,
    codex_home: Input,
    config_home: Input,
}

impl Default for StandardRoots {
    fn default() -> Self {
        Self::new()
    }
}

impl StandardRoots {
    /// All inputs from the environment.
    pub fn new() -> Self {
        Self {
            cwd: None,
            home: Input::FromEnv,
            codex_home: Input::FromEnv,
            config_home: Input::FromEnv,
        }
    }

    /// Uses `cwd` as the working directory (a relative path is made absolute
    /// against the process's working directory, without resolving symlinks).
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Uses `home` as the home folder.
    #[must_use]
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Input::Given(Some(home.into()));
        self
    }

    /// Acts as if there were no home folder: no user-scope roots except
    /// `$CODEX_HOME/skills` and `$XDG_CONFIG_HOME/opencode/skills` when those
    /// are set.
    #[must_use]
    pub fn without_home(mut self) -> Self {
        self.home = Input::Given(None);
        self
    }

    /// Uses `codex_home` as `$CODEX_HOME`; `None` acts as if it were unset (then
    /// `~/.codex/skills` is used).
    #[must_use]
    pub fn codex_home(mut self, codex_home: Option<PathBuf>) -> Self {
        self.codex_home = Input::Given(codex_home);
        self
    }

    /// Uses `config_home` as `$XDG_CONFIG_HOME` (opencode's user folder is
    /// `<config_home>/opencode/skills`); `None` acts as if it were unset (then
    /// `~/.config/opencode/skills` is used).
    #[must_use]
    pub fn config_home(mut self, config_home: Option<PathBuf>) -> Self {
        self.config_home = Input::Given(config_home);
        self
    }

    /// Every candidate root in precedence order, existing or not, plus the problems
    /// met resolving the inputs. Touches the file system only to find the
    /// repository root.
    pub fn candidates(&self) -> FoundRoots {
        let mut out = FoundRoots::default();
        match self.resolve_cwd() {
            Ok(cwd) => {
                for dir in project_dirs(&cwd) {
                    for sub in PROJECT_DIRS {
                        out.roots
                            .push(StandardRoot::new(Scope::Project, dir.join(sub)));
                    }
                }
            }
            Err(message) => out
                .diagnostics
                .push(Diagnostic::warning(Code::IoError, message)),
        }
        let home = resolve(&self.home, "HOME");
        let codex = resolve(&self.codex_home, "CODEX_HOME");
        match &home {
            Some(home) => {
                for sub in USER_DIRS {
                    out.roots.push(StandardRoot::new(Scope::User, home.join(sub)));
                }
            }
            None if matches!(self.home, Input::FromEnv) => out.diagnostics.push(Diagnostic::warning(
                Code::HomeUnset,
                "no home folder (HOME is not set): the user-scope skill folders under it are skipped",
            )),
            None => {}
        }
        match (codex, &home) {
            (Some(codex), _) => out
                .roots
                .push(StandardRoot::new(Scope::User, codex.join("skills"))),
            (None, Some(home)) => out
                .roots
                .push(StandardRoot::new(Scope::User, home.join(".codex/skills"))),
            (None, None) => {}
        }
        match (resolve(&self.config_home, "XDG_CONFIG_HOME"), &home) {
            (Some(config), _) => out.roots.push(StandardRoot::new(
                Scope::User,
                config.join("opencode/skills"),
            )),
            (None, Some(home)) => out.roots.push(StandardRoot::new(
                Scope::User,
                home.join(".config/opencode/skills"),
            )),
            (None, None) => {}
        }
        out
    }

    /// The existing root folders in precedence order, each folder once (the
    /// first of several paths to one folder is kept).
    pub fn discover(&self) -> FoundRoots {
        let candidates = self.candidates();
        let mut out = FoundRoots {
            roots: Vec::new(),
            diagnostics: candidates.diagnostics,
        };
        let mut seen = HashSet::new();
        for root in candidates.roots {
            match fs::metadata(&root.path) {
                Ok(meta) if meta.is_dir() => {
                    let id = fs::canonicalize(&root.path).unwrap_or_else(|_| root.path.clone());
                    if seen.insert(id) {
                        out.roots.push(root);
                    }
                }
                Ok(_) => out.diagnostics.push(Diagnostic::warning(
                    Code::RootNotFolder,
                    format!(
                        "the {} skills folder `{}` is not a folder; it is skipped",
                        root.scope, root.label
                    ),
                )),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => out.diagnostics.push(Diagnostic::warning(
                    Code::IoError,
                    format!(
                        "cannot open the {} skills folder `{}`: {err}; it is skipped",
                        root.scope, root.label
                    ),
                )),
            }
        }
        out
    }

    /// Finds the roots and scans each with `options` into one provider, on the
    /// calling thread. In async code, prefer [`StandardRoots::open_provider`].
    pub fn provider(&self, options: FsOptions) -> StandardProvider {
        StandardProvider::from_found(self.discover(), options)
    }

    /// [`StandardRoots::provider`] without blocking an async runtime: the roots
    /// are found and scanned on tokio's blocking pool (inline outside a runtime;
    /// see [`FsProvider::open`]).
    pub async fn open_provider(&self, options: FsOptions) -> StandardProvider {
        let found = match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let roots = self.clone();
                match handle.spawn_blocking(move || roots.discover()).await {
                    Ok(found) => found,
                    Err(_) => self.discover(),
                }
            }
            Err(_) => self.discover(),
        };
        StandardProvider::open(found, options).await
    }

    fn resolve_cwd(&self) -> Result<PathBuf, String> {
        let cwd = match &self.cwd {
            Some(cwd) => cwd.clone(),
            None => std::env::current_dir().map_err(|e| {
                format!("cannot read the working directory ({e}): the project-scope skill folders are skipped")
            })?,
        };
        std::path::absolute(&cwd).map_err(|e| {
            format!(
                "cannot make the working directory `{}` absolute ({e}): the project-scope skill folders are skipped",
                cwd.display()
            )
        })
    }
}

/// The standard provider from the environment: `StandardRoots::new().provider(options)`.
///
/// Problems (collisions between roots, skipped skills, a missing home folder)
/// are in [`SkillProvider::diagnostics`]; the roots in use are
/// [`StandardProvider::roots`].
pub fn standard_provider(options: FsOptions) -> StandardProvider {
    StandardRoots::new().provider(options)
}

/// An environment variable as a path; empty counts as unset. `HOME` falls back
/// to `USERPROFILE` on Windows.
fn resolve(input: &Input, var: &str) -> Option<PathBuf> {
    match input {
        Input::Given(value) => value.clone(),
        Input::FromEnv => {
            let non_empty = |v: OsString| (!v.is_empty()).then(|| PathBuf::from(v));
            let value = std::env::var_os(var).and_then(non_empty);
            if value.is_none() && var == "HOME" && cfg!(windows) {
                return std::env::var_os("USERPROFILE").and_then(non_empty);
            }
            value
        }
    }
}

/// The folders searched for project roots: `cwd` and its ancestors up to the
/// repository root, nearest first; only `cwd` when no ancestor has `.git`.
pub fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for dir in cwd.ancestors() {
        dirs.push(dir.to_path_buf());
        if fs::symlink_metadata(dir.join(".git")).is_ok() {
            return dirs;
        }
    }
    vec![cwd.to_path_buf()]
}

/// The skills of the standard roots as one provider: earlier roots win.
///
/// `list`, `get` and `read_resource` go through a [`LayeredProvider`] with one
/// [`FsProvider`] per root (labelled with the root's path). `diagnostics` returns
/// each root's own diagnostics, the problems met finding the roots, and one
/// `layer-collision` warning per skill found in two roots, naming both skill
/// folders.
#[derive(Debug)]
pub struct StandardProvider {
    roots: Vec<StandardRoot>,
    layers: Vec<Arc<FsProvider>>,
    layered: LayeredProvider,
    root_diagnostics: Vec<Diagnostic>,
}

impl StandardProvider {
    fn from_found(found: FoundRoots, options: FsOptions) -> Self {
        let layers = found
            .roots
            .iter()
            .map(|root| Arc::new(FsProvider::new([root.path.clone()], options.clone())))
            .collect();
        Self::from_layers(found, layers)
    }

    /// Stacks one provider per root, in the order of `found.roots`.
    fn from_layers(found: FoundRoots, layers: Vec<Arc<FsProvider>>) -> Self {
        let mut layered = LayeredProvider::new();
        for (root, provider) in found.roots.iter().zip(&layers) {
            layered = layered.with_layer(root.label.clone(), provider.clone());
        }
        Self {
            roots: found.roots,
            layers,
            layered,
            root_diagnostics: found.diagnostics,
        }
    }

    /// Builds a provider over explicit roots, highest precedence first (e.g. the
    /// result of [`StandardRoots::discover`], filtered). Scans on the calling
    /// thread; in async code, prefer [`StandardProvider::open`].
    pub fn with_roots(roots: FoundRoots, options: FsOptions) -> Self {
        Self::from_found(roots, options)
    }

    /// [`StandardProvider::with_roots`] without blocking an async runtime: each
    /// root is scanned with [`FsProvider::open`].
    pub async fn open(found: FoundRoots, options: FsOptions) -> Self {
        let mut layers = Vec::with_capacity(found.roots.len());
        for root in &found.roots {
            let provider = FsProvider::open([root.path.clone()], options.clone()).await;
            layers.push(Arc::new(provider));
        }
        Self::from_layers(found, layers)
    }

    /// The roots in use, highest precedence first.
    pub fn roots(&self) -> &[StandardRoot] {
        &self.roots
    }

    /// The folder of the skill `name` as served (from the first root that has it).
    pub fn skill_dir(&self, name: &str) -> Option<PathBuf> {
        self.layers.iter().find_map(|l| l.skill_dir(name))
    }

    /// Rescans every root, one after the other (see [`FsProvider::rescan`]).
    pub async fn rescan(&self) {
        for layer in &self.layers {
            layer.rescan().await;
        }
    }

    /// One warning per skill that two roots both have, naming both skill folders;
    /// the earlier root's skill is the one used. A skill reached through two roots
    /// that resolves to the same real folder (a symlink) is not a collision.
    pub async fn collisions(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        // name -> (root index, skill folder) of the skill in use.
        let mut winners: Vec<(String, usize, PathBuf)> = Vec::new();
        for (i, layer) in self.layers.iter().enumerate() {
            let Ok(catalog) = layer.list().await else {
                continue;
            };
            for name in catalog.names() {
                let Some(dir) = layer.skill_dir(name) else {
                    continue;
                };
                match winners.iter().find(|(n, _, _)| n == name) {
                    Some((_, w, winner_dir)) => {
                        if same_folder(winner_dir, &dir) {
                            continue;
                        }
                        let message = format!(
                            "skill `{name}` exists in `{}` and in `{}`; the one in `{}` is used ({} root `{}` takes precedence over {} root `{}`)",
                            winner_dir.display(),
                            dir.display(),
                            winner_dir.display(),
                            self.roots[*w].scope,
                            self.roots[*w].label,
                            self.roots[i].scope,
                            self.roots[i].label,
                        );
                        let mut diag = Diagnostic::warning(Code::LayerCollision, message);
                        if let Some(md) = crate::SkillFs::default().find_skill_md(&dir) {
                            diag = diag.in_file(md.display().to_string());
                        }
                        out.push(diag);
                    }
                    None => winners.push((name.to_owned(), i, dir)),
                }
            }
        }
        out
    }
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[async_trait]
impl SkillProvider for StandardProvider {
    async fn list(&self) -> Result<Catalog, Error> {
        self.layered.list().await
    }

    fn list_cached(&self) -> Option<Catalog> {
        self.layered.list_cached()
    }

    async fn get(&self, name: &str) -> Result<Arc<Skill>, Error> {
        self.layered.get(name).await
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent, Error> {
        self.layered.read_resource(name, path, range).await
    }

    async fn read_resource_bytes(&self, name: &str, path: &str) -> Result<ResourceBytes, Error> {
        self.layered.read_resource_bytes(name, path).await
    }

    async fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = self.root_diagnostics.clone();
        for layer in &self.layers {
            out.extend(layer.diagnostics().await);
        }
        out.extend(self.collisions().await);
        out
    }
}
