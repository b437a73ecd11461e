//! `skills lock`, `skills verify` and `--locked`: a lockfile recording every
//! skill of the explicit roots with a digest (see `docs/lockfile.md`).
//!
//! The file is JSON with sorted keys and no timestamps, so it diffs and merges
//! cleanly:
//! `{"roots": [specs], "skills": {name: {digest, source, url?, version?}}, "version": 1}`.
//! A skill from a well-known index or a URL root is locked by the SHA-256 of the
//! artifact downloaded (an archive's skills share it); a skill in a local folder
//! by [`tree_digest`] of its folder.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skills_core::{Code, Diagnostic};
use skills_fs::remote::tree_digest;
use skills_fs::{FsOptions, SkillFs};

use crate::failure::Failure;
use crate::sources::{Root, Sources};
use crate::text;

/// Shown after the help of `lock` and `verify`.
pub(crate) const AFTER_HELP: &str = "\
Roots: as for `skills list` (PATH arguments, --root, $SKILLS_ROOT). `skills verify`
with none uses the roots recorded in the lockfile. --standard-roots are not locked.

Exit codes:
  0  lock: written; verify: the skills match the lockfile
  1  verify (and --locked): the skills differ (a `changed`, `added` or `removed`
     line each); lock: a skill was refused (digest mismatch), nothing written
  2  no lockfile (verify, --locked), usage or I/O error";

/// The arguments of `skills lock` and `skills verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct LockArgs {
    /// Skill folders, folders of skills, or URLs (archives, SKILL.md, indexes).
    pub(crate) paths: Vec<PathBuf>,
}

/// The lockfile's content. Fields are declared in sorted order: serde writes
/// them in that order, so the file's keys are sorted.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Lockfile {
    /// The roots locked, in the order given.
    #[serde(default)]
    roots: Vec<String>,
    /// Each skill by name.
    skills: BTreeMap<String, Locked>,
    /// The format's version: 1.
    version: u32,
}

/// One locked skill.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Locked {
    /// `sha256:<hex>` of the artifact, or the folder digest.
    digest: String,
    /// The root it came from, as given.
    source: String,
    /// The artifact's URL, for skills of URL roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    /// The `version` a well-known index declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
}

/// The format written.
const VERSION: u32 = 1;

/// Runs `skills lock`.
pub(crate) fn lock(args: LockArgs, sources: &Sources, mut out: impl Write) -> Result<u8, Failure> {
    let roots = sources.resolve_roots(sources.specs(args.paths)?)?;
    if roots.iter().any(|r| r.refused) {
        return Err(Failure {
            code: 1,
            message: "a skill was refused (see above); the lockfile is not written".into(),
            broken_pipe: false,
        });
    }
    let lock = current(&roots)?;
    let mut text = serde_json::to_string_pretty(&lock)
        .map_err(|e| Failure::usage(format!("cannot write JSON: {e}")))?;
    text.push('\n');
    std::fs::write(&sources.lockfile, text)
        .map_err(|e| Failure::usage(format!("cannot write {}: {e}", sources.lockfile.display())))?;
    writeln!(
        out,
        "locked {} skill(s) from {} root(s) in {}",
        lock.skills.len(),
        lock.roots.len(),
        sources.lockfile.display()
    )?;
    Ok(0)
}

/// Runs `skills verify`: a fresh download of every URL root (an empty cache
/// folder of its own, so nothing cached is trusted), then the comparison.
pub(crate) fn verify(
    args: LockArgs,
    sources: &Sources,
    mut out: impl Write,
) -> Result<u8, Failure> {
    let locked = read(&sources.lockfile)?;
    let mut specs: Vec<PathBuf> = sources.roots.iter().cloned().chain(args.paths).collect();
    if specs.is_empty() && std::env::var_os("SKILLS_ROOT").is_none_or(|v| v.is_empty()) {
        specs = locked.roots.iter().map(PathBuf::from).collect();
    }
    let fresh = tempfile_dir()?;
    let fresh_sources = Sources {
        roots: Vec::new(),
        standard: false,
        refresh: false,
        config: None,
        locked: false,
        lockfile: sources.lockfile.clone(),
        cache_dir: Some(fresh.path().to_path_buf()),
    };
    let roots = fresh_sources.resolve_roots(fresh_sources.specs(specs)?)?;
    let now = current(&roots)?;
    let lines = diff(&locked, &now);
    if lines.is_empty() {
        writeln!(
            out,
            "ok: {} skill(s) match {}",
            now.skills.len(),
            sources.lockfile.display()
        )?;
        return Ok(0);
    }
    for line in &lines {
        writeln!(out, "{}", text::line(line))?;
    }
    eprintln!("{}", drift(&sources.lockfile, lines.len()));
    Ok(1)
}

/// `--locked`: fails with the differences when `roots` differ from the lockfile.
pub(crate) fn enforce(lockfile: &Path, roots: &[Root]) -> Result<(), Failure> {
    let locked = read(lockfile)?;
    let now = current(roots)?;
    let lines = diff(&locked, &now);
    if lines.is_empty() {
        return Ok(());
    }
    // The differences go first, one per line (the failure's message is
    // printed on one line, its line breaks escaped).
    for line in &lines {
        eprintln!("{}", crate::text::line(line));
    }
    Err(Failure {
        code: 1,
        message: drift(lockfile, lines.len()).to_string(),
        broken_pipe: false,
    })
}

/// The `lock-drift` diagnostic.
fn drift(lockfile: &Path, n: usize) -> Diagnostic {
    Diagnostic::error(
        Code::LockDrift,
        format!(
            "{n} difference(s) from the lockfile; run `skills lock` to accept them (or fix the source)"
        ),
    )
    .in_file(lockfile.display().to_string())
}

/// Reads the lockfile; a missing one is exit 2 with how to create it.
fn read(path: &Path) -> Result<Lockfile, Failure> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Failure::usage(format!(
                "no lockfile at {}; create it with `skills lock ROOTS...` (or pass --lockfile PATH)",
                path.display()
            )));
        }
        Err(e) => {
            return Err(Failure::usage(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let lock: Lockfile = serde_json::from_str(&text)
        .map_err(|e| Failure::usage(format!("{} is not a lockfile: {e}", path.display())))?;
    if lock.version != VERSION {
        return Err(Failure::usage(format!(
            "{} has version {}; this `skills` reads version {VERSION}",
            path.display(),
            lock.version
        )));
    }
    Ok(lock)
}

/// What the roots hold now. A name found in two roots is locked from the
/// first, as the provider loads it.
fn current(roots: &[Root]) -> Result<Lockfile, Failure> {
    let mut skills = BTreeMap::new();
    let finder = SkillFs::new(FsOptions::default());
    for root in roots {
        let named: Vec<_> = root.artifacts.iter().filter(|a| a.name.is_some()).collect();
        if !named.is_empty() {
            // A well-known index: one artifact per skill.
            for a in named {
                let name = a.name.clone().unwrap_or_default();
                skills.entry(name).or_insert_with(|| Locked {
                    digest: a.digest.clone().unwrap_or_else(|| UNKNOWN.into()),
                    source: root.spec.clone(),
                    url: Some(a.url.clone()),
                    version: a.version.clone(),
                });
            }
            continue;
        }
        let found = finder.discover(std::slice::from_ref(&root.path));
        for skill in found.skills.iter().filter(|s| s.is_valid()) {
            let Some(name) = skill.name() else { continue };
            if skills.contains_key(name) {
                continue;
            }
            let locked = match root.artifacts.first() {
                // An archive or SKILL.md URL: its skills share the download.
                Some(a) => Locked {
                    digest: a.digest.clone().unwrap_or_else(|| UNKNOWN.into()),
                    source: root.spec.clone(),
                    url: Some(a.url.clone()),
                    version: None,
                },
                None => Locked {
                    digest: local_digest(skill)?,
                    source: root.spec.clone(),
                    url: None,
                    version: None,
                },
            };
            skills.insert(name.to_owned(), locked);
        }
    }
    Ok(Lockfile {
        roots: roots.iter().map(|r| r.spec.clone()).collect(),
        skills,
        version: VERSION,
    })
}

/// Shown for a URL root cached before digests were recorded.
const UNKNOWN: &str = "unknown (cached before digests were recorded; use --refresh)";

/// The digest of a local skill: its folder's tree digest, or the file's own
/// digest for a skill that is a single file.
fn local_digest(skill: &skills_fs::DiscoveredSkill) -> Result<String, Failure> {
    let single = skill.skill_md.as_ref().filter(|md| {
        !md.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.eq_ignore_ascii_case("skill.md"))
    });
    let digest = match single {
        Some(file) => {
            let dir = file.parent().unwrap_or(Path::new("."));
            let name = file.file_name().map(Path::new).unwrap_or(Path::new(""));
            // A one-file tree: the same algorithm over just that file.
            return one_file_digest(dir, name);
        }
        None => tree_digest(&skill.dir),
    };
    digest.map_err(|e| Failure::usage(e.to_string()))
}

/// The tree digest of a folder holding only `name` from `dir`.
fn one_file_digest(dir: &Path, name: &Path) -> Result<String, Failure> {
    let tmp = tempfile_dir()?;
    std::fs::copy(dir.join(name), tmp.path().join(name))
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", dir.join(name).display())))?;
    tree_digest(tmp.path()).map_err(|e| Failure::usage(e.to_string()))
}

fn tempfile_dir() -> Result<TempFolder, Failure> {
    TempFolder::new().map_err(|e| Failure::usage(format!("cannot create a temporary folder: {e}")))
}

/// A temporary folder removed on drop (the CLI has no `tempfile` dependency).
struct TempFolder(PathBuf);

impl TempFolder {
    fn new() -> std::io::Result<Self> {
        let base = std::env::temp_dir();
        for n in 0..100u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let path = base.join(format!("skills-lock-{}-{nanos}-{n}", std::process::id()));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(Self(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("no free temporary folder name"))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `sha256:` and the first 12 hex digits, then `…`.
fn short(digest: &str) -> String {
    match digest.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("sha256:{}…", &hex[..12]),
        _ => digest.to_owned(),
    }
}

/// The differences, one line each, sorted by skill name: `changed  NAME  …`,
/// `added  NAME  …`, `removed  NAME  …`.
fn diff(locked: &Lockfile, now: &Lockfile) -> Vec<String> {
    let mut lines = Vec::new();
    let names: std::collections::BTreeSet<&String> =
        locked.skills.keys().chain(now.skills.keys()).collect();
    for name in names {
        let shown = |l: &Locked| l.url.clone().unwrap_or_else(|| l.source.clone());
        match (locked.skills.get(name), now.skills.get(name)) {
            (Some(old), Some(new)) => {
                if old.digest != new.digest {
                    lines.push(format!(
                        "changed  {name}  {} -> {}  ({})",
                        short(&old.digest),
                        short(&new.digest),
                        shown(new)
                    ));
                }
                if old.version != new.version {
                    lines.push(format!(
                        "changed  {name}  version {} -> {}",
                        old.version.as_deref().unwrap_or("(none)"),
                        new.version.as_deref().unwrap_or("(none)")
                    ));
                }
                if old.source != new.source || old.url != new.url {
                    lines.push(format!(
                        "changed  {name}  source {} -> {}",
                        shown(old),
                        shown(new)
                    ));
                }
            }
            (None, Some(new)) => lines.push(format!(
                "added    {name}  {}  ({})",
                short(&new.digest),
                shown(new)
            )),
            (Some(old), None) => lines.push(format!("removed  {name}  ({})", shown(old))),
            (None, None) => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(digest: &str, version: Option<&str>) -> Locked {
        Locked {
            digest: digest.into(),
            source: "https://h".into(),
            url: Some("https://h/a.md".into()),
            version: version.map(str::to_owned),
        }
    }

    #[test]
    fn diff_lines_name_what_changed() {
        let a = format!("sha256:{}", "a".repeat(64));
        let b = format!("sha256:{}", "b".repeat(64));
        let old = Lockfile {
            roots: vec![],
            skills: [
                ("pdf".into(), entry(&a, Some("1.0.0"))),
                ("gone".into(), entry(&a, None)),
            ]
            .into(),
            version: 1,
        };
        let new = Lockfile {
            roots: vec![],
            skills: [
                ("pdf".into(), entry(&b, Some("1.1.0"))),
                ("new".into(), entry(&b, None)),
            ]
            .into(),
            version: 1,
        };
        assert_eq!(
            diff(&old, &new),
            [
                "removed  gone  (https://h/a.md)",
                "added    new  sha256:bbbbbbbbbbbb…  (https://h/a.md)",
                "changed  pdf  sha256:aaaaaaaaaaaa… -> sha256:bbbbbbbbbbbb…  (https://h/a.md)",
                "changed  pdf  version 1.0.0 -> 1.1.0",
            ]
        );
        assert!(diff(&old, &old).is_empty());
    }

    #[test]
    fn keys_are_written_sorted() {
        let lock = Lockfile {
            roots: vec!["r".into()],
            skills: [
                ("z".into(), entry("d", Some("1"))),
                ("a".into(), entry("d", None)),
            ]
            .into(),
            version: 1,
        };
        let text = serde_json::to_string(&lock).unwrap_or_default();
        assert_eq!(
            text,
            r#"{"roots":["r"],"skills":{"a":{"digest":"d","source":"https://h","url":"https://h/a.md"},"z":{"digest":"d","source":"https://h","url":"https://h/a.md","version":"1"}},"version":1}"#
        );
    }
}
