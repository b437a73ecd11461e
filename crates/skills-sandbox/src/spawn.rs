//! What the host gives a process it starts between `fork` and `exec`:
//! descriptors to inherit, cgroups to join, resource limits, and no other
//! inherited descriptor. Used by `skills-exec` to start `bwrap` and local
//! commands, which it cannot do itself without `unsafe` code.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use crate::confine::{join_cgroup, rlimit};
use crate::protocol::Rlimit;
use crate::sys;

/// The setup of one child process (see the module docs).
#[derive(Debug, Default)]
pub struct ChildSetup {
    inherit: Vec<OwnedFd>,
    cgroups: Vec<OwnedFd>,
    rlimits: Vec<Rlimit>,
    close_inherited: bool,
}

impl ChildSetup {
    /// Nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The child inherits `fd` under the same number, which this returns
    /// (the host's copy stays close-on-exec, so no other child gets it).
    pub fn inherit(&mut self, fd: OwnedFd) -> RawFd {
        let n = fd.as_raw_fd();
        self.inherit.push(fd);
        n
    }

    /// The child joins the cgroup whose `cgroup.procs` is `procs` (opened
    /// for writing) before it executes anything, so everything it starts
    /// is counted there.
    pub fn join_cgroup(&mut self, procs: OwnedFd) {
        self.cgroups.push(procs);
    }

    /// The child gets this resource limit (soft and hard).
    pub fn rlimit(&mut self, limit: Rlimit) {
        self.rlimits.push(limit);
    }

    /// Every descriptor above 2 the child would inherit (the host's
    /// descriptors without close-on-exec, from a shell or a job server)
    /// is closed at its `exec`, except those given to
    /// [`inherit`](Self::inherit).
    pub fn close_inherited(&mut self) {
        self.close_inherited = true;
    }

    /// Installs the setup on `cmd` (its spawn then forks and runs the
    /// setup in the child). The descriptors live as long as `cmd`.
    pub fn install(self, cmd: &mut std::process::Command) {
        let limits: Vec<_> = self.rlimits.iter().map(|l| rlimit(*l)).collect();
        let Self {
            inherit,
            cgroups,
            close_inherited,
            ..
        } = self;
        sys::before_exec(cmd, move || {
            for fd in &cgroups {
                join_cgroup(fd)?;
            }
            for (resource, value) in &limits {
                let l = rustix::process::Rlimit {
                    current: Some(*value),
                    maximum: Some(*value),
                };
                rustix::process::setrlimit(*resource, l)?;
            }
            if close_inherited {
                sys::cloexec_from(3);
            }
            for fd in &inherit {
                rustix::io::fcntl_setfd(fd.as_fd(), rustix::io::FdFlags::empty())?;
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::protocol::RlimitResource;

    #[test]
    fn inherited_descriptors_limits_and_nothing_else() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let (other_r, _other_w) = rustix::pipe::pipe().unwrap();
        // A descriptor without close-on-exec, as a shell would leave one.
        rustix::io::fcntl_setfd(&other_r, rustix::io::FdFlags::empty()).unwrap();
        let mut setup = ChildSetup::new();
        let n = setup.inherit(w);
        setup.rlimit(Rlimit {
            resource: RlimitResource::FileSize,
            value: 1024,
        });
        setup.close_inherited();
        // bash: dash redirects only descriptors 0 to 9.
        let mut cmd = std::process::Command::new("/bin/bash");
        cmd.args([
            "-c",
            &format!(
                // No pipeline: the shell would hold the pipe's descriptors.
                "echo via-fd >&{n}; ls /proc/$$/fd; echo --; ulimit -f",
                n = n
            ),
        ]);
        setup.install(&mut cmd);
        let out = cmd.output().unwrap();
        drop(cmd);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (listing, limit) = text.split_once("--\n").unwrap_or_else(|| panic!("{out:?}"));
        let fds: Vec<i32> = listing
            .split_whitespace()
            .map(|f| f.parse().unwrap())
            .collect();
        assert!(fds.contains(&n), "{text}");
        assert!(!fds.contains(&other_r.as_raw_fd()), "{text}");
        // bash counts `ulimit -f` in 1024-byte blocks.
        assert_eq!(limit, "1\n", "{text}");
        let mut got = String::new();
        use std::io::Read;
        std::fs::File::from(r).read_to_string(&mut got).unwrap();
        assert_eq!(got, "via-fd\n");
    }
}
