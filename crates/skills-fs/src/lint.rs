//! The file-system facts lint needs (F-FMT-6), and lint over a skill folder.
//!
//! The rules live in [`skills_core::lint`]; this module only gathers
//! [`ResourceFact`]s from a skill folder: every file's path and size, its execute
//! bit, the first line of each script (at most [`FIRST_LINE_BYTES`] bytes read)
//! and the paths each Markdown file names (files up to [`MAX_LINK_SCAN_BYTES`]).
//!
//! The walk is bounded ([`MAX_FILES`], [`MAX_DEPTH`]), visits entries in byte
//! order, skips dot entries, `node_modules` and `__pycache__`, and never follows
//! a symlinked folder. A symlinked file is described by its target (size,
//! execute bit, the first line of a script), but a symlinked Markdown file is not
//! read for the paths it names. Special files (FIFOs, devices) are left out.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read as _};
use std::path::Path;

use crate::discover::Discovery;
use skills_core::{Code, Diagnostic, SkillDocument};
use skills_core::{ResourceFact, lint_skill, mentioned_paths};

/// At most this many files are described.
pub(crate) const MAX_FILES: usize = 2_000;
/// Folders deeper than this below the skill folder are not walked.
pub(crate) const MAX_DEPTH: usize = 8;
/// The most bytes read from a script to find its first line.
pub(crate) const FIRST_LINE_BYTES: usize = 256;
/// Markdown files larger than this are not scanned for the paths they name.
pub(crate) const MAX_LINK_SCAN_BYTES: u64 = 256 * 1024;

// Folders never walked: the same tool and dependency folders discovery skips
// by default (dot entries are skipped anyway).
use crate::options::DEFAULT_SKIP_DIRS as SKIPPED_DIRS;

/// Describes the files of the skill folder `dir` for [`lint_skill`].
///
/// Paths are relative and `/`-separated, sorted. A file that vanishes or cannot
/// be read while walking is described without the facts that needed reading.
///
/// # Errors
/// When `dir` itself cannot be listed.
pub fn resource_facts(dir: &Path) -> io::Result<Vec<ResourceFact>> {
    let mut out = Vec::new();
    // The root must be listable; deeper failures are skipped.
    let names = sorted_names(dir)?;
    walk(dir, "", names, 0, &mut out);
    Ok(out)
}

/// Lints every skill of `discovery` that parsed and adds the warnings to its
/// diagnostics: [`lint_skill_dir`] for each, on one thread per core when there
/// are many (the result is the same as linting them one by one).
pub fn lint_discovery(discovery: &mut Discovery) {
    let found = crate::parallel::map(&discovery.skills, |skill| {
        match (&skill.document, &skill.skill_md) {
            // A single-file skill has no files: nothing to walk.
            (Some(document), Some(md)) if skill.single_file => {
                located(lint_skill(document, &[]), &skill.dir, md)
            }
            (Some(document), Some(md)) => lint_skill_dir(&skill.dir, md, document),
            _ => Vec::new(),
        }
    });
    for (skill, lint) in discovery.skills.iter_mut().zip(found) {
        skill.diagnostics.extend(lint);
    }
}

/// Lints the skill in `dir` whose `SKILL.md` (at `skill_md`) parsed into
/// `document`. Diagnostics about `SKILL.md` carry `skill_md` as their file; those
/// about another file carry that file's path.
pub fn lint_skill_dir(dir: &Path, skill_md: &Path, document: &SkillDocument) -> Vec<Diagnostic> {
    let facts = match resource_facts(dir) {
        Ok(facts) => facts,
        Err(err) => {
            return vec![
                Diagnostic::warning(
                    Code::IoError,
                    format!("cannot list the skill's files for lint: {err}"),
                )
                .in_file(skill_md.display().to_string()),
            ];
        }
    };
    located(lint_skill(document, &facts), dir, skill_md)
}

/// Lint diagnostics with their file: a skill's file below `dir`, else its
/// `SKILL.md`.
fn located(lints: Vec<Diagnostic>, dir: &Path, skill_md: &Path) -> Vec<Diagnostic> {
    lints
        .into_iter()
        .map(|mut d| {
            let file = match d.file.take() {
                Some(rel) => dir.join(rel).display().to_string(),
                None => skill_md.display().to_string(),
            };
            d.in_file(file)
        })
        .collect()
}

fn sorted_names(dir: &Path) -> io::Result<Vec<OsString>> {
    let mut names = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect::<Vec<_>>();
    names.sort();
    Ok(names)
}

fn walk(dir: &Path, prefix: &str, names: Vec<OsString>, depth: usize, out: &mut Vec<ResourceFact>) {
    for name in names {
        if out.len() >= MAX_FILES {
            return;
        }
        let Some(name) = name.to_str() else {
            continue;
        };
        if name.starts_with('.') || SKIPPED_DIRS.contains(&name) {
            continue;
        }
        let path = dir.join(name);
        let rel = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        let Ok(link_meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if link_meta.is_dir() {
            if depth + 1 < MAX_DEPTH
                && let Ok(children) = sorted_names(&path)
            {
                walk(&path, &rel, children, depth + 1, out);
            }
            continue;
        }
        // A symlink is described by its target; a link to a folder is not walked.
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let mut fact =
            ResourceFact::new(rel.clone(), meta.len()).with_executable(executable(&meta));
        if rel.starts_with("scripts/")
            && let Ok(line) = first_line(&path)
        {
            fact = fact.with_first_line(line);
        }
        let is_markdown = name.ends_with(".md") || name.ends_with(".markdown");
        // A symlinked document may point out of the skill: not read.
        if is_markdown
            && link_meta.is_file()
            && rel != "SKILL.md"
            && meta.len() <= MAX_LINK_SCAN_BYTES
            && let Ok(bytes) = read_capped(&path, MAX_LINK_SCAN_BYTES)
        {
            fact = fact.with_links(mentioned_paths(&String::from_utf8_lossy(&bytes)));
        }
        out.push(fact);
    }
}

#[cfg(unix)]
fn executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_meta: &fs::Metadata) -> bool {
    true
}

/// The first line of a file, reading at most [`FIRST_LINE_BYTES`] bytes.
fn first_line(path: &Path) -> io::Result<String> {
    let mut buf = Vec::with_capacity(FIRST_LINE_BYTES);
    File::open(path)?
        .take(FIRST_LINE_BYTES as u64)
        .read_to_end(&mut buf)?;
    let end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    let line = String::from_utf8_lossy(&buf[..end]);
    Ok(line.trim_end_matches('\r').to_owned())
}

fn read_capped(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    File::open(path)?.take(cap).read_to_end(&mut buf)?;
    Ok(buf)
}
