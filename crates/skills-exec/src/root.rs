//! The runtime's root folder, where the session folders live (threat model:
//! H1): created private, or refused when someone else could change it.
//!
//! A predictable root in a shared folder (`/tmp/skills-run-<pid>`) lets
//! another local user create it first, fill it with links, and wait for the
//! runtime (perhaps root) to write through them. So a root the runtime
//! picks gets a random name ([`private_root`]), and any root, given or
//! picked, must belong to the runtime's user, be writable by nobody else,
//! and sit below folders no other user can change.

use std::path::{Path, PathBuf};

use skills_workspace::{WorkspaceError, WorkspaceErrorKind};

use crate::fsutil::{DirHandle, euid, io_error, random_hex};

/// The mode of a root only the runtime's user may enter.
const PRIVATE_MODE: u32 = 0o700;
/// The mode of a root the sandbox's unprivileged user must traverse to
/// reach its session folder (it cannot list the root, and each session
/// folder is `0700`).
const TRAVERSABLE_MODE: u32 = 0o711;

/// A fresh path `<temp dir>/<prefix>-<random>` for a runtime's root folder
/// (threat model: H1). Nothing is created: the runtime builder makes the
/// folder (mode `0700`, owned by this process's user) when it builds the
/// runtime, and refuses it if someone else made it first. The 64 random bits
/// make the name impossible to predict, so another local user cannot
/// prepare it.
///
/// ```no_run
/// use skills_exec::{LocalRuntime, private_root};
/// let root = private_root("my-agent");
/// let runtime = LocalRuntime::builder(&root).build()?;
/// # Ok::<(), skills_workspace::WorkspaceError>(())
/// ```
pub fn private_root(prefix: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{prefix}-{}", random_hex(8)))
}

/// Makes the folder `path` (it must not exist) with exactly `mode`.
fn make_private(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(mode).create(path)?;
    // The umask may have taken bits away; never adds any beyond `mode`.
    let dir = DirHandle::open_path(path)?;
    dir.set_mode(mode)
}

/// Creates the root `path` when missing, checks it (H1), and returns its
/// canonical path and a handle on it. `traversable`: the sandbox's
/// unprivileged user must be able to pass through it (mode `0711`).
pub(crate) fn prepare_root(
    path: &Path,
    traversable: bool,
) -> Result<(PathBuf, DirHandle), WorkspaceError> {
    let mode = if traversable {
        TRAVERSABLE_MODE
    } else {
        PRIVATE_MODE
    };
    let shown = path.display();
    if std::fs::symlink_metadata(path).is_err() {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| io_error(format!("workspace root {shown}"), e))?;
            // Never create anything where another user could swap it.
            check_ancestors(
                &parent
                    .canonicalize()
                    .map_err(|e| io_error(format!("workspace root {shown}"), e))?,
            )?;
        }
        match make_private(path, mode) {
            Ok(()) => {}
            // Someone made it meanwhile: checked below like any other.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_error(format!("workspace root {shown}"), e)),
        }
    }
    let canonical = path
        .canonicalize()
        .map_err(|e| io_error(format!("workspace root {shown}"), e))?;
    if canonical.parent().is_none() {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            "the workspace root cannot be the file system root",
        ));
    }
    if let Some(parent) = canonical.parent() {
        check_ancestors(parent)?;
    }
    let dir = DirHandle::open_path(&canonical)
        .map_err(|e| io_error(format!("workspace root {shown}"), e))?;
    let meta = dir
        .meta()
        .map_err(|e| io_error(format!("workspace root {shown}"), e))?;
    let me = euid();
    if meta.uid != me {
        return Err(refused(format!(
            "the workspace root {} belongs to user {}, not to this process's user {me}; \
             another user may have created it (threat model H1): use a root of your own",
            canonical.display(),
            meta.uid
        )));
    }
    if meta.mode & 0o022 != 0 {
        return Err(refused(format!(
            "the workspace root {} is writable by other users (mode {:o}); refusing it \
             (threat model H1)",
            canonical.display(),
            meta.mode
        )));
    }
    if meta.mode != mode {
        dir.set_mode(mode)
            .map_err(|e| io_error(format!("workspace root {shown}"), e))?;
    }
    Ok((canonical, dir))
}

/// Checks that no other user can change `dir` or a folder above it: each
/// belongs to root or to this process's user, and is writable by group or
/// others only when sticky (like `/tmp`).
fn check_ancestors(dir: &Path) -> Result<(), WorkspaceError> {
    use std::os::unix::fs::MetadataExt;
    let me = euid();
    for folder in dir.ancestors() {
        let meta = std::fs::metadata(folder).map_err(|e| io_error(folder.display(), e))?;
        let writable_by_others = meta.mode() & 0o022 != 0;
        let sticky = meta.mode() & 0o1000 != 0;
        if (meta.uid() != 0 && meta.uid() != me) || (writable_by_others && !sticky) {
            return Err(refused(format!(
                "the folder {} above the workspace root can be changed by another user \
                 (owner {}, mode {:o}); refusing to keep workspaces below it (threat model H1)",
                folder.display(),
                meta.uid(),
                meta.mode() & 0o7777
            )));
        }
    }
    Ok(())
}

fn refused(message: String) -> WorkspaceError {
    WorkspaceError::new(WorkspaceErrorKind::InvalidRequest, message)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    // threat model: H1
    #[test]
    fn private_roots_are_fresh_and_made_private() {
        let a = private_root("skills-test");
        let b = private_root("skills-test");
        assert_ne!(a, b);
        assert!(!a.exists());
        let (canonical, _) = prepare_root(&a, false).unwrap();
        let mode = std::fs::metadata(&canonical).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o700);
        std::fs::remove_dir(&a).unwrap();
    }

    // threat model: H1
    #[test]
    fn roots_writable_by_others_are_refused_and_modes_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = prepare_root(&open, false).unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::InvalidRequest);
        assert!(e.message().contains("writable by other users"), "{e}");
        let readable = dir.path().join("readable");
        std::fs::create_dir(&readable).unwrap();
        std::fs::set_permissions(&readable, std::fs::Permissions::from_mode(0o755)).unwrap();
        prepare_root(&readable, true).unwrap();
        let mode = std::fs::metadata(&readable).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o711);
        let below_open = open.join("ws");
        let e = prepare_root(&below_open, false).unwrap_err();
        assert!(e.message().contains("above the workspace root"), "{e}");
    }
}
