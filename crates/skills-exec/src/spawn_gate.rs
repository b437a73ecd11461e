//! Why a freshly staged script is never "busy" when a command runs it.
//!
//! Linux refuses to execute a file that any process holds open for writing
//! (`ETXTBSY`, "Text file busy"). The runtime writes files a command may
//! execute (a skill's scripts when staging, inputs, the editor helper)
//! while other sessions of the same process start commands. A child
//! started by `fork`/`clone` gets a copy of every open descriptor, and
//! keeps it until its `exec` closes the close-on-exec ones: if one session
//! writes `scripts/run.sh` while another starts a command, that child holds
//! the script open for writing for a moment, and the first session's
//! `./scripts/run.sh` can fail with "Text file busy" (seen with fifty
//! concurrent sessions). `O_CLOEXEC` narrows the window to `fork`..`exec`
//! but cannot close it, and no crate or `std` API does.
//!
//! The gate closes it: a file the runtime creates holds a shared
//! ([`writing`]) guard while it is open, and a start of a process takes the
//! exclusive ([`spawning`]) one from before its `fork` until its `exec` has
//! happened (`std`'s `spawn` returns after it). So no child is ever forked
//! while the runtime holds a file open for writing. The lock is tokio's
//! fair one: a queued start waits only for the files open at that moment,
//! and files opened after it wait for that start (fractions of a
//! millisecond).
//!
//! Rules: the shared guard is taken on blocking threads only (creating a
//! file is blocking I/O anyway); a thread never creates a second file while
//! it holds one open (with a start queued between the two, that would wait
//! forever); nothing is written while the exclusive guard is held.

use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The process-wide gate.
static GATE: RwLock<()> = RwLock::const_new(());

/// Held while a file the runtime created is open for writing. Blocking:
/// call it on a blocking thread (never on a tokio worker).
pub(crate) fn writing() -> RwLockReadGuard<'static, ()> {
    GATE.blocking_read()
}

/// Held from before a process is started until its `exec` has happened.
pub(crate) async fn spawning() -> RwLockWriteGuard<'static, ()> {
    GATE.write().await
}

/// [`spawning`] for a blocking thread.
pub(crate) fn spawning_blocking() -> RwLockWriteGuard<'static, ()> {
    GATE.blocking_write()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A start waits for an open file and a file waits for a running start.
    #[test]
    fn starts_and_open_files_exclude_each_other() {
        let open = writing();
        let (started, done) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (s, d) = (Arc::clone(&started), Arc::clone(&done));
        let starter = std::thread::spawn(move || {
            let gate = spawning_blocking();
            s.store(true, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(50));
            d.store(true, Ordering::SeqCst);
            drop(gate);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!started.load(Ordering::SeqCst), "started with a file open");
        drop(open);
        while !started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        let _file = writing();
        assert!(done.load(Ordering::SeqCst), "a file opened during a start");
        starter.join().unwrap();
    }

    /// Scripts written through [`crate::fsutil::DirHandle::create_file`]
    /// and run at once never meet "Text file busy" while other threads
    /// keep starting processes through the gate (without the gate, the
    /// children of those starts hold the scripts open for writing).
    #[test]
    fn fresh_scripts_run_while_other_threads_start_processes() {
        let dir = tempfile::tempdir().unwrap();
        let handle = crate::fsutil::DirHandle::open_path(dir.path()).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let starters: Vec<_> = (0..3)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let gate = spawning_blocking();
                        let child = std::process::Command::new("/bin/true").spawn();
                        drop(gate);
                        child.unwrap().wait().unwrap();
                    }
                })
            })
            .collect();
        let mut busy = 0;
        for i in 0..300 {
            let name = format!("s{i}.sh");
            let mut f = handle.create_file(&name, 0o755).unwrap();
            std::io::Write::write_all(&mut f, b"#!/bin/sh\nexit 0\n").unwrap();
            drop(f);
            let gate = spawning_blocking();
            let child = std::process::Command::new(dir.path().join(&name)).spawn();
            drop(gate);
            match child {
                Ok(mut c) => assert!(c.wait().unwrap().success()),
                Err(e) if e.raw_os_error() == Some(26) => busy += 1,
                Err(e) => panic!("{name}: {e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        for s in starters {
            s.join().unwrap();
        }
        assert_eq!(busy, 0, "scripts found busy");
    }
}
