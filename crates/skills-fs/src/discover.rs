//! Discovery: finding skill folders under roots and parsing their `SKILL.md` (F-PRV-3).
//!
//! Rules:
//! * A root is either one skill folder (it has a `SKILL.md`) or a folder searched
//!   recursively for skill folders, down to [`FsOptions::max_depth`] levels and at
//!   most [`FsOptions::max_dirs`] folders.
//! * Folders named in [`FsOptions::skip_dirs`] (version control, tool and
//!   dependency folders: `.git`, `node_modules`, `target`, … see
//!   [`DEFAULT_SKIP_DIRS`](crate::options::DEFAULT_SKIP_DIRS)) are not searched;
//!   other dot folders are (vendor libraries keep skills in `.curated/`,
//!   `.system/`, `.experimental/`).
//! * A skill folder's subfolders are its files, and may hold skills of their
//!   own (`acme/billing/refunds/SKILL.md` inside `acme/billing/`): with
//!   [`FsOptions::nested_skills`] (the default) they are searched too, within
//!   the same depth and folder limits, and each nested skill is listed on its
//!   own while its files stay in the enclosing skill's listing (as in rmcp's
//!   folder catalog). Inside a skill folder only real folders are searched
//!   (no symlinks, no dot folders, none of [`FsOptions::skip_dirs`]), and
//!   nothing there is counted or warned about: those folders are files of the
//!   skill, not a library.
//! * Every skill records its path below its root (`acme/billing`) as
//!   [`SkillMetadata::path`](skills_core::SkillMetadata::path); a root that
//!   is itself a skill folder has its folder name as the path.
//! * Every folder not searched is counted, one warning per reason: by name
//!   (`dirs-skipped`), at the depth limit or after the folder limit
//!   (`discovery-limit`). A folder whose name is not UTF-8 gets a `name-not-utf8`
//!   warning. A folder that cannot be listed, and a `SKILL.md` that cannot be
//!   read, are errors (`io-error`); a root that is not a folder is a
//!   `root-not-folder` error.
//! * `SKILL.md` is read by handle beneath its skill folder, like every resource
//!   (see [`crate::beneath`]): a `SKILL.md` symlink that stays inside the folder
//!   is followed, one leading out is a `path-outside-skill` error.
//! * Children are visited in byte order of their names, so results (and which of two
//!   same-named skills wins) are deterministic.
//! * Symlinked folders are followed; a folder reached twice (a symlink loop or two
//!   links to one place) is visited once.
//! * A bad skill yields diagnostics and is skipped; it never stops discovery.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use skills_core::{Code, Diagnostic, Origin, ResourcePath, SkillDocument, parse_skill_md_bytes};

use crate::beneath::Refusal;

use crate::cache::Stamp;
use crate::options::FsOptions;
use crate::vfs::{FileKind, FileStat, Vfs};

/// One skill folder found by discovery, valid or not.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DiscoveredSkill {
    /// The skill folder.
    pub dir: PathBuf,
    /// The folder's path below its root, `/`-separated (`acme/billing`);
    /// `None` for a folder loaded on its own. Also set as the parsed
    /// metadata's [`path`](skills_core::SkillMetadata::path).
    pub path: Option<String>,
    /// Its `SKILL.md` (or `skill.md`), when there is one.
    pub skill_md: Option<PathBuf>,
    /// The parsed skill, when it is usable in the chosen mode.
    pub document: Option<SkillDocument>,
    /// Every problem found in this skill.
    pub diagnostics: Vec<Diagnostic>,
}

impl DiscoveredSkill {
    /// `true` when the skill has no error diagnostic.
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The skill's name, when it parsed.
    pub fn name(&self) -> Option<&str> {
        self.document.as_ref().map(|d| d.metadata.name.as_str())
    }
}

/// Everything discovery found under a set of roots.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Discovery {
    /// Skill folders in discovery order (roots in order, then byte order of paths).
    pub skills: Vec<DiscoveredSkill>,
    /// Problems not tied to one skill folder (unreadable roots, limits reached,
    /// folders without `SKILL.md`).
    pub diagnostics: Vec<Diagnostic>,
}

impl Discovery {
    /// `true` when no skill and no root has an error diagnostic.
    pub fn is_valid(&self) -> bool {
        self.skills.iter().all(DiscoveredSkill::is_valid)
            && !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Picks the first usable skill of each name and adds a `skill-duplicate`
    /// warning to every later one. Returns name → index into `skills`.
    pub fn index_by_name(&mut self) -> BTreeMap<String, usize> {
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for i in 0..self.skills.len() {
            let Some(name) = self.skills[i].name().map(str::to_owned) else {
                continue;
            };
            match index.get(&name) {
                Some(&first) => {
                    let winner = self.skills[first].dir.display().to_string();
                    let loser = &mut self.skills[i];
                    let message = format!(
                        "skill `{name}` in `{}` is ignored: `{winner}` has the same name and was found first",
                        loser.dir.display()
                    );
                    let mut diag = Diagnostic::warning(Code::SkillDuplicate, message);
                    if let Some(md) = &loser.skill_md {
                        diag = diag.in_file(md.display().to_string());
                    }
                    loser.diagnostics.push(diag);
                }
                None => {
                    index.insert(name, i);
                }
            }
        }
        index
    }
}

/// Finds and parses every skill under `roots`, through `vfs`.
pub(crate) fn discover_in(vfs: &dyn Vfs, roots: &[PathBuf], options: &FsOptions) -> Discovery {
    discover_watched(vfs, roots, options).discovery
}

/// A discovery and what the staleness check needs to tell whether it is still
/// current.
#[derive(Debug)]
pub(crate) struct Watched {
    pub(crate) discovery: Discovery,
    /// One stat per folder looked into (roots, searched folders, skill folders),
    /// taken before the folder was read.
    pub(crate) dirs: Vec<Stamp>,
    /// One stat per `SKILL.md` read, taken before it was read; parallel to
    /// `discovery.skills`.
    pub(crate) skill_mds: Vec<Stamp>,
}

/// Discovery that also records the stats it made.
pub(crate) fn discover_watched(vfs: &dyn Vfs, roots: &[PathBuf], options: &FsOptions) -> Watched {
    let mut walk = Walk {
        vfs,
        options,
        out: Discovery::default(),
        visited: HashSet::new(),
        dirs_seen: 0,
        skipped: Skipped::default(),
        dirs: Vec::new(),
        pending: Vec::new(),
    };
    let _span = tracing::debug_span!("discover", roots = roots.len()).entered();
    for root in roots {
        walk.root(root);
    }
    walk.report_skipped();
    let pending = std::mem::take(&mut walk.pending);
    let loaded = load_all(vfs, options, &pending);
    let mut skill_mds = Vec::with_capacity(loaded.len());
    for ((mut skill, stamp), found) in loaded.into_iter().zip(pending) {
        if let Some(document) = &mut skill.document {
            document.metadata.path = Some(found.path.clone());
        }
        skill.path = Some(found.path);
        walk.out.skills.push(skill);
        skill_mds.push(stamp);
    }
    tracing::debug!(
        skills = walk.out.skills.len(),
        folders = walk.dirs_seen,
        "discovered"
    );
    Watched {
        discovery: walk.out,
        dirs: walk.dirs,
        skill_mds,
    }
}

/// A skill folder the walk found, to be read and parsed.
struct Pending {
    dir: PathBuf,
    /// Below its root, `/`-separated.
    path: String,
    md: PathBuf,
    stat: Option<FileStat>,
}

/// Reads and parses every pending skill, in order, on one thread per core when
/// there are many (see [`crate::parallel::map`]): the result is the same as
/// loading them one by one.
fn load_all(
    vfs: &dyn Vfs,
    options: &FsOptions,
    pending: &[Pending],
) -> Vec<(DiscoveredSkill, Stamp)> {
    crate::parallel::map(pending, |p| {
        load_skill_md(vfs, &p.dir, p.md.clone(), p.stat, options)
    })
}

/// Finds the `SKILL.md` of a folder (`skill.md` as a fallback), through `vfs`.
pub(crate) fn find_skill_md_in(vfs: &dyn Vfs, dir: &Path) -> Option<PathBuf> {
    ["SKILL.md", "skill.md"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| vfs.symlink_metadata(p).is_ok())
}

/// Reads and parses one skill folder, through `vfs`.
pub(crate) fn load_skill_dir_in(vfs: &dyn Vfs, dir: &Path, options: &FsOptions) -> DiscoveredSkill {
    load_skill_dir_stamped(vfs, dir, options).0
}

/// [`load_skill_dir_in`], also returning the stat of the `SKILL.md` taken before
/// it was read.
pub(crate) fn load_skill_dir_stamped(
    vfs: &dyn Vfs,
    dir: &Path,
    options: &FsOptions,
) -> (DiscoveredSkill, Option<Stamp>) {
    match find_skill_md_in(vfs, dir) {
        Some(md) => {
            let (skill, stamp) = load_skill_md(vfs, dir, md, None, options);
            (skill, Some(stamp))
        }
        None => (
            DiscoveredSkill {
                dir: dir.to_path_buf(),
                path: None,
                skill_md: None,
                document: None,
                diagnostics: vec![Diagnostic::error(
                    Code::SkillMdMissing,
                    format!("`{}` has no SKILL.md", dir.display()),
                )],
            },
            None,
        ),
    }
}

/// Reads and parses the `SKILL.md` at `md` of the skill folder `dir` (`stat`:
/// its `metadata`, when the caller has it); also returns the stat of `md` taken
/// before reading it.
fn load_skill_md(
    vfs: &dyn Vfs,
    dir: &Path,
    md: PathBuf,
    stat: Option<FileStat>,
    options: &FsOptions,
) -> (DiscoveredSkill, Stamp) {
    let mut skill = DiscoveredSkill {
        dir: dir.to_path_buf(),
        path: None,
        skill_md: None,
        document: None,
        diagnostics: Vec::new(),
    };
    let file = md.display().to_string();
    skill.skill_md = Some(md.clone());
    let error =
        |code: Code, message: String| Diagnostic::error(code, message).in_file(file.clone());
    let _span = tracing::debug_span!("skill_md", path = %file).entered();
    // Read by handle beneath the skill folder, like every resource: a link
    // inside the folder is followed, one leading out is refused.
    let name = md
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| ResourcePath::parse(n).ok());
    let Some(name) = name else {
        skill.diagnostics.push(error(
            Code::IoError,
            "cannot read SKILL.md: its path has no file name".to_owned(),
        ));
        return (skill, Stamp::new(&md, stat));
    };
    let (meta, bytes) = match vfs.read_beneath(dir, &name, options.max_skill_md_bytes) {
        Ok(read) => read,
        Err(err) => {
            let diag = match Refusal::of(&err) {
                Some(Refusal::NotRegular(kind)) => {
                    tracing::warn!(kind = ?kind, "refused SKILL.md: not a regular file");
                    error(
                        Code::SkillMdNotFile,
                        format!(
                            "SKILL.md is not a regular file (it is {})",
                            match kind {
                                FileKind::Dir => "a directory",
                                FileKind::Symlink => "a symbolic link",
                                _ => "a pipe, device or socket",
                            }
                        ),
                    )
                }
                Some(Refusal::TooLarge { len, cap }) => {
                    tracing::warn!(bytes = len, cap, "refused SKILL.md: too large");
                    error(
                        Code::SkillMdTooLarge,
                        format!("SKILL.md is {len} bytes; the limit is {cap} bytes"),
                    )
                }
                Some(Refusal::OutsideRoot) => {
                    tracing::warn!("refused SKILL.md: a symlink leading outside the skill folder");
                    error(
                        Code::PathOutsideSkill,
                        "SKILL.md is a symlink leading outside the skill folder; it is not read"
                            .to_owned(),
                    )
                }
                None => error(Code::IoError, format!("cannot read SKILL.md: {err}")),
            };
            skill.diagnostics.push(diag);
            return (skill, Stamp::new(&md, stat));
        }
    };
    tracing::debug!(bytes = bytes.len(), "read SKILL.md");
    let stamp = Stamp::new(&md, Some(meta));
    // `.` or `..` have no file name: use the real folder's name.
    let canonical = dir
        .file_name()
        .is_none()
        .then(|| vfs.canonicalize(dir).ok())
        .flatten();
    let dir_name = canonical
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .and_then(|n| n.to_str());
    let outcome = parse_skill_md_bytes(
        &bytes,
        Origin::new(Some(&file), dir_name),
        &options.validation,
    );
    skill.document = outcome.document;
    skill.diagnostics = outcome.diagnostics;
    (skill, stamp)
}

struct Walk<'a> {
    vfs: &'a dyn Vfs,
    options: &'a FsOptions,
    out: Discovery,
    visited: HashSet<DirId>,
    dirs_seen: usize,
    skipped: Skipped,
    dirs: Vec<Stamp>,
    /// Skill folders found, loaded after the walk (in parallel when many).
    pending: Vec<Pending>,
}

/// Folders discovery did not search, per reason.
#[derive(Debug, Default)]
struct Skipped {
    /// By name ([`FsOptions::skip_dirs`]): how many of each name.
    by_name: BTreeMap<String, usize>,
    /// Folders at the depth limit whose contents were not searched.
    by_depth: usize,
    /// Folders not searched because the folder limit was reached.
    by_count: usize,
}

impl Walk<'_> {
    fn root(&mut self, root: &Path) {
        let meta = self.vfs.metadata(root);
        // A missing root is recorded too, so that creating it is noticed.
        self.dirs
            .push(Stamp::new(root, meta.as_ref().ok().copied()));
        let meta = match meta {
            Ok(meta) if meta.is_dir() => meta,
            Ok(_) => {
                self.out.diagnostics.push(Diagnostic::error(
                    Code::RootNotFolder,
                    format!("skills root `{}` is not a folder", root.display()),
                ));
                return;
            }
            Err(err) => {
                self.out.diagnostics.push(Diagnostic::error(
                    Code::IoError,
                    format!("cannot read skills root `{}`: {err}", root.display()),
                ));
                return;
            }
        };
        if let Some((md, stat)) = self.probe(root) {
            if self.first_visit(root, &meta) {
                let path = folder_name(self.vfs, root);
                self.load(root, &path, md, stat);
                self.nested_in(root, 1, &path);
            }
            return;
        }
        self.first_visit(root, &meta);
        self.children(root, 1, "");
    }

    /// [`find_skill_md_in`], trying the common case first: one `stat` of
    /// `SKILL.md`, whose result the load reuses.
    fn probe(&self, dir: &Path) -> Option<(PathBuf, Option<FileStat>)> {
        let md = dir.join("SKILL.md");
        match self.vfs.metadata(&md) {
            Ok(stat) => Some((md, Some(stat))),
            // Missing, or a dangling link (reported when loaded), or `skill.md`.
            Err(_) => find_skill_md_in(self.vfs, dir).map(|md| (md, None)),
        }
    }

    fn load(&mut self, dir: &Path, path: &str, md: PathBuf, stat: Option<FileStat>) {
        self.pending.push(Pending {
            dir: dir.to_path_buf(),
            path: path.to_owned(),
            md,
            stat,
        });
    }

    /// Counts the folder `path` against the folder limit and records its
    /// stamp (`meta`, taken before it is read: any later change shows);
    /// `false` when it is not to be searched (the limit is reached, counted
    /// in the warning, or it was visited already).
    fn enter(&mut self, path: &Path, meta: FileStat) -> bool {
        if self.dirs_seen >= self.options.max_dirs {
            self.skipped.by_count += 1;
            return false;
        }
        self.dirs_seen += 1;
        if !self.first_visit(path, &meta) {
            return false;
        }
        self.dirs.push(Stamp::new(path, Some(meta)));
        true
    }

    /// Records a folder; `false` when it was already visited (loop or alias).
    fn first_visit(&mut self, dir: &Path, meta: &FileStat) -> bool {
        match dir_id(self.vfs, dir, meta) {
            Some(id) => self.visited.insert(id),
            None => true,
        }
    }

    /// Searches the children of `dir` (at `depth` below the root, at `rel`
    /// below it); returns how many skill folders were found.
    fn children(&mut self, dir: &Path, depth: usize, rel: &str) -> usize {
        let entries = match self.vfs.read_dir(dir) {
            Ok(entries) => entries,
            Err(err) => {
                // Vanished since it was seen: a race, not a broken library.
                let diag = if err.kind() == std::io::ErrorKind::NotFound {
                    Diagnostic::warning
                } else {
                    Diagnostic::error
                };
                tracing::warn!(folder = %dir.display(), error = %err, "cannot list a folder");
                self.out.diagnostics.push(diag(
                    Code::IoError,
                    format!("cannot list `{}`: {err}", dir.display()),
                ));
                return 0;
            }
        };
        let mut names = entries;
        names.sort();
        tracing::trace!(folder = %dir.display(), entries = names.len(), "searching");
        let mut found = 0;
        for name in names {
            let path = dir.join(&name);
            let text = name.to_str();
            if let Some(text) = text
                && self.options.skip_dirs.iter().any(|d| d == text)
            {
                if self.vfs.metadata(&path).is_ok_and(|m| m.is_dir()) {
                    *self.skipped.by_name.entry(text.to_owned()).or_default() += 1;
                }
                continue;
            }
            let meta = match self.vfs.metadata(&path) {
                Ok(meta) if meta.is_dir() => meta,
                _ => continue,
            };
            let Some(text) = text else {
                self.out.diagnostics.push(Diagnostic::warning(
                    Code::NameNotUtf8,
                    format!(
                        "skipped the folder `{}`: its name is not valid UTF-8",
                        path.display()
                    ),
                ));
                continue;
            };
            let child_rel = if rel.is_empty() {
                text.to_owned()
            } else {
                format!("{rel}/{text}")
            };
            if !self.enter(&path, meta) {
                continue;
            }
            if let Some((md, stat)) = self.probe(&path) {
                self.load(&path, &child_rel, md, stat);
                found += 1 + self.nested_in(&path, depth + 1, &child_rel);
                continue;
            }
            let below = if depth < self.options.max_depth {
                self.children(&path, depth + 1, &child_rel)
            } else {
                self.skipped.by_depth += 1;
                0
            };
            if below == 0 && depth == 1 && looks_like_skill(self.vfs, &path) {
                self.out.diagnostics.push(Diagnostic::warning(
                    Code::SkillMdMissing,
                    format!(
                        "`{}` looks like a skill folder but has no SKILL.md; it is skipped",
                        path.display()
                    ),
                ));
            }
            found += below;
        }
        found
    }

    /// Searches the skill folder `skill` (at `rel` below the root) for nested
    /// skills, its subfolders being at `depth`; returns how many were found.
    /// Nothing when [`FsOptions::nested_skills`] is off or `depth` is past the
    /// limit.
    fn nested_in(&mut self, skill: &Path, depth: usize, rel: &str) -> usize {
        if !self.options.nested_skills || depth > self.options.max_depth {
            return 0;
        }
        match self.vfs.read_dir_kinds(skill) {
            Ok(entries) => self.nested(skill, entries, depth, rel),
            Err(err) => {
                tracing::debug!(folder = %skill.display(), error = %err, "cannot list a skill folder");
                0
            }
        }
    }

    /// Searches the `entries` of `dir`, a skill folder or a folder inside
    /// one (its subfolders at `depth`, at `rel` below the root), for nested
    /// skills. Only real, visible folders are searched (the files the listing
    /// shows), and nothing skipped here is counted or warned about: a skill's
    /// folders are its files, not a library. The listing tells folders from
    /// files, so files cost no `stat`; each folder costs one `lstat` (its
    /// stamp for the staleness check) and one `read_dir`, which also tells
    /// whether it holds a `SKILL.md`.
    fn nested(
        &mut self,
        dir: &Path,
        mut entries: Vec<(OsString, Option<FileKind>)>,
        depth: usize,
        rel: &str,
    ) -> usize {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut found = 0;
        for (name, kind) in entries {
            let Some(text) = name.to_str() else {
                continue;
            };
            if text.starts_with('.')
                || self.options.skip_dirs.iter().any(|d| d == text)
                || kind.is_some_and(|k| k != FileKind::Dir)
            {
                continue;
            }
            let path = dir.join(&name);
            let meta = match self.vfs.symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => meta,
                _ => continue,
            };
            if !self.enter(&path, meta) {
                continue;
            }
            let children = match self.vfs.read_dir_kinds(&path) {
                Ok(children) => children,
                Err(err) => {
                    tracing::debug!(folder = %path.display(), error = %err, "cannot list a folder inside a skill");
                    continue;
                }
            };
            let child_rel = format!("{rel}/{text}");
            let manifest = ["SKILL.md", "skill.md"].into_iter().find(|md| {
                children
                    .iter()
                    .any(|(n, k)| n == md && *k != Some(FileKind::Dir))
            });
            if let Some(md) = manifest {
                self.load(&path, &child_rel, path.join(md), None);
                found += 1;
            }
            if depth < self.options.max_depth {
                found += self.nested(&path, children, depth + 1, &child_rel);
            }
        }
        found
    }

    /// One diagnostic per reason folders were not searched, with counts.
    fn report_skipped(&mut self) {
        let skipped = std::mem::take(&mut self.skipped);
        if !skipped.by_name.is_empty() {
            let total: usize = skipped.by_name.values().sum();
            let names: Vec<String> = skipped
                .by_name
                .iter()
                .map(|(name, n)| {
                    if *n == 1 {
                        name.clone()
                    } else {
                        format!("{name} ×{n}")
                    }
                })
                .collect();
            tracing::debug!(folders = total, "skipped folders by name");
            self.out.diagnostics.push(Diagnostic::warning(
                Code::DirsSkipped,
                format!(
                    "skipped {total} folder{} by name ({}); change `skip_dirs` to search them",
                    plural(total),
                    names.join(", ")
                ),
            ));
        }
        if skipped.by_depth > 0 {
            let n = skipped.by_depth;
            tracing::info!(
                folders = n,
                depth = self.options.max_depth,
                "folders at the depth limit not searched"
            );
            self.out.diagnostics.push(Diagnostic::warning(
                Code::DiscoveryLimit,
                format!(
                    "{n} folder{} at the depth limit ({} levels) {} not searched further; skills below {} may be missing",
                    plural(n),
                    self.options.max_depth,
                    if n == 1 { "was" } else { "were" },
                    if n == 1 { "it" } else { "them" },
                ),
            ));
        }
        if skipped.by_count > 0 {
            let n = skipped.by_count;
            tracing::warn!(
                folders = n,
                limit = self.options.max_dirs,
                "folder limit reached"
            );
            self.out.diagnostics.push(Diagnostic::warning(
                Code::DiscoveryLimit,
                format!(
                    "stopped searching after {} folders (the limit): {n} more folder{} (and what is below {}) {} not searched; some skills may be missing",
                    self.options.max_dirs,
                    plural(n),
                    if n == 1 { "it" } else { "them" },
                    if n == 1 { "was" } else { "were" },
                ),
            ));
        }
    }
}

/// The name of the folder `dir` (of the real folder for `.` or `..`), for the
/// path of a root that is itself a skill folder.
fn folder_name(vfs: &dyn Vfs, dir: &Path) -> String {
    let canonical = dir
        .file_name()
        .is_none()
        .then(|| vfs.canonicalize(dir).ok())
        .flatten();
    canonical
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What identifies a folder however it was reached (through symlinks or not).
#[derive(Debug, PartialEq, Eq, Hash)]
enum DirId {
    Inode(u64, u64),
    Path(PathBuf),
}

/// The device and inode of a folder, from the `stat` the caller already has
/// (canonicalizing would cost one per path component); the canonical path when
/// the file system does not report inodes.
fn dir_id(vfs: &dyn Vfs, dir: &Path, meta: &FileStat) -> Option<DirId> {
    match meta.file_id {
        Some((dev, ino)) => Some(DirId::Inode(dev, ino)),
        None => vfs.canonicalize(dir).ok().map(DirId::Path),
    }
}

/// A folder with `scripts/`, `references/` or `assets/`, or Markdown files, but no
/// skills below it, is probably a skill missing its `SKILL.md`.
fn looks_like_skill(vfs: &dyn Vfs, dir: &Path) -> bool {
    let Ok(entries) = vfs.read_dir(dir) else {
        return false;
    };
    entries.iter().any(|name| {
        let name = name.to_string_lossy();
        matches!(name.as_ref(), "scripts" | "references" | "assets")
            || name.to_ascii_lowercase().ends_with(".md")
    })
}
