//! Workspace layout and skill staging (F-EXE-1). Blocking; called on the
//! blocking pool.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use skills_workspace::{
    INPUTS_SUBDIR, OUTPUT_SUBDIR, RUNS_SUBDIR, SKILLS_SUBDIR, SkillFile, WORK_SUBDIR,
    WorkspaceError, WorkspaceErrorKind, normalize_relative,
};

use crate::fsutil::{
    DirHandle, Owner, copy_capped, io_error, open_regular, random_hex, walk_error,
};

/// Most files a staged skill may hold.
pub(crate) const MAX_SKILL_FILES: usize = 20_000;
/// Most bytes a staged skill may hold: 1 GiB.
pub(crate) const MAX_SKILL_BYTES: u64 = 1 << 30;
/// Names at the top of a staged skill that the workspace owns.
const RESERVED_TOP: [&str; 4] = ["out", "work", "inputs", ".venv"];

/// The folders of a session that its command may write, handed to the
/// sandbox's user when there is one (H6).
const WRITABLE: [&str; 4] = [WORK_SUBDIR, INPUTS_SUBDIR, OUTPUT_SUBDIR, RUNS_SUBDIR];

/// Creates the session folder `session_id` in the runtime's root `root`
/// (mode `0700`, handed to `owner`) and its layout, through handles
/// (idempotent: links planted in an existing one make it fail, never
/// redirect it; H2). Returns a handle on the session folder and whether it
/// was created by this call.
pub(crate) fn create_layout(
    root: &DirHandle,
    session_id: &str,
    owner: Option<Owner>,
) -> Result<(DirHandle, bool), WorkspaceError> {
    let root = root
        .try_clone()
        .map_err(|e| io_error("workspace root", e))?
        .with_owner(owner);
    let (session, created) = match root.create_dir(session_id, 0o700) {
        Ok(d) => (d, true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => (
            root.subdir(session_id)
                .map_err(|e| walk_error(&format!("session folder {session_id}"), e))?,
            false,
        ),
        Err(e) => return Err(io_error(format!("creating session folder {session_id}"), e)),
    };
    // Staged skills stay the runtime user's (read-only for the command).
    session
        .try_clone()
        .and_then(|d| d.with_owner(None).ensure_dir(SKILLS_SUBDIR))
        .map_err(|e| walk_error(&format!("{SKILLS_SUBDIR}/"), e))?;
    for sub in WRITABLE {
        session
            .walk_create(sub)
            .map_err(|e| walk_error(&format!("{sub}/"), e))?;
    }
    Ok((session, created))
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
    /// The bytes of its files (as listed).
    total_bytes: u64,
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
        total_bytes: 0,
    };
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    walk(&root, &root, "", &mut listed, &mut hasher, &mut total)?;
    listed.total_bytes = total;
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
        let mut path = dir.join(&name);
        let mut meta =
            fs::symlink_metadata(&path).map_err(|e| io_error(format!("stat {rel}"), e))?;
        if meta.file_type().is_symlink() {
            let inside = path
                .canonicalize()
                .ok()
                .filter(|t| crate::fsutil::is_within(root, t));
            match inside.and_then(|t| fs::metadata(&t).ok().map(|m| (t, m))) {
                // Copied from the file it names (opened without following
                // links when copied).
                Some((t, m)) if m.is_file() => {
                    meta = m;
                    path = t;
                }
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
    let total_bytes = files.iter().map(|f| f.bytes.len() as u64).sum();
    let mut listed = Listed {
        entries: all,
        fingerprint: String::new(),
        given_digest: digest.map(str::to_owned),
        warnings,
        total_bytes,
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
                        let b = read_source(p, rel)?;
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

/// Reads a skill's source file: a regular file (never a FIFO or a device
/// swapped in after the listing, H3), at most [`MAX_SKILL_BYTES`].
fn read_source(path: &Path, rel: &str) -> Result<Vec<u8>, WorkspaceError> {
    let (file, _) = open_regular(path).map_err(|e| io_error(format!("reading {rel}"), e))?;
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(format!("reading {rel}"), e))?;
    Ok(bytes)
}

/// The bytes and entries a listed skill puts in the workspace (for the
/// disk cap, H7): its files and folders, the three links and `.venv/`.
pub(crate) fn listed_size(listed: &Listed) -> (u64, u64) {
    (listed.total_bytes, listed.entries.len() as u64 + 5)
}

/// Copies a listed skill to `skills/<name>` through the handle `skills` on
/// the session's `skills/` folder (read-only files and folders owned by the
/// runtime's user, the `out`, `work`, `inputs` links, and a writable
/// `.venv/` handed to `venv_owner` and kept across re-stagings), replacing
/// an older copy atomically. Nothing is done by path (H2, H6).
pub(crate) fn copy_skill(
    skills: &DirHandle,
    name: &str,
    listed: &Listed,
    venv_owner: Option<Owner>,
) -> Result<(), WorkspaceError> {
    let skills = skills
        .try_clone()
        .map_err(|e| io_error("skills folder", e))?
        .with_owner(None);
    let fail = |e| io_error(format!("staging skill {name}"), e);
    let tmp_name = format!(".staging-{name}-{}", random_hex(6));
    let tmp = skills.create_dir(&tmp_name, 0o755).map_err(fail)?;
    let result = (|| -> Result<(), WorkspaceError> {
        let mut dirs = Vec::new();
        for entry in &listed.entries {
            match entry {
                Entry::Dir(rel) => {
                    tmp.walk_create(rel).map_err(fail)?;
                    dirs.push(rel.as_str());
                }
                Entry::File {
                    rel,
                    src,
                    executable,
                } => {
                    let (parent, file_name) = rel.rsplit_once('/').unwrap_or(("", rel));
                    let dir = tmp.walk(parent).map_err(fail)?;
                    let mut file = dir.create_file(file_name, 0o644).map_err(fail)?;
                    match src {
                        Source::Path(p) => {
                            let (mut from, _) = open_regular(p).map_err(fail)?;
                            copy_capped(&mut from, &mut file, MAX_SKILL_BYTES).map_err(fail)?;
                        }
                        Source::Bytes(b) => file.write_all(b).map_err(fail)?,
                    }
                    let mode = if *executable { 0o555 } else { 0o444 };
                    file.set_permissions(fs::Permissions::from_mode(mode))
                        .map_err(fail)?;
                }
            }
        }
        for (link, target) in [
            ("out", "../../out"),
            ("work", "../../work"),
            ("inputs", "../../work/inputs"),
        ] {
            tmp.symlink(Path::new(target), link).map_err(fail)?;
        }
        let old = match skills.stat_at(name).map_err(fail)? {
            Some(m) if m.is_dir() => Some(skills.subdir(name).map_err(fail)?),
            _ => None,
        };
        let kept_venv = match &old {
            Some(old)
                if old
                    .stat_at(".venv")
                    .map_err(fail)?
                    .is_some_and(|m| m.is_dir()) =>
            {
                // Moving a folder out needs write access to where it is.
                old.set_mode(0o755).map_err(fail)?;
                old.rename_to(".venv", &tmp, ".venv").map_err(fail)?;
                true
            }
            _ => false,
        };
        if !kept_venv {
            tmp.try_clone()
                .map_err(fail)?
                .with_owner(venv_owner)
                .create_dir(".venv", 0o755)
                .map_err(fail)?;
        }
        for rel in dirs.iter().rev() {
            tmp.walk(rel)
                .and_then(|d| d.set_mode(0o555))
                .map_err(fail)?;
        }
        tmp.set_mode(0o555).map_err(fail)?;
        if skills.stat_at(name).map_err(fail)?.is_some() {
            // Swap the new copy in at once; the old one is then removed
            // under the temporary name.
            match skills.exchange(&tmp_name, name) {
                Ok(()) => {}
                Err(_) => {
                    let trash = format!(".trash-{name}-{}", random_hex(6));
                    skills.rename_to(name, &skills, &trash).map_err(fail)?;
                    skills.rename_to(&tmp_name, &skills, name).map_err(fail)?;
                    skills.remove_tree(&trash).map_err(fail)?;
                    return Ok(());
                }
            }
            skills.remove_tree(&tmp_name).map_err(fail)?;
        } else {
            skills.rename_to(&tmp_name, &skills, name).map_err(fail)?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = skills.remove_tree(&tmp_name);
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// The sandbox's user when running as root (another user: what the
    /// hand-over is for); this process's own otherwise (then the same code
    /// runs, and the owners below are still checked).
    fn sandbox_user() -> Owner {
        if rustix::process::geteuid().is_root() {
            Owner {
                uid: 65534,
                gid: 65534,
            }
        } else {
            Owner {
                uid: rustix::process::geteuid().as_raw(),
                gid: rustix::process::getegid().as_raw(),
            }
        }
    }

    // threat model: H2 (a skill's links are copied as the files they name
    // inside the skill; links out are skipped, never read)
    #[test]
    fn links_inside_a_skill_are_copied_as_files() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("scripts")).unwrap();
        std::fs::write(src.join("SKILL.md"), "---\nname: l\ndescription: d\n---\n").unwrap();
        std::fs::write(src.join("scripts/real.sh"), "echo real").unwrap();
        std::os::unix::fs::symlink("real.sh", src.join("scripts/alias.sh")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", src.join("scripts/out.txt")).unwrap();
        let listed = list_folder(&src).unwrap();
        assert!(
            listed
                .warnings
                .iter()
                .any(|w| w.contains("scripts/out.txt"))
        );
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("skills")).unwrap();
        let skills = DirHandle::open_path(&ws).unwrap().walk("skills").unwrap();
        copy_skill(&skills, "l", &listed, None).unwrap();
        let copied = ws.join("skills/l/scripts/alias.sh");
        assert!(!std::fs::symlink_metadata(&copied).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(copied).unwrap(), "echo real");
        assert!(!ws.join("skills/l/scripts/out.txt").exists());
    }

    // threat model: H6
    #[test]
    fn writable_folders_go_to_the_sandbox_user_staged_skills_stay_the_runtimes() {
        let dir = tempfile::tempdir().unwrap();
        let root = DirHandle::open_path(dir.path()).unwrap();
        let owner = sandbox_user();
        let me = crate::fsutil::euid();
        let (session, created) = create_layout(&root, "s", Some(owner)).unwrap();
        assert!(created);
        assert!(!create_layout(&root, "s", Some(owner)).unwrap().1);
        let ws = dir.path().join("s");
        let uid = |rel: &str| std::fs::symlink_metadata(ws.join(rel)).unwrap().uid();
        let mode = |rel: &str| std::fs::symlink_metadata(ws.join(rel)).unwrap().mode() & 0o7777;
        for rel in ["", "work", "work/inputs", "out", "runs"] {
            assert_eq!(uid(rel), owner.uid, "{rel:?}");
        }
        assert_eq!(mode(""), 0o700);
        assert_eq!(uid("skills"), me);
        let run = crate::rundir::new_run_dir(&session).unwrap();
        assert_eq!(uid(&run), owner.uid);
        let listed = list_files(
            &[
                SkillFile::new("SKILL.md", "---\nname: k\ndescription: d\n---\n"),
                SkillFile::new("bin/run.sh", "echo hi").executable(true),
            ],
            None,
        )
        .unwrap();
        let skills = session.walk(SKILLS_SUBDIR).unwrap();
        copy_skill(&skills, "k", &listed, Some(owner)).unwrap();
        for (rel, want) in [
            ("skills/k", 0o555),
            ("skills/k/bin", 0o555),
            ("skills/k/SKILL.md", 0o444),
            ("skills/k/bin/run.sh", 0o555),
        ] {
            assert_eq!((uid(rel), mode(rel)), (me, want), "{rel}");
        }
        assert_eq!(uid("skills/k/.venv"), owner.uid);
        // Re-staging keeps the .venv (and its owner), swaps the copy.
        std::fs::write(ws.join("skills/k/.venv/marker"), "pkg").unwrap();
        copy_skill(&skills, "k", &listed, Some(owner)).unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.join("skills/k/.venv/marker")).unwrap(),
            "pkg"
        );
        assert_eq!(uid("skills/k/.venv"), owner.uid);
        let left: Vec<_> = std::fs::read_dir(ws.join("skills"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["k"], "no staging or trash folder is left");
        // What the runtime writes for the command is the sandbox user's.
        let inputs = session.walk_create("work/inputs/deep").unwrap();
        inputs
            .replace_with("x.txt", &mut &b"x"[..], 10, 0o644)
            .unwrap();
        assert_eq!(uid("work/inputs/deep"), owner.uid);
        assert_eq!(uid("work/inputs/deep/x.txt"), owner.uid);
    }
}
