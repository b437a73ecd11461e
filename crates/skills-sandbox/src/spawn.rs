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

/// A child started by [`ChildSetup::spawn`]: its pid and a pidfd. The
/// caller waits for it (`waitid` on the pidfd) and so reaps it.
#[derive(Debug)]
pub struct Spawned {
    /// The child's process id.
    pub pid: i32,
    /// A pidfd for the child (readable once it has exited).
    pub pidfd: OwnedFd,
}

/// What [`ChildSetup::spawn`] starts: an absolute program path, its
/// arguments (without `argv[0]`, which is the path), the whole
/// environment, the working folder and the three standard descriptors.
#[derive(Debug)]
pub struct Program<'a> {
    /// The program, an absolute path (no `PATH` search).
    pub path: &'a std::path::Path,
    /// The arguments after `argv[0]`.
    pub args: &'a [std::ffi::OsString],
    /// The whole environment, as `(name, value)` pairs.
    pub env: &'a [(std::ffi::OsString, std::ffi::OsString)],
    /// The working folder.
    pub cwd: &'a std::path::Path,
    /// Standard input, output and error.
    pub stdio: [std::os::fd::BorrowedFd<'a>; 3],
    /// Whether the child leads a process group of its own.
    pub process_group: bool,
}

impl ChildSetup {
    /// Starts `program` with this setup without copying this process's
    /// memory (`clone(CLONE_VM | CLONE_VFORK)`, as `posix_spawn` does),
    /// where [`install`](Self::install) makes `Command::spawn` fork: the
    /// cost of a `fork` grows with the parent's memory, which for a
    /// runtime inside a large agent process is most of a short command's
    /// start.
    ///
    /// # Errors
    ///
    /// A path, argument or variable with a NUL byte or a relative program
    /// path (`InvalidInput`), `clone` failing, or a step of the setup or
    /// `execve` failing in the child (its error, with the step named).
    pub fn spawn(self, program: &Program<'_>) -> std::io::Result<Spawned> {
        use std::os::unix::ffi::OsStrExt;
        let c = |bytes: &[u8]| {
            std::ffi::CString::new(bytes).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL byte in a string")
            })
        };
        if !program.path.is_absolute() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the program path must be absolute",
            ));
        }
        let path = c(program.path.as_os_str().as_bytes())?;
        let mut argv = vec![path.clone()];
        for a in program.args {
            argv.push(c(a.as_bytes())?);
        }
        let mut envp = Vec::with_capacity(program.env.len());
        for (k, v) in program.env {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            envp.push(c(&kv)?);
        }
        let cwd = c(program.cwd.as_os_str().as_bytes())?;
        let stdio = program.stdio.map(|fd| fd.as_raw_fd());
        let mut plan = sys::ExecPlan::new(path, argv, envp, cwd, stdio);
        plan.process_group = program.process_group;
        plan.cgroups = self.cgroups.iter().map(AsRawFd::as_raw_fd).collect();
        plan.rlimits = self.rlimits.iter().map(|l| rlimit(*l)).collect();
        plan.inherit = self.inherit.iter().map(AsRawFd::as_raw_fd).collect();
        plan.close_inherited = self.close_inherited;
        let (pid, pidfd) = sys::spawn_vfork(&plan)?;
        // The descriptors the child needed are its own copies now.
        drop(self);
        Ok(Spawned { pid, pidfd })
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
        let limit = after_descriptors(&text, n, other_r.as_raw_fd());
        // bash counts `ulimit -f` in 1024-byte blocks.
        assert_eq!(limit, "1\n", "{text}");
        assert_eq!(read_all(r), "via-fd\n");
    }

    /// Checks the `ls /proc/$$/fd` listing at the start of `text` (up to
    /// a `--` line): `inherited` is there, `leaked` is not. Returns what
    /// follows the listing.
    pub(super) fn after_descriptors(text: &str, inherited: i32, leaked: i32) -> &str {
        let (listing, rest) = text.split_once("--\n").unwrap_or_else(|| panic!("{text}"));
        let fds: Vec<i32> = listing
            .split_whitespace()
            .map(|f| f.parse().unwrap())
            .collect();
        assert!(fds.contains(&inherited), "{text}");
        assert!(!fds.contains(&leaked), "{text}");
        rest
    }

    /// Everything readable from `fd` until its end.
    pub(super) fn read_all(fd: OwnedFd) -> String {
        use std::io::Read;
        let mut text = String::new();
        std::fs::File::from(fd).read_to_string(&mut text).unwrap();
        text
    }
}

#[cfg(test)]
mod vfork_tests {
    #![allow(clippy::unwrap_used)]
    use std::ffi::OsString;
    use std::os::fd::{AsFd, AsRawFd};
    use std::path::Path;

    use super::tests::{after_descriptors, read_all};
    use super::*;
    use crate::protocol::RlimitResource;

    fn wait(pidfd: &OwnedFd) -> i32 {
        let status = rustix::process::waitid(
            rustix::process::WaitId::PidFd(pidfd.as_fd()),
            rustix::process::WaitIdOptions::EXITED,
        )
        .unwrap()
        .unwrap();
        status.exit_status().unwrap()
    }

    #[test]
    fn a_vfork_spawn_gets_the_same_setup_as_a_forked_one() {
        let (out_r, out_w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        let (via_r, via_w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        let (other_r, _other_w) = rustix::pipe::pipe().unwrap();
        // A descriptor without close-on-exec, as a shell would leave one.
        rustix::io::fcntl_setfd(&other_r, rustix::io::FdFlags::empty()).unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let mut setup = ChildSetup::new();
        let n = setup.inherit(via_w);
        setup.rlimit(Rlimit {
            resource: RlimitResource::FileSize,
            value: 1024,
        });
        setup.close_inherited();
        let args: Vec<OsString> = vec![
            "-c".into(),
            format!(
                "echo via-fd >&{n}; ls /proc/$$/fd; echo --; ulimit -f; echo \"$GREETING\"; \
                 pwd; [ \"$(ps -o pgid= -p $$)\" -eq $$ ] && echo leader; exit 7"
            )
            .into(),
        ];
        let env = vec![
            (OsString::from("GREETING"), OsString::from("hello")),
            (OsString::from("PATH"), OsString::from("/usr/bin:/bin")),
        ];
        let spawned = setup
            .spawn(&Program {
                path: Path::new("/bin/bash"),
                args: &args,
                env: &env,
                cwd: Path::new("/tmp"),
                stdio: [null.as_fd(), out_w.as_fd(), out_w.as_fd()],
                process_group: true,
            })
            .unwrap();
        drop(out_w);
        assert!(spawned.pid > 0);
        assert_eq!(wait(&spawned.pidfd), 7);
        let text = read_all(out_r);
        let rest = after_descriptors(&text, n, other_r.as_raw_fd());
        assert_eq!(rest, "1\nhello\n/tmp\nleader\n", "{text}");
        assert_eq!(read_all(via_r), "via-fd\n");
    }

    #[test]
    fn failures_in_the_child_name_the_step_and_leave_no_child() {
        let null = std::fs::File::open("/dev/null").unwrap();
        let stdio = [null.as_fd(), null.as_fd(), null.as_fd()];
        let run = |path: &str, cwd: &str| {
            ChildSetup::new()
                .spawn(&Program {
                    path: Path::new(path),
                    args: &[],
                    env: &[],
                    cwd: Path::new(cwd),
                    stdio,
                    process_group: false,
                })
                .unwrap_err()
        };
        let e = run("/nonexistent/program", "/");
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "{e}");
        assert!(e.to_string().contains("executing the program"), "{e}");
        let e = run("/bin/true", "/nonexistent/folder");
        assert!(e.to_string().contains("working folder"), "{e}");
        let e = run("bin/true", "/");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
        // Each failed child was reaped: no zombie that never ran a program
        // (it would still bear this process's name) is left among the
        // children of any thread of this process. Other tests' children
        // run programs of their own, so they never match.
        let own = std::fs::read_to_string("/proc/self/comm").unwrap();
        let leftovers: Vec<String> = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("children")).ok())
            .flat_map(|c| c.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let comm = stat.split_once('(').and_then(|(_, r)| r.rsplit_once(')'));
                matches!(comm, Some((name, rest)) if name == own.trim() && rest.trim_start().starts_with('Z'))
            })
            .collect();
        assert!(leftovers.is_empty(), "unreaped children: {leftovers:?}");
    }
}
