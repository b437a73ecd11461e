//! `skills index DIR --out OUT`: publishes the skills under `DIR` as a
//! well-known skills index (discovery schema 0.2.0) that any static file
//! server can serve: `OUT/.well-known/agent-skills/index.json`, plus one
//! artifact per skill beside it.
//!
//! A skill whose folder holds only its `SKILL.md` is published as that file
//! (`type: skill-md`, `<name>/SKILL.md`); any other as a `.tar.gz` archive
//! (`type: archive`, `<name>.tar.gz`) with `SKILL.md` at its root and no
//! wrapper folder. Each entry's `digest` is the SHA-256 of the bytes written,
//! its `url` relative to the index. The output is byte-identical for the same
//! skills: entries sorted by name, archive members sorted by path, every
//! member with mtime 0, uid and gid 0, mode 644 (755 when executable), and a
//! gzip header without a time or name.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest as _, Sha256};
use skills_core::SkillMetadata;
use skills_fs::{FsOptions, SkillFs};

use crate::failure::{Failure, json_failure};
use crate::text;

/// The discovery schema the index follows.
pub(crate) const SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";

/// Where the index and artifacts go below `--out`.
pub(crate) const WELL_KNOWN: &str = ".well-known/agent-skills";

/// The arguments of `skills index`.
#[derive(Debug, clap::Args)]
pub(crate) struct IndexArgs {
    /// The folder to publish: a folder of skills (searched recursively).
    pub(crate) dir: PathBuf,
    /// Where to write `.well-known/agent-skills/` (created if missing; must
    /// not lie inside DIR).
    #[arg(long, value_name = "OUT")]
    pub(crate) out: PathBuf,
}

/// One entry of `index.json`, in the schema's field order.
#[derive(Serialize)]
struct Entry {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    description: String,
    url: String,
    digest: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<String>,
}

#[derive(Serialize)]
struct Index {
    #[serde(rename = "$schema")]
    schema: &'static str,
    skills: Vec<Entry>,
}

/// Runs `skills index`: writes the index and artifacts, prints one line per
/// skill (`name  type  url`).
pub(crate) fn run(args: IndexArgs, mut out: impl Write) -> Result<u8, Failure> {
    let dir = fs::canonicalize(&args.dir)
        .map_err(|e| Failure::usage(format!("cannot read `{}`: {e}", args.dir.display())))?;
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "`{}` is not a folder",
            args.dir.display()
        )));
    }
    fs::create_dir_all(&args.out).map_err(|e| write_failure(&args.out, &e))?;
    let out_dir = fs::canonicalize(&args.out).map_err(|e| write_failure(&args.out, &e))?;
    if out_dir.starts_with(&dir) {
        return Err(Failure::usage(format!(
            "--out `{}` lies inside `{}`: the published copies would be found as skills next time",
            text::line(&args.out.display().to_string()),
            text::line(&args.dir.display().to_string())
        )));
    }
    let target = out_dir.join(WELL_KNOWN);
    fs::create_dir_all(&target).map_err(|e| write_failure(&target, &e))?;
    let skill_fs = SkillFs::new(FsOptions::default());
    let mut discovery = skill_fs.discover(std::slice::from_ref(&dir));
    let chosen = discovery.index_by_name();
    let skipped = discovery
        .skills
        .iter()
        .filter(|skill| skill.document.is_none())
        .count();
    let mut entries = Vec::new();
    // `chosen` is sorted by name.
    for index in chosen.values() {
        let skill = &discovery.skills[*index];
        let Some(document) = &skill.document else {
            continue;
        };
        entries.push(publish(&skill.dir, &document.metadata, &target)?);
    }
    let index = Index {
        schema: SCHEMA,
        skills: entries,
    };
    let mut json = serde_json::to_vec_pretty(&index).map_err(json_failure)?;
    json.push(b'\n');
    let index_path = target.join("index.json");
    fs::write(&index_path, &json).map_err(|e| write_failure(&index_path, &e))?;
    for entry in &index.skills {
        writeln!(out, "{}  {}  {}", entry.name, entry.kind, entry.url)?;
    }
    writeln!(
        out,
        "wrote {} ({} skill{})",
        text::line(&index_path.display().to_string()),
        index.skills.len(),
        if index.skills.len() == 1 { "" } else { "s" }
    )?;
    if skipped > 0 {
        eprintln!(
            "warning: {skipped} skill{} not published: {} not load; run `skills validate`",
            if skipped == 1 { "" } else { "s" },
            if skipped == 1 { "it does" } else { "they do" }
        );
    }
    Ok(0)
}

fn write_failure(path: &Path, err: &io::Error) -> Failure {
    Failure::usage(format!("cannot write `{}`: {err}", path.display()))
}

/// Writes the artifact of the skill in `dir` below `target` and returns its
/// index entry.
fn publish(dir: &Path, metadata: &SkillMetadata, target: &Path) -> Result<Entry, Failure> {
    let name = metadata.name.as_str();
    let files = skill_files(dir).map_err(|e| {
        Failure::usage(format!(
            "cannot read the skill folder `{}`: {e}",
            dir.display()
        ))
    })?;
    let (kind, url, bytes) = match files.as_slice() {
        [only] if only.rel == "SKILL.md" => {
            let bytes = fs::read(&only.path).map_err(|e| read_failure(&only.path, &e))?;
            ("skill-md", format!("{name}/SKILL.md"), bytes)
        }
        _ => ("archive", format!("{name}.tar.gz"), archive(&files)?),
    };
    let path = target.join(&url);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| write_failure(parent, &e))?;
    }
    fs::write(&path, &bytes).map_err(|e| write_failure(&path, &e))?;
    Ok(Entry {
        name: name.to_owned(),
        kind,
        description: metadata.description.clone(),
        url,
        digest: sha256_digest(&bytes),
        version: metadata.metadata.get("version").cloned(),
    })
}

fn read_failure(path: &Path, err: &io::Error) -> Failure {
    Failure::usage(format!("cannot read `{}`: {err}", path.display()))
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// One file of a skill: its path on disk, its `/`-separated path in the
/// skill, and whether it is executable.
struct SkillFile {
    path: PathBuf,
    rel: String,
    executable: bool,
}

/// The regular files of the skill folder `dir`, sorted by their path in the
/// skill. Left out: hidden files and folders (`.git`, `.DS_Store`), symbolic
/// links, and nested skill folders (a subfolder with its own `SKILL.md`,
/// published as a skill of its own).
fn skill_files(dir: &Path) -> io::Result<Vec<SkillFile>> {
    let mut out = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, prefix)) = pending.pop() {
        for entry in fs::read_dir(&folder)? {
            let entry = entry?;
            let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a file name in `{}` is not UTF-8", folder.display()),
                ));
            };
            if file_name.starts_with('.') {
                continue;
            }
            let rel = format!("{prefix}{file_name}");
            let kind = entry.file_type()?;
            if kind.is_dir() {
                let path = entry.path();
                if !path.join("SKILL.md").exists() {
                    pending.push((path, format!("{rel}/")));
                }
            } else if kind.is_file() {
                let meta = entry.metadata()?;
                out.push(SkillFile {
                    path: entry.path(),
                    rel,
                    executable: is_executable(&meta),
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_: &fs::Metadata) -> bool {
    false
}

/// A deterministic `.tar.gz` of `files` (already sorted).
fn archive(files: &[SkillFile]) -> Result<Vec<u8>, Failure> {
    // No file name, time 0, operating system 255 ("unknown"): the same
    // header on every machine.
    let gz = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    for file in files {
        let data = fs::read(&file.path).map_err(|e| read_failure(&file.path, &e))?;
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(data.len() as u64);
        header.set_mode(if file.executable { 0o755 } else { 0o644 });
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        tar.append_data(&mut header, &file.rel, data.as_slice())
            .map_err(|e| Failure::usage(format!("cannot build the archive: {e}")))?;
    }
    let gz = tar
        .into_inner()
        .map_err(|e| Failure::usage(format!("cannot build the archive: {e}")))?;
    gz.finish()
        .map_err(|e| Failure::usage(format!("cannot build the archive: {e}")))
}
