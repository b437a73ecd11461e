//! Workspace layout and skill staging (F-EXE-1). Blocking; called on the
//! blocking pool.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use skills_core::{
    INPUTS_SUBDIR, OUTPUT_SUBDIR, RUNS_SUBDIR, SKILLS_SUBDIR, SkillFile, WORK_SUBDIR,
    WorkspaceError, WorkspaceErrorKind, normalize_relative,
};

use crate::fsutil::{io_error, remove_within, set_mode, symlink};

/// Most files a staged skill may hold.
pub(crate) const MAX_SKILL_FILES: usize = 20_000;
/// Most bytes a staged skill may hold: 1 GiB.
pub(crate) const MAX_SKILL_BYTES: u64 = 1 << 30;
/// Names at the top of a staged skill that the workspace owns.
const RESERVED_TOP: [&str; 4] = ["out", "work", "inputs", ".venv"];

/// Creates the workspace folders (idempotent); returns `true` when the root
/// was created by this call.
pub(crate) fn create_layout(
    root: &Path,
    session_id: &str,
    runtime: &str,
) -> Result<bool, WorkspaceError> {
    let created = !root.exists();
    for sub in [
        SKILLS_SUBDIR,
        WORK_SUBDIR,
        INPUTS_SUBDIR,
        OUTPUT_SUBDIR,
        RUNS_SUBDIR,
    ] {
        fs::create_dir_all(root.join(sub)).map_err(|e| io_error(format!("creating {sub}/"), e))?;
    }
    let meta = root.join("metadata.json");
    if !meta.exists() {
        let value = serde_json::json!({
            "session_id": session_id,
            "runtime": runtime,
            "created_at_unix": now_unix(),
            "skills": {},
        });
        write_json(&meta, &value)?;
    }
    Ok(created)
}

pub(crate) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn write_json(path: &Path, value: &serde_json::Value) -> Result<(), WorkspaceError> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(value)
        .map_err(|e| WorkspaceError::new(WorkspaceErrorKind::Other, e.to_string()))?;
    let mut f = fs::File::create(&tmp).map_err(|e| io_error("writing metadata.json", e))?;
    f.write_all(&text)
        .map_err(|e| io_error("writing metadata.json", e))?;
    fs::rename(&tmp, path).map_err(|e| io_error("writing metadata.json", e))
}

/// Records a staged skill in `metadata.json`.
pub(crate) fn record_skill(root: &Path, name: &str, digest: &str) -> Result<(), WorkspaceError> {
    let path = root.join("metadata.json");
    let mut value: serde_json::Value = fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    if let Some(obj) = value.as_object_mut() {
        let skills = obj.entry("skills").or_insert_with(|| serde_json::json!({}));
        if let Some(skills) = skills.as_object_mut() {
            skills.insert(
                name.to_owned(),
                serde_json::json!({ "digest": digest, "staged_at_unix": now_unix() }),
            );
        }
    }
    write_json(&path, &value)
}

/// Checks a skill name used as a folder name.
pub(crate) fn check_skill_name(name: &str) -> Result<(), WorkspaceError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
        && !name.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            format!("invalid skill name {name:?}"),
        ))
    }
}

/// A file or folder of a skill to stage.
#[derive(Debug)]
enum Entry {
    Dir(String),
    File {
        rel: String,
        src: Source,
        executable: bool,
    },
}

#[derive(Debug)]
enum Source {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

/// A listed skill: its entries and cheap fingerprint.
#[derive(Debug)]
pub(crate) struct Listed {
    entries: Vec<Entry>,
    /// Changes whenever a file's path, size, mode, times or inode change.
    pub(crate) fingerprint: String,
    /// The digest the caller supplied (in-memory skills).
    pub(crate) given_digest: Option<String>,
    /// Things skipped (links leading out, reserved names).
    pub(crate) warnings: Vec<String>,
}

/// Lists a skill folder without reading file contents.
pub(crate) fn list_folder(src: &Path) -> Result<Listed, WorkspaceError> {
    let root = src
        .canonicalize()
        .map_err(|e| io_error(format!("skill folder {}", src.display()), e))?;
    if !root.is_dir() {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::NotFound,
            format!("skill folder {} is not a folder", src.display()),
        ));
    }
    let mut listed = Listed {
        entries: Vec::new(),
        fingerprint: String::new(),
        given_digest: None,
        warnings: Vec::new(),
    };
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    walk(&root, &root, "", &mut listed, &mut hasher, &mut total)?;
    listed.fingerprint = hex(&hasher.finalize());
    Ok(listed)
}

fn walk(
    root: &Path,
    dir: &Path,
    prefix: &str,
    listed: &mut Listed,
    hasher: &mut Sha256,
    total: &mut u64,
) -> Result<(), WorkspaceError> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .map_err(|e| io_error(format!("listing {}", dir.display()), e))?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        let Some(name) = name.to_str().map(str::to_owned) else {
            listed.warnings.push(format!(
                "skipped a file name that is not UTF-8 in {prefix:?}"
            ));
            continue;
        };
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if prefix.is_empty() && RESERVED_TOP.contains(&name.as_str()) {
            listed
                .warnings
                .push(format!("skipped `{rel}`: the workspace provides it"));
            continue;
        }
        let path = dir.join(&name);
        let mut meta =
            fs::symlink_metadata(&path).map_err(|e| io_error(format!("stat {rel}"), e))?;
        if meta.file_type().is_symlink() {
            let inside = path
                .canonicalize()
                .ok()
                .filter(|t| crate::fsutil::is_within(root, t));
            match inside.and_then(|t| fs::metadata(&t).ok().map(|m| (t, m))) {
                Some((_, m)) if m.is_file() => meta = m,
                _ => {
                    listed.warnings.push(format!(
                        "skipped `{rel}`: a link that leads out of the skill or to a folder"
                    ));
                    continue;
                }
            }
        }
        stamp(hasher, &rel, &meta);
        if meta.is_dir() {
            listed.entries.push(Entry::Dir(rel.clone()));
            walk(root, &path, &rel, listed, hasher, total)?;
        } else if meta.is_file() {
            *total += meta.len();
            if listed.entries.len() >= MAX_SKILL_FILES || *total > MAX_SKILL_BYTES {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::TooLarge,
                    format!(
                        "skill folder holds more than {MAX_SKILL_FILES} files or {MAX_SKILL_BYTES} bytes"
                    ),
                ));
            }
            listed.entries.push(Entry::File {
                rel,
                src: Source::Path(path),
                executable: is_exec(&meta),
            });
        } else {
            listed
                .warnings
                .push(format!("skipped `{rel}`: not a regular file"));
        }
    }
    Ok(())
}

fn stamp(hasher: &mut Sha256, rel: &str, meta: &fs::Metadata) {
    hasher.update(rel.as_bytes());
    hasher.update([0]);
    hasher.update(meta.len().to_le_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        for v in [
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec(),
            meta.ino() as i64,
            meta.dev() as i64,
            i64::from(meta.mode()),
        ] {
            hasher.update(v.to_le_bytes());
        }
    }
    #[cfg(not(unix))]
    if let Ok(m) = meta.modified()
        && let Ok(d) = m.duration_since(UNIX_EPOCH)
    {
        hasher.update(d.as_nanos().to_le_bytes());
    }
}

fn is_exec(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Lists an in-memory skill.
pub(crate) fn list_files(
    files: &[SkillFile],
    digest: Option<&str>,
) -> Result<Listed, WorkspaceError> {
    let mut entries = Vec::new();
    let mut dirs = std::collections::BTreeSet::new();
    let mut warnings = Vec::new();
    for file in files {
        let rel = normalize_relative(&file.path)?;
        if rel.is_empty() {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!("empty skill file path {:?}", file.path),
            ));
        }
        let top = rel.split('/').next().unwrap_or("");
        if RESERVED_TOP.contains(&top) {
            warnings.push(format!("skipped `{rel}`: the workspace provides it"));
            continue;
        }
        let mut parent = rel.as_str();
        while let Some((p, _)) = parent.rsplit_once('/') {
            dirs.insert(p.to_owned());
            parent = p;
        }
        entries.push(Entry::File {
            rel,
            src: Source::Bytes(file.bytes.clone()),
            executable: file.executable,
        });
    }
    let mut all: Vec<Entry> = dirs.into_iter().map(Entry::Dir).collect();
    all.extend(entries);
    let mut listed = Listed {
        entries: all,
        fingerprint: String::new(),
        given_digest: digest.map(str::to_owned),
        warnings,
    };
    listed.fingerprint = match digest {
        Some(d) => format!("given:{d}"),
        None => content_digest(&listed)?,
    };
    Ok(listed)
}

/// The content digest: paths, executable bits and bytes, in order.
pub(crate) fn content_digest(listed: &Listed) -> Result<String, WorkspaceError> {
    if let Some(d) = &listed.given_digest {
        return Ok(d.clone());
    }
    let mut hasher = Sha256::new();
    for entry in &listed.entries {
        match entry {
            Entry::Dir(rel) => {
                hasher.update(b"d\0");
                hasher.update(rel.as_bytes());
                hasher.update([0]);
            }
            Entry::File {
                rel,
                src,
                executable,
            } => {
                hasher.update(if *executable { b"x\0" } else { b"f\0" });
                hasher.update(rel.as_bytes());
                hasher.update([0]);
                match src {
                    Source::Bytes(b) => {
                        hasher.update((b.len() as u64).to_le_bytes());
                        hasher.update(b);
                    }
                    Source::Path(p) => {
                        let b = fs::read(p).map_err(|e| io_error(format!("reading {rel}"), e))?;
                        hasher.update((b.len() as u64).to_le_bytes());
                        hasher.update(&b);
                    }
                }
            }
        }
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Copies a listed skill to `skills/<name>` (read-only, with the `out`,
/// `work`, `inputs` links and a writable `.venv/` kept across re-stagings),
/// replacing an older copy.
pub(crate) fn copy_skill(
    ws_root: &Path,
    name: &str,
    listed: &Listed,
) -> Result<(), WorkspaceError> {
    let skills = ws_root.join(SKILLS_SUBDIR);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tmp = skills.join(format!(".staging-{name}-{nanos}"));
    let fail = |e| io_error(format!("staging skill {name}"), e);
    fs::create_dir(&tmp).map_err(fail)?;
    let result = (|| -> Result<(), WorkspaceError> {
        let mut dirs = vec![tmp.clone()];
        for entry in &listed.entries {
            match entry {
                Entry::Dir(rel) => {
                    let p = tmp.join(rel);
                    fs::create_dir_all(&p).map_err(fail)?;
                    dirs.push(p);
                }
                Entry::File {
                    rel,
                    src,
                    executable,
                } => {
                    let dst = tmp.join(rel);
                    match src {
                        Source::Path(p) => {
                            fs::copy(p, &dst).map_err(fail)?;
                        }
                        Source::Bytes(b) => fs::write(&dst, b).map_err(fail)?,
                    }
                    set_mode(&dst, if *executable { 0o555 } else { 0o444 }).map_err(fail)?;
                }
            }
        }
        symlink(Path::new("../../out"), &tmp.join("out")).map_err(fail)?;
        symlink(Path::new("../../work"), &tmp.join("work")).map_err(fail)?;
        symlink(Path::new("../../work/inputs"), &tmp.join("inputs")).map_err(fail)?;
        let old = skills.join(name);
        let old_venv = old.join(".venv");
        if fs::symlink_metadata(&old_venv).is_ok_and(|m| m.is_dir()) {
            set_mode(&old, 0o755).map_err(fail)?;
            fs::rename(&old_venv, tmp.join(".venv")).map_err(fail)?;
        } else {
            fs::create_dir(tmp.join(".venv")).map_err(fail)?;
        }
        set_mode(&tmp.join(".venv"), 0o755).map_err(fail)?;
        for dir in dirs.iter().rev() {
            set_mode(dir, 0o555).map_err(fail)?;
        }
        if fs::symlink_metadata(&old).is_ok() {
            let trash = skills.join(format!(".trash-{name}-{nanos}"));
            fs::rename(&old, &trash).map_err(fail)?;
            fs::rename(&tmp, &old).map_err(fail)?;
            remove_within(ws_root, &trash).map_err(fail)?;
        } else {
            fs::rename(&tmp, &old).map_err(fail)?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = remove_within(ws_root, &tmp);
    }
    result
}

/// A fresh `runs/run_<timestamp>` folder; returns its relative path.
pub(crate) fn new_run_dir(ws_root: &Path) -> Result<String, WorkspaceError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let base = format!("run_{}_{:06}", now.as_secs(), now.subsec_micros());
    for n in 0..1000u32 {
        let name = if n == 0 {
            base.clone()
        } else {
            format!("{base}_{n}")
        };
        let rel = format!("{RUNS_SUBDIR}/{name}");
        match fs::create_dir(ws_root.join(&rel)) {
            Ok(()) => return Ok(rel),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_error("creating the run folder", e)),
        }
    }
    Err(WorkspaceError::new(
        WorkspaceErrorKind::Io,
        "could not name a run folder",
    ))
}
