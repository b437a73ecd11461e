//! What every sandboxed command gets between `fork` and `exec`: its cgroups,
//! resource limits, no inherited descriptors, landlock and seccomp.
//!
//! Everything that allocates or reads files (the seccomp program, the
//! landlock ruleset with its path descriptors) is prepared once, before
//! any `fork`; [`Confinement::apply`] then makes only system calls.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope,
};
use rustix::process::{Resource, Rlimit as RustixRlimit};

use crate::protocol::{HelperConfig, Rlimit, RlimitResource};
use crate::seccomp::{Filter, SockFilter};
use crate::sys;

/// The newest landlock ABI this crate asks for; older kernels get what they
/// have (best effort), newer ones are not asked for more.
const LANDLOCK_ABI: ABI = ABI::V6;

/// Folders every command may write below, besides the configured ones.
const ALWAYS_WRITABLE: [&str; 2] = ["/tmp", "/dev/shm"];
/// Where device files are (written and `ioctl`ed: `/dev/null`, terminals).
const DEVICES: &str = "/dev";

/// The confinement of the commands one helper starts.
#[derive(Debug)]
pub(crate) struct Confinement {
    rlimits: Vec<(Resource, u64)>,
    seccomp: Option<Vec<SockFilter>>,
    landlock: Option<RulesetCreated>,
}

impl Confinement {
    /// Prepares the confinement `cfg` asks for. Landlock is best effort: a
    /// kernel without it gets none (`landlock_active` says so).
    pub(crate) fn new(cfg: &HelperConfig) -> Self {
        let rlimits = cfg.rlimits.iter().map(|l| rlimit(*l)).collect();
        let seccomp = if cfg.seccomp {
            Filter::new().map(|f| f.program())
        } else {
            None
        };
        let landlock = if cfg.landlock {
            ruleset(&cfg.writable).ok()
        } else {
            None
        };
        Self {
            rlimits,
            seccomp,
            landlock,
        }
    }

    /// `true` when landlock restricts every command (the kernel has it).
    #[cfg(test)]
    fn landlock_active(&self) -> bool {
        self.landlock.is_some()
    }

    /// Restricts the calling process, an init, for good: no capability can
    /// come back (its bounding set emptied, where it may still do so), no
    /// new privileges, landlock, then the seccomp filter. Its commands
    /// inherit all of it: installing a filter costs the kernel a pass over
    /// every system call number, so it is done once per init rather than
    /// once per command. Call it after the init's own setup (its mounts).
    pub(crate) fn restrict_self(&self) -> io::Result<()> {
        for cap in rustix::thread::CapabilitySet::all().iter() {
            let _ = rustix::thread::remove_capability_from_bounding_set(cap);
        }
        if let Some(ruleset) = &self.landlock {
            ruleset
                .try_clone()?
                .restrict_self()
                .map_err(|e| io::Error::other(e.to_string()))?;
        }
        rustix::thread::set_no_new_privs(true)?;
        if let Some(program) = &self.seccomp {
            sys::install_seccomp(program)?;
        }
        Ok(())
    }

    /// Confines a command, in the child between `fork` and `exec` of an
    /// init that called [`restrict_self`](Self::restrict_self): joins
    /// `cgroups` (each a `cgroup.procs` opened for writing), sets the
    /// resource limits (the file size lowered to `file_size` when that is
    /// smaller: what is left of the workspace's disk cap), and marks every
    /// descriptor above 2 close-on-exec. Makes system calls only.
    pub(crate) fn apply(&self, cgroups: &[OwnedFd], file_size: Option<u64>) -> io::Result<()> {
        for fd in cgroups {
            join_cgroup(fd)?;
        }
        let mut fsize_set = false;
        for (resource, value) in &self.rlimits {
            let value = match (*resource, file_size) {
                (Resource::Fsize, Some(n)) => {
                    fsize_set = true;
                    (*value).min(n)
                }
                _ => *value,
            };
            let limit = RustixRlimit {
                current: Some(value),
                maximum: Some(value),
            };
            rustix::process::setrlimit(*resource, limit)?;
        }
        if let (false, Some(n)) = (fsize_set, file_size) {
            let limit = RustixRlimit {
                current: Some(n),
                maximum: Some(n),
            };
            rustix::process::setrlimit(Resource::Fsize, limit)?;
        }
        sys::cloexec_from(3);
        Ok(())
    }
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is `fd`
/// (`0` names the writer; the kernel checks the permission of whoever
/// opened the file).
pub(crate) fn join_cgroup(fd: &OwnedFd) -> io::Result<()> {
    match rustix::io::write(fd.as_fd(), b"0") {
        Ok(_) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The rustix form of a limit.
pub(crate) fn rlimit(l: Rlimit) -> (Resource, u64) {
    let resource = match l.resource {
        RlimitResource::Processes => Resource::Nproc,
        RlimitResource::Data => Resource::Data,
        RlimitResource::FileSize => Resource::Fsize,
        RlimitResource::Core => Resource::Core,
        RlimitResource::OpenFiles => Resource::Nofile,
    };
    (resource, l.value)
}

/// The landlock ruleset: read and run anything, write only below
/// `writable`, `/tmp` and `/dev/shm`, use the devices in `/dev`; no signals
/// to processes outside the run and no abstract Unix sockets made outside
/// it (a run of the same session cannot reach another through them).
fn ruleset(writable: &[Vec<u8>]) -> Result<RulesetCreated, landlock::RulesetError> {
    use std::os::unix::ffi::OsStrExt;
    let abi = LANDLOCK_ABI;
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let mut created = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)?
        .create()?;
    if let Ok(root) = PathFd::new("/") {
        created = created.add_rule(PathBeneath::new(root, read))?;
    }
    if let Ok(dev) = PathFd::new(DEVICES) {
        let devices = read | AccessFs::WriteFile | AccessFs::IoctlDev;
        created = created.add_rule(PathBeneath::new(dev, devices))?;
    }
    let extra = writable
        .iter()
        .map(|p| std::ffi::OsStr::from_bytes(p).to_owned());
    for path in ALWAYS_WRITABLE.iter().map(|p| p.into()).chain(extra) {
        let path: std::ffi::OsString = path;
        // A folder that is missing here (no /dev/shm) grants nothing.
        if let Ok(fd) = PathFd::new(&path) {
            created = created.add_rule(PathBeneath::new(fd, all))?;
        }
    }
    Ok(created)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::process::Command;

    fn confined(cfg: &HelperConfig, script: &str) -> std::process::Output {
        let confinement = std::sync::Arc::new(Confinement::new(cfg));
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", script]);
        let c = std::sync::Arc::clone(&confinement);
        crate::sys::before_exec(&mut cmd, move || {
            c.restrict_self()?;
            c.apply(&[], None)
        });
        cmd.output().unwrap()
    }

    /// The filter is installed by the kernel and refuses what it lists,
    /// while ordinary work goes on.
    #[test]
    fn seccomp_refuses_listed_calls_in_a_real_process() {
        let dir = std::env::temp_dir().join(format!("skills-seccomp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = HelperConfig {
            seccomp: true,
            ..HelperConfig::default()
        };
        let script = format!(
            "cd {d} && echo ok > f && chmod 755 f && echo chmod-ok; \
             chmod u+s f 2>/dev/null || echo suid-refused; \
             chmod g+s f 2>/dev/null || echo sgid-refused; \
             unshare -U true 2>/dev/null || echo unshare-refused; \
             grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status",
            d = dir.display()
        );
        let out = confined(&cfg, &script);
        let text = String::from_utf8_lossy(&out.stdout);
        let _ = std::fs::remove_dir_all(&dir);
        for want in [
            "chmod-ok",
            "suid-refused",
            "sgid-refused",
            "unshare-refused",
            "Seccomp:\t2",
            "NoNewPrivs:\t1",
        ] {
            assert!(text.contains(want), "{want} missing in {text}");
        }
    }

    /// Landlock lets the command write only where it is allowed (when the
    /// kernel has landlock; a kernel without it must fail this test rather
    /// than pass it unchecked).
    #[test]
    fn landlock_limits_writes_in_a_real_process() {
        // Not below /tmp, which every command may write to.
        let base = std::path::Path::new("/var/tmp")
            .join(format!("skills-landlock-{}", std::process::id()));
        let (ok, no) = (base.join("ok"), base.join("no"));
        std::fs::create_dir_all(&ok).unwrap();
        std::fs::create_dir_all(&no).unwrap();
        use std::os::unix::ffi::OsStrExt;
        let cfg = HelperConfig {
            landlock: true,
            writable: vec![ok.as_os_str().as_bytes().to_vec()],
            ..HelperConfig::default()
        };
        assert!(
            Confinement::new(&cfg).landlock_active(),
            "landlock is not available on this kernel"
        );
        let script = format!(
            "echo x > {ok}/f && echo wrote-ok; (echo x > {no}/f) 2>/dev/null || echo refused-no; \
             cat {ok}/f >/dev/null && echo read-ok; echo x > /dev/null && echo devnull-ok",
            ok = ok.display(),
            no = no.display()
        );
        let out = confined(&cfg, &script);
        let text = String::from_utf8_lossy(&out.stdout);
        let _ = std::fs::remove_dir_all(&base);
        for want in ["wrote-ok", "refused-no", "read-ok", "devnull-ok"] {
            assert!(text.contains(want), "{want} missing in {text}");
        }
    }

    #[test]
    fn limits_are_set() {
        let cfg = HelperConfig {
            rlimits: vec![
                Rlimit {
                    resource: RlimitResource::FileSize,
                    value: 4096,
                },
                Rlimit {
                    resource: RlimitResource::Core,
                    value: 0,
                },
            ],
            ..HelperConfig::default()
        };
        let out = confined(&cfg, "ulimit -f; ulimit -c");
        // `ulimit -f` counts 512-byte blocks in dash and bash.
        assert_eq!(String::from_utf8_lossy(&out.stdout), "8\n0\n");
    }
}
