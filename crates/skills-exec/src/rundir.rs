//! Run folders (`runs/run_<timestamp>`): one per command, kept when the
//! command left files in it, gone when it left none.
//!
//! Making a folder and removing it cost an inode each, and on ext4 that
//! (the inode allocator searching past recently freed inodes) was the
//! largest part of a run's own work. So a run's folder is made ahead of
//! time (the *spare*), and a folder its run left empty is not removed but
//! renamed to a fresh name and becomes the next spare. The finished run's
//! folder is tidied by whichever comes first: a background task started
//! when the run ends, or the next run taking its folder (which would
//! otherwise find no spare yet and make one).
//!
//! Blocking functions run on tokio's blocking pool; [`RunDirs::finished`]
//! only queues and may be called anywhere. Everything goes through the
//! session's folder handle, never following a link (H2, H4, H6).

use std::io;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use skills_workspace::{RUNS_SUBDIR, WorkspaceError};

use crate::fsutil::{DirHandle, io_error, walk_error};

/// The file the editor helper reads the model's text from.
pub(crate) const EDITOR_TEXT: &str = ".editor_text";
/// The editor helper script.
pub(crate) const EDITOR_SCRIPT: &str = ".editor.sh";

/// A workspace's run folders: the spare and the finished runs' folders
/// still to tidy.
#[derive(Debug, Default)]
pub(crate) struct RunDirs {
    /// Held while a folder is made, renamed or removed, so that
    /// [`RunDirs::close`] sees every folder that appears.
    state: Mutex<State>,
    /// Finished runs' folders, queued without waiting on `state`.
    finished: Mutex<Vec<Finished>>,
}

#[derive(Debug, Default)]
struct State {
    /// A folder no run uses yet.
    spare: Option<String>,
    /// The workspace is being removed: no folder may appear in it.
    closed: bool,
}

/// A finished run's folder.
#[derive(Debug)]
struct Finished {
    run_dir: String,
    editor: bool,
}

impl RunDirs {
    /// The folder for a new run (relative to the session folder): the
    /// spare, or a folder a finished run left empty, or a new one.
    /// Blocking.
    pub(crate) fn take(&self, ws: &DirHandle) -> Result<String, WorkspaceError> {
        let taken = {
            let mut state = crate::engine::lock(&self.state);
            self.tidy_locked(ws, &mut state);
            state.spare.take()
        };
        match taken {
            Some(dir) if ws.walk(&dir).is_ok() => Ok(dir),
            _ => new_run_dir(ws),
        }
    }

    /// Queues a finished run's folder for [`RunDirs::tidy`] (or the next
    /// [`RunDirs::take`]); `editor` when the runtime put its editor helper
    /// there. Never blocks on file work.
    pub(crate) fn finished(&self, run_dir: String, editor: bool) {
        crate::engine::lock(&self.finished).push(Finished { run_dir, editor });
    }

    /// Tidies the finished runs' folders; when one of them was kept (its
    /// command left files) and there is no spare, makes one. Blocking.
    pub(crate) fn tidy(&self, ws: &DirHandle) {
        let mut state = crate::engine::lock(&self.state);
        if self.tidy_locked(ws, &mut state) && state.spare.is_none() && !state.closed {
            state.spare = new_run_dir(ws).ok();
        }
    }

    /// Makes a spare when there is none. Blocking.
    pub(crate) fn make_spare(&self, ws: &DirHandle) {
        let mut state = crate::engine::lock(&self.state);
        if state.spare.is_none() && !state.closed {
            state.spare = new_run_dir(ws).ok();
        }
    }

    /// No folder appears from now on (the workspace is being removed).
    /// Blocking: waits for a folder being made.
    pub(crate) fn close(&self) {
        crate::engine::lock(&self.state).closed = true;
    }

    /// Tidies the queued folders: removes the editor helper, then an empty
    /// folder becomes the spare (renamed) when there is none, or goes.
    /// `true` when a folder was kept because its command left files.
    fn tidy_locked(&self, ws: &DirHandle, state: &mut State) -> bool {
        let done = std::mem::take(&mut *crate::engine::lock(&self.finished));
        let mut kept = false;
        for Finished { run_dir, editor } in done {
            let Some((parent, name)) = run_dir.rsplit_once('/') else {
                continue;
            };
            let Ok(runs) = ws.walk(parent) else {
                continue;
            };
            let opened = runs.subdir(name).and_then(|dir| {
                if editor {
                    dir.remove(EDITOR_TEXT);
                    dir.remove(EDITOR_SCRIPT);
                }
                let names = dir.names()?;
                Ok((dir, names))
            });
            match opened {
                Ok((dir, names)) if names.is_empty() => {
                    if state.spare.is_none()
                        && !state.closed
                        && let Ok(renamed) = recycle_run_dir(&runs, &dir, name)
                    {
                        state.spare = Some(renamed);
                    } else {
                        runs.remove_empty_dir(name);
                    }
                }
                Ok(_) => kept = true,
                // Unreadable (the command took its permissions away), gone,
                // or replaced by something that is not a folder: removed
                // when it is an empty folder, else left as it is.
                Err(_) => {
                    if !runs.remove_empty_dir(name) {
                        kept = true;
                    }
                }
            }
        }
        kept
    }
}

/// A fresh `runs/run_<timestamp>` folder made through the session handle
/// `ws` (handed to the sandbox's user, H6); returns its relative path.
pub(crate) fn new_run_dir(ws: &DirHandle) -> Result<String, WorkspaceError> {
    let runs = ws
        .ensure_dir(RUNS_SUBDIR)
        .map_err(|e| walk_error(&format!("{RUNS_SUBDIR}/"), e))?;
    claim_run_name(|name| runs.create_dir(name, 0o755).map(drop))
        .map_err(|e| io_error("creating the run folder", e))
}

/// Gives the empty run folder `dir` (`<runs>/<old>`) the mode of a new one
/// and a fresh `run_<timestamp>` name; returns its new relative path. The
/// caller has checked that it is empty.
fn recycle_run_dir(runs: &DirHandle, dir: &DirHandle, old: &str) -> io::Result<String> {
    dir.set_mode(0o755)?;
    claim_run_name(|name| runs.rename_new(old, name))
}

/// Runs `claim` on `run_<seconds>_<micros>` (then `…_1`, `…_2`, …) until a
/// name is free; returns `runs/<name>`.
fn claim_run_name(mut claim: impl FnMut(&str) -> io::Result<()>) -> io::Result<String> {
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
        match claim(&name) {
            Ok(()) => return Ok(format!("{RUNS_SUBDIR}/{name}")),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not name a run folder",
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn session() -> (tempfile::TempDir, DirHandle) {
        let tmp = tempfile::tempdir().unwrap();
        let ws = DirHandle::open_path(tmp.path()).unwrap();
        (tmp, ws)
    }

    fn runs(tmp: &tempfile::TempDir) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(tmp.path().join(RUNS_SUBDIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_empty_folder_becomes_the_next_spare_under_a_new_name() {
        let (tmp, ws) = session();
        let dirs = RunDirs::default();
        let first = dirs.take(&ws).unwrap();
        // The command made it unreadable to others; the next run gets the
        // mode of a new folder.
        let path = tmp.path().join(&first);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
        let inode = std::fs::metadata(&path).map(|m| std::os::unix::fs::MetadataExt::ino(&m));
        dirs.finished(first.clone(), false);
        dirs.tidy(&ws);
        let second = dirs.take(&ws).unwrap();
        assert_ne!(first, second);
        assert!(!path.exists());
        let meta = std::fs::metadata(tmp.path().join(&second)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, 0o755);
        assert_eq!(
            inode.unwrap(),
            std::os::unix::fs::MetadataExt::ino(&meta),
            "renamed, not made again"
        );
        assert_eq!(runs(&tmp), [second.trim_start_matches("runs/")]);
    }

    #[test]
    fn the_next_run_tidies_what_the_background_task_has_not() {
        let (tmp, ws) = session();
        let dirs = RunDirs::default();
        let first = dirs.take(&ws).unwrap();
        dirs.finished(first, false);
        // No `tidy` yet: `take` does it and reuses the folder.
        let second = dirs.take(&ws).unwrap();
        assert_eq!(runs(&tmp), [second.trim_start_matches("runs/")]);
        dirs.tidy(&ws);
        assert_eq!(runs(&tmp), [second.trim_start_matches("runs/")]);
    }

    #[test]
    fn a_folder_with_files_stays_and_a_new_spare_is_made() {
        let (tmp, ws) = session();
        let dirs = RunDirs::default();
        let first = dirs.take(&ws).unwrap();
        std::fs::write(tmp.path().join(&first).join("result.txt"), "kept").unwrap();
        dirs.finished(first.clone(), false);
        dirs.tidy(&ws);
        assert_eq!(
            std::fs::read_to_string(tmp.path().join(&first).join("result.txt")).unwrap(),
            "kept"
        );
        assert_eq!(runs(&tmp).len(), 2, "the kept folder and a new spare");
        let second = dirs.take(&ws).unwrap();
        assert_ne!(first, second);
        assert_eq!(runs(&tmp).len(), 2);
    }

    #[test]
    fn an_empty_folder_goes_when_a_spare_is_there_and_the_editor_files_go() {
        let (tmp, ws) = session();
        let dirs = RunDirs::default();
        let first = dirs.take(&ws).unwrap();
        std::fs::write(tmp.path().join(&first).join(EDITOR_TEXT), "x").unwrap();
        std::fs::write(tmp.path().join(&first).join(EDITOR_SCRIPT), "x").unwrap();
        dirs.make_spare(&ws);
        dirs.finished(first.clone(), true);
        dirs.tidy(&ws);
        assert!(!tmp.path().join(&first).exists());
        assert_eq!(runs(&tmp).len(), 1, "the spare alone");
    }

    #[test]
    fn an_empty_folder_the_command_locked_goes_or_serves_again() {
        let (tmp, ws) = session();
        let dirs = RunDirs::default();
        let first = dirs.take(&ws).unwrap();
        let path = tmp.path().join(&first);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        dirs.finished(first.clone(), true);
        dirs.tidy(&ws);
        // As root it is readable, so renamed; otherwise removed.
        assert!(!path.exists());
        let second = dirs.take(&ws).unwrap();
        let meta = std::fs::metadata(tmp.path().join(&second)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, 0o755);
        assert_eq!(runs(&tmp), [second.trim_start_matches("runs/")]);
    }

    #[test]
    fn a_folder_swapped_for_a_link_is_left_and_never_followed() {
        let (tmp, ws) = session();
        let outside = tempfile::tempdir().unwrap();
        let dirs = RunDirs::default();
        let first = dirs.take(&ws).unwrap();
        let path = tmp.path().join(&first);
        std::fs::remove_dir(&path).unwrap();
        std::os::unix::fs::symlink(outside.path(), &path).unwrap();
        dirs.finished(first.clone(), true);
        dirs.tidy(&ws);
        assert!(path.symlink_metadata().unwrap().file_type().is_symlink());
        assert!(outside.path().exists());
        // The next run gets a real folder, not the link.
        let second = dirs.take(&ws).unwrap();
        assert_ne!(first, second);
        assert!(
            std::fs::symlink_metadata(tmp.path().join(&second))
                .unwrap()
                .is_dir()
        );
    }

    #[test]
    fn nothing_appears_once_closed() {
        let (tmp, ws) = session();
        let dirs = RunDirs::default();
        let first = dirs.take(&ws).unwrap();
        dirs.close();
        dirs.finished(first, false);
        dirs.tidy(&ws);
        dirs.make_spare(&ws);
        assert!(runs(&tmp).is_empty());
    }
}
