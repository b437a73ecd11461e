//! Discovery: finding skill folders under roots and parsing their `SKILL.md` (F-PRV-3).
//!
//! Rules:
//! * A root is either one skill folder (it has a `SKILL.md`) or a folder searched
//!   recursively for skill folders, down to [`FsOptions::max_depth`] levels and at
//!   most [`FsOptions::max_dirs`] folders.
//! * Dot folders, `node_modules` and `target` are skipped; a skill folder is not
//!   searched further (its subfolders are its resources).
//! * Children are visited in byte order of their names, so results (and which of two
//!   same-named skills wins) are deterministic.
//! * Symlinked folders are followed; a folder reached twice (a symlink loop or two
//!   links to one place) is visited once.
//! * A bad skill yields diagnostics and is skipped; it never stops discovery.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use skills_core::{Code, Diagnostic, Origin, SkillDocument, parse_skill_md_bytes};

use crate::options::FsOptions;

/// Folder names never searched for skills.
const SKIPPED_DIRS: &[&str] = &["node_modules", "target"];

/// One skill folder found by discovery, valid or not.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DiscoveredSkill {
    /// The skill folder.
    pub dir: PathBuf,
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

    /// The usable skills, first of each name, with a `skill-duplicate` warning
    /// added to the later ones. Returns (name → index into `skills`).
    pub(crate) fn index_by_name(&mut self) -> BTreeMap<String, usize> {
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

/// Finds and parses every skill under `roots`.
pub fn discover(roots: &[PathBuf], options: &FsOptions) -> Discovery {
    let mut walk = Walk {
        options,
        out: Discovery::default(),
        visited: HashSet::new(),
        dirs_seen: 0,
        limit_reported: false,
    };
    for root in roots {
        walk.root(root);
    }
    walk.out
}

/// Finds the `SKILL.md` of a folder (`skill.md` as a fallback).
pub fn find_skill_md(dir: &Path) -> Option<PathBuf> {
    ["SKILL.md", "skill.md"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| fs::symlink_metadata(p).is_ok())
}

/// Reads and parses one skill folder.
pub fn load_skill_dir(dir: &Path, options: &FsOptions) -> DiscoveredSkill {
    match find_skill_md(dir) {
        Some(md) => load_skill_md(dir, md, options),
        None => DiscoveredSkill {
            dir: dir.to_path_buf(),
            skill_md: None,
            document: None,
            diagnostics: vec![Diagnostic::error(
                Code::SkillMdMissing,
                format!("`{}` has no SKILL.md", dir.display()),
            )],
        },
    }
}

/// Reads and parses the `SKILL.md` at `md` of the skill folder `dir`.
fn load_skill_md(dir: &Path, md: PathBuf, options: &FsOptions) -> DiscoveredSkill {
    let mut skill = DiscoveredSkill {
        dir: dir.to_path_buf(),
        skill_md: None,
        document: None,
        diagnostics: Vec::new(),
    };
    let file = md.display().to_string();
    skill.skill_md = Some(md.clone());
    let error =
        |code: Code, message: String| Diagnostic::error(code, message).in_file(file.clone());
    let meta = match fs::metadata(&md) {
        Ok(meta) => meta,
        Err(err) => {
            skill
                .diagnostics
                .push(error(Code::IoError, format!("cannot read SKILL.md: {err}")));
            return skill;
        }
    };
    if !meta.is_file() {
        skill.diagnostics.push(error(
            Code::SkillMdNotFile,
            "SKILL.md is not a regular file (is it a directory?)".to_owned(),
        ));
        return skill;
    }
    if meta.len() > options.max_skill_md_bytes {
        skill.diagnostics.push(error(
            Code::SkillMdTooLarge,
            format!(
                "SKILL.md is {} bytes; the limit is {} bytes",
                meta.len(),
                options.max_skill_md_bytes
            ),
        ));
        return skill;
    }
    let bytes = match read_capped(&md, options.max_skill_md_bytes) {
        Ok(bytes) => bytes,
        Err(err) => {
            skill
                .diagnostics
                .push(error(Code::IoError, format!("cannot read SKILL.md: {err}")));
            return skill;
        }
    };
    // `.` or `..` have no file name: use the real folder's name.
    let canonical = dir
        .file_name()
        .is_none()
        .then(|| fs::canonicalize(dir).ok())
        .flatten();
    let dir_name = canonical
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .and_then(|n| n.to_str());
    let outcome = parse_skill_md_bytes(
        &bytes,
        Origin {
            file: Some(&file),
            dir_name,
        },
        &options.validation,
    );
    skill.document = outcome.document;
    skill.diagnostics = outcome.diagnostics;
    skill
}

/// Reads at most `cap + 1` bytes, so a file that grew after `stat` is still bounded.
pub(crate) fn read_capped(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    let file = fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::other(format!(
            "the file grew beyond {cap} bytes while being read"
        )));
    }
    Ok(bytes)
}

struct Walk<'a> {
    options: &'a FsOptions,
    out: Discovery,
    visited: HashSet<DirId>,
    dirs_seen: usize,
    limit_reported: bool,
}

impl Walk<'_> {
    fn root(&mut self, root: &Path) {
        match fs::metadata(root) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                self.out.diagnostics.push(Diagnostic::error(
                    Code::IoError,
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
        }
        if let Some(md) = find_skill_md(root) {
            if self.first_visit(root, None) {
                let skill = load_skill_md(root, md, self.options);
                self.out.skills.push(skill);
            }
            return;
        }
        self.first_visit(root, None);
        self.children(root, 1);
    }

    /// Records a folder; `false` when it was already visited (loop or alias).
    fn first_visit(&mut self, dir: &Path, meta: Option<&fs::Metadata>) -> bool {
        match dir_id(dir, meta) {
            Some(id) => self.visited.insert(id),
            None => true,
        }
    }

    /// Searches the children of `dir` (at `depth` below the root); returns how many
    /// skill folders were found.
    fn children(&mut self, dir: &Path, depth: usize) -> usize {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) => {
                self.out.diagnostics.push(Diagnostic::warning(
                    Code::IoError,
                    format!("cannot list `{}`: {err}", dir.display()),
                ));
                return 0;
            }
        };
        let mut names: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        names.sort();
        let mut found = 0;
        for name in names {
            let Some(text) = name.to_str() else { continue };
            if text.starts_with('.') || SKIPPED_DIRS.contains(&text) {
                continue;
            }
            let path = dir.join(&name);
            let meta = match fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => meta,
                _ => continue,
            };
            if self.dirs_seen >= self.options.max_dirs {
                if !self.limit_reported {
                    self.limit_reported = true;
                    self.out.diagnostics.push(Diagnostic::warning(
                        Code::IoError,
                        format!(
                            "stopped searching after {} folders (the limit); some skills may be missing",
                            self.options.max_dirs
                        ),
                    ));
                }
                return found;
            }
            self.dirs_seen += 1;
            if !self.first_visit(&path, Some(&meta)) {
                continue;
            }
            if let Some(md) = find_skill_md(&path) {
                let skill = load_skill_md(&path, md, self.options);
                self.out.skills.push(skill);
                found += 1;
                continue;
            }
            let below = if depth < self.options.max_depth {
                self.children(&path, depth + 1)
            } else {
                0
            };
            if below == 0 && depth == 1 && looks_like_skill(&path) {
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
}

/// What identifies a folder however it was reached (through symlinks or not).
#[cfg(unix)]
type DirId = (u64, u64);
#[cfg(not(unix))]
type DirId = PathBuf;

/// The device and inode of a folder: one `stat` (reused when the caller has
/// it), where canonicalizing would cost one per path component.
#[cfg(unix)]
fn dir_id(dir: &Path, meta: Option<&fs::Metadata>) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt as _;
    match meta {
        Some(m) => Some((m.dev(), m.ino())),
        None => fs::metadata(dir).ok().map(|m| (m.dev(), m.ino())),
    }
}

#[cfg(not(unix))]
fn dir_id(dir: &Path, _meta: Option<&fs::Metadata>) -> Option<DirId> {
    fs::canonicalize(dir).ok()
}

/// A folder with `scripts/`, `references/` or `assets/`, or Markdown files, but no
/// skills below it, is probably a skill missing its `SKILL.md`.
fn looks_like_skill(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        matches!(name.as_ref(), "scripts" | "references" | "assets")
            || name.to_ascii_lowercase().ends_with(".md")
    })
}
