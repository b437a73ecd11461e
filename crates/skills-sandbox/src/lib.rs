//! The helper of `skills-exec`'s bubblewrap sandbox, and the messages the
//! runtime exchanges with it.
//!
//! `skills-exec` starts one `bwrap` per workspace with this helper inside
//! as its *supervisor*: each run gets a *slot* (user, PID, mount and IPC
//! namespaces nested in the sandbox's, with a fresh `/tmp` and `/dev/shm`)
//! whose init runs the command as its PID 2 and, when it exits, kills and
//! reaps everything it started before reporting. With a `bwrap` per run
//! the helper is that sandbox's init instead. Either way every command is
//! confined before it runs: its cgroups, resource limits, no inherited
//! descriptors, landlock and a seccomp filter ([`seccomp`]).
//!
//! # How the helper is reached
//!
//! The helper is a mode of a binary: the `skills-sandbox` binary of
//! `skills-exec`, the `skills` CLI, or any program that calls
//! [`run_if_helper`] first thing in `main`:
//!
//! ```no_run
//! // First thing in `main`: returns at once unless this process was
//! // started as the helper.
//! skills_sandbox::run_if_helper();
//! // … the program, which may now use `SandboxRuntime` with the helper in
//! // its own executable.
//! ```
//!
//! `bwrap` executes it through a descriptor the runtime opened, so the
//! binary need not be visible inside the sandbox.
//!
//! # What it must not depend on
//! Nothing of the skills workspace and no async runtime: it runs inside
//! the sandbox, single-threaded, and forks. It is the only crate of the
//! workspace allowed `unsafe` code, all of it in one module (`sys`) with a
//! `// SAFETY:` comment on every block; which is why it also holds the C
//! allocator's settings that `skills mcp` uses ([`malloc`]) and the release of
//! its code's resident pages ([`code_pages`]).

pub mod code_pages;
#[cfg(target_os = "linux")]
mod confine;
#[cfg(target_os = "linux")]
mod init;
pub mod malloc;
pub mod protocol;
#[cfg(target_os = "linux")]
mod runner;
#[cfg(target_os = "linux")]
pub mod seccomp;
#[cfg(target_os = "linux")]
mod slot;
#[cfg(target_os = "linux")]
mod spawn;
#[cfg(target_os = "linux")]
mod supervisor;
#[cfg(target_os = "linux")]
mod sys;
#[cfg(target_os = "linux")]
pub mod transport;

#[cfg(target_os = "linux")]
pub use spawn::{ChildSetup, Program, Spawned};

use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};

/// The first argument that makes a binary the helper: `EXE __skills_sandbox
/// MODE …`. Chosen so no ordinary command line starts with it.
pub const HELPER_ARG: &str = "__skills_sandbox";
/// The helper mode of a workspace's shared sandbox.
pub const MODE_SUPERVISE: &str = "supervise";
/// The helper mode of a `bwrap` per run.
pub const MODE_RUN: &str = "run";
/// The name of the standalone helper binary.
pub const HELPER_BINARY: &str = "skills-sandbox";

/// Exit code of the helper when its arguments are wrong.
const EXIT_USAGE: i32 = 2;

static SELF_IS_HELPER: AtomicBool = AtomicBool::new(false);

/// Runs the helper and exits when this process was started as the helper
/// (its first argument is [`HELPER_ARG`]); otherwise returns at once, and
/// from then on [`current_exe_is_helper`] is `true`, so a sandbox runtime
/// built in this process uses its own executable as the helper.
///
/// Call it first thing in `main`, before any thread starts: the helper
/// forks, which is only sound in a single-threaded process.
pub fn run_if_helper() {
    let mut args = std::env::args_os();
    let _exe = args.next();
    if args.next().as_deref() == Some(std::ffi::OsStr::new(HELPER_ARG)) {
        std::process::exit(helper_main(args));
    }
    SELF_IS_HELPER.store(true, Ordering::Release);
}

/// `true` once [`run_if_helper`] returned in this process: its executable
/// can serve as the helper.
pub fn current_exe_is_helper() -> bool {
    SELF_IS_HELPER.load(Ordering::Acquire)
}

/// The `main` of the standalone helper binary: runs the helper mode its
/// arguments name and returns the exit code.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let mut args = args.into_iter();
    let _exe = args.next();
    if args.next().as_deref() == Some(std::ffi::OsStr::new(HELPER_ARG)) {
        helper_main(args)
    } else {
        eprintln!(
            "{HELPER_BINARY}: the helper of skills-exec's sandbox; it is started by the runtime, not by hand"
        );
        EXIT_USAGE
    }
}

/// Runs a helper mode: `supervise CONFIG`, or `run CONFIG [--status-fd N]
/// [--cgroup-fd N]… -- PROGRAM ARGS…`.
fn helper_main(args: impl Iterator<Item = OsString>) -> i32 {
    #[cfg(target_os = "linux")]
    {
        // Its name in `ps` and /proc (started through /proc/self/fd, it
        // would show as a number).
        let _ = rustix::thread::set_name(c"skills-sandbox");
        match parse(args) {
            Ok(Mode::Supervise(cfg)) => match supervisor::supervise(&cfg) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("{HELPER_BINARY}: {e}");
                    1
                }
            },
            Ok(Mode::Run(cfg, run)) => runner::run(&cfg, run),
            Err(e) => {
                eprintln!("{HELPER_BINARY}: {e}");
                EXIT_USAGE
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = args;
        eprintln!("{HELPER_BINARY}: the sandbox needs Linux");
        EXIT_USAGE
    }
}

#[cfg(target_os = "linux")]
enum Mode {
    Supervise(protocol::HelperConfig),
    Run(protocol::HelperConfig, runner::RunArgs),
}

#[cfg(target_os = "linux")]
fn parse(mut args: impl Iterator<Item = OsString>) -> Result<Mode, String> {
    use std::os::unix::ffi::OsStringExt;
    let mode = args.next().ok_or("no mode")?;
    let cfg = args.next().ok_or("no configuration")?;
    let cfg = cfg.to_str().ok_or("configuration is not text")?;
    let cfg = protocol::HelperConfig::from_arg(cfg).map_err(|e| e.to_string())?;
    match mode.to_str() {
        Some(MODE_SUPERVISE) => match args.next() {
            None => Ok(Mode::Supervise(cfg)),
            Some(_) => Err("unexpected argument".into()),
        },
        Some(MODE_RUN) => {
            let mut run = runner::RunArgs::default();
            let fd = |v: Option<OsString>| -> Result<i32, String> {
                v.and_then(|v| v.to_str().and_then(|s| s.parse().ok()))
                    .filter(|n| *n > 2)
                    .ok_or_else(|| "bad descriptor number".to_owned())
            };
            loop {
                let a = args.next().ok_or("no command")?;
                match a.to_str() {
                    Some("--status-fd") if run.status_fd.is_none() => {
                        run.status_fd = Some(fd(args.next())?);
                    }
                    Some("--cgroup-fd") => run.cgroup_fds.push(fd(args.next())?),
                    Some("--") => break,
                    _ => return Err("unexpected argument".into()),
                }
            }
            run.argv = args.map(OsStringExt::into_vec).collect();
            let mut named: Vec<i32> = run.cgroup_fds.clone();
            named.extend(run.status_fd);
            named.sort_unstable();
            if named.windows(2).any(|w| w[0] == w[1]) {
                return Err("a descriptor named twice".into());
            }
            if run.argv.first().is_none_or(|p| !p.starts_with(b"/")) {
                return Err("the program must be an absolute path".into());
            }
            Ok(Mode::Run(cfg, run))
        }
        _ => Err("unknown mode".into()),
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn modes_parse_and_refuse_bad_arguments() {
        let cfg = protocol::HelperConfig::default().to_arg();
        assert!(matches!(
            parse(args(&["supervise", &cfg]).into_iter()),
            Ok(Mode::Supervise(_))
        ));
        let Ok(Mode::Run(_, run)) = parse(
            args(&[
                "run",
                &cfg,
                "--status-fd",
                "5",
                "--cgroup-fd",
                "6",
                "--",
                "/bin/sh",
                "-c",
                "x",
            ])
            .into_iter(),
        ) else {
            panic!("run mode");
        };
        assert_eq!(run.status_fd, Some(5));
        assert_eq!(run.cgroup_fds, [6]);
        assert_eq!(run.argv.len(), 3);
        for bad in [
            vec!["supervise"],
            vec!["supervise", "zz"],
            vec!["supervise", &cfg, "extra"],
            vec!["run", &cfg, "--", "sh"],
            vec!["run", &cfg, "--status-fd", "1", "--", "/bin/sh"],
            vec![
                "run",
                &cfg,
                "--status-fd",
                "5",
                "--cgroup-fd",
                "5",
                "--",
                "/bin/sh",
            ],
            vec!["run", &cfg, "/bin/sh"],
            vec!["other", &cfg],
        ] {
            assert!(parse(args(&bad).into_iter()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_normal_command_line_is_not_the_helper() {
        assert_eq!(
            main_with_args(args(&["skills-sandbox", "--help"])),
            EXIT_USAGE
        );
    }
}
