//! Killing every process a run started, without cgroups.
//!
//! Each command is spawned as the leader of a new process group and with a
//! marker variable (`SKILLS_EXEC_RUN=<id>`) in its environment, which every
//! descendant inherits. Killing the group catches ordinary children; children
//! that left the group (`setsid`, daemons that double-fork and get reparented
//! to init) are found by scanning `/proc` for the marker in their initial
//! environment, plus every descendant (by parent pid) of what was found. The
//! scan repeats until a round finds nothing, so a process forking while it is
//! killed is caught in the next round.
//!
//! A process that both leaves the group *and* starts a program with an empty
//! environment escapes a run's timeout in the local runtime; the workspace's
//! cleanup still kills it when its working folder is inside the workspace.
//! The sandbox's PID namespace does not have that gap (everything in it dies
//! with its init).

/// The marker variable naming the run a process belongs to.
pub(crate) const RUN_MARKER_VAR: &str = "SKILLS_EXEC_RUN";
/// The marker variable naming the workspace a process belongs to.
pub(crate) const SESSION_MARKER_VAR: &str = "SKILLS_EXEC_WORKSPACE";

/// Sends SIGKILL to a process group; a missing group is fine.
pub(crate) fn kill_group(pgid: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// `true` when the process group still has members.
pub(crate) fn group_alive(pgid: u32) -> bool {
    #[cfg(unix)]
    {
        match i32::try_from(pgid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            Some(pid) => rustix::process::test_kill_process_group(pid).is_ok(),
            None => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        false
    }
}

/// Kills the group `pgid` and every process carrying `marker`
/// (`"VAR=value"`) in its environment, with their descendants; returns how
/// many processes were signalled. Blocking (reads `/proc`).
pub(crate) fn sweep(marker: &str, pgid: Option<u32>) -> usize {
    sweep_in(marker, pgid, None)
}

/// [`sweep`], also killing every process whose working folder lies in
/// `cwd_root` (used when a whole workspace goes away: it catches processes
/// that dropped the marker with an empty environment).
pub(crate) fn sweep_in(
    marker: &str,
    pgid: Option<u32>,
    cwd_root: Option<&std::path::Path>,
) -> usize {
    let mut killed = 0;
    for _ in 0..50 {
        if let Some(pgid) = pgid {
            kill_group(pgid);
        }
        let found = find(marker.as_bytes(), pgid, cwd_root);
        if found.is_empty() {
            break;
        }
        for pid in &found {
            kill_pid(*pid);
        }
        killed += found.len();
    }
    killed
}

#[cfg(unix)]
pub(crate) fn kill_pid(pid: u32) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
pub(crate) fn kill_pid(_pid: u32) {}

/// Processes in group `pgid` or carrying `marker`, with their descendants.
#[cfg(target_os = "linux")]
fn find(marker: &[u8], pgid: Option<u32>, cwd_root: Option<&std::path::Path>) -> Vec<u32> {
    use std::collections::{HashMap, HashSet};
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut hits: Vec<u32> = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((ppid, pgrp, state)) = parse_stat(&stat) else {
            continue;
        };
        if state == 'Z' || state == 'X' {
            continue;
        }
        children.entry(ppid).or_default().push(pid);
        if pgid == Some(pgrp) {
            hits.push(pid);
            continue;
        }
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ"))
            && env.split(|b| *b == 0).any(|e| e == marker)
        {
            hits.push(pid);
            continue;
        }
        if let Some(root) = cwd_root
            && let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd"))
            && crate::fsutil::is_within(root, &cwd)
        {
            hits.push(pid);
        }
    }
    let mut all: HashSet<u32> = HashSet::new();
    let mut stack = hits;
    while let Some(pid) = stack.pop() {
        if pid != me && all.insert(pid) {
            stack.extend(children.get(&pid).into_iter().flatten().copied());
        }
    }
    all.into_iter().collect()
}

#[cfg(not(target_os = "linux"))]
fn find(_marker: &[u8], _pgid: Option<u32>, _cwd_root: Option<&std::path::Path>) -> Vec<u32> {
    Vec::new()
}

/// `(ppid, pgrp, state)` from `/proc/<pid>/stat` (the command name may hold
/// spaces and parentheses, so parsing starts after the last `)`).
#[cfg(target_os = "linux")]
fn parse_stat(stat: &str) -> Option<(u32, u32, char)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((ppid, pgrp, state))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_names() {
        assert_eq!(
            parse_stat("42 (a) b (c)) S 7 42 42 0 -1"),
            Some((7, 42, 'S'))
        );
        assert_eq!(parse_stat("garbage"), None);
    }
}
