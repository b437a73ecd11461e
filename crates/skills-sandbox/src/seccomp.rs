//! The seccomp filter every sandboxed command runs under: defence in depth
//! behind the namespaces, refusing the system calls a skill's command has no
//! business making and that widen the kernel surface it can attack.
//!
//! Refused with `EPERM` unless said otherwise:
//!
//! | calls | why |
//! | --- | --- |
//! | `unshare`, `setns`; `clone` with any `CLONE_NEW*` flag; `clone3` (`ENOSYS`, so libc falls back to `clone`) | no new namespaces: a user namespace would give the command capabilities again, over a large kernel surface |
//! | `mount`, `umount2`, `pivot_root`, `chroot`, `open_tree`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr` | the mounts are the sandbox's walls |
//! | `ptrace`, `process_vm_readv`, `process_vm_writev`, `pidfd_getfd`, `kcmp` | no reading or steering another process |
//! | `bpf`, `perf_event_open`, `userfaultfd`, `io_uring_setup`, `io_uring_enter`, `io_uring_register` | large kernel attack surfaces (io_uring also bypasses this filter for the calls it performs) |
//! | `keyctl`, `add_key`, `request_key` | the kernel keyrings are not namespaced |
//! | `sethostname`, `setdomainname` | the hostname stays `skills-sandbox` |
//! | `reboot`, `kexec_load`, `kexec_file_load`, `init_module`, `finit_module`, `delete_module`, `swapon`, `swapoff`, `acct`, `quotactl`, `syslog`, `vhangup`, `settimeofday`, `clock_settime`, `clock_adjtime`, `adjtimex` | host administration (capabilities are gone anyway) |
//! | `open_by_handle_at`, `name_to_handle_at` | opening files by handle walks around the mounts |
//! | `socket` and `socketpair` for `AF_VSOCK` | virtual-machine sockets reach the host across network namespaces |
//! | `chmod`, `fchmod`, `fchmodat`, `fchmodat2` with the set-user-ID or set-group-ID bit; `open`, `openat`, `creat`, `mknod`, `mknodat` creating a file with either | a set-ID file left in the workspace must not hand its owner's id to whoever runs it from outside |
//! | `openat2` (`ENOSYS`: its mode is out of the filter's reach; libc falls back to `openat`) | as above |
//! | `ioctl` `TIOCSTI`, `TIOCLINUX` | no typing into a terminal |
//!
//! The filter checks the architecture first and kills the process on any
//! other (32-bit system calls on a 64-bit kernel use other numbers), and
//! on x86-64 refuses x32 system calls (`ENOSYS`). Everything else is
//! allowed: this is a deny list over a sandbox, not the sandbox itself.
//!
//! Built by hand rather than with `seccompiler`: that crate has no check
//! for x32 system calls (which share the x86-64 architecture value and
//! would walk around every rule), and the program is short enough to read:
//! [`Filter::program`] builds it and the tests run it through a small BPF
//! interpreter as well as through the kernel.

/// One BPF instruction (`struct sock_filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct SockFilter {
    /// Operation.
    pub code: u16,
    /// Jump offset when true.
    pub jt: u8,
    /// Jump offset when false.
    pub jf: u8,
    /// Operand.
    pub k: u32,
}

// BPF opcodes (linux/filter.h, linux/bpf_common.h).
const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_ALU_AND_K: u16 = 0x04 | 0x50; // BPF_ALU | BPF_AND | BPF_K
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JMP_JGE_K: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K

// Return values (linux/seccomp.h).
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;

// `struct seccomp_data` offsets: nr, arch, instruction pointer, args.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
const OFFSET_ARGS: u32 = 16;

const EPERM: u32 = 1;
const ENOSYS: u32 = 38;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: Option<u32> = Some(62 | 0x8000_0000 | 0x4000_0000);
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: Option<u32> = Some(183 | 0x8000_0000 | 0x4000_0000);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: Option<u32> = None;

/// The x32 bit of x86-64 system call numbers.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

// Flags and values the rules test (the same on x86-64 and aarch64).
const CLONE_NEW_ANY: u32 = 0x0200_0000 // CLONE_NEWCGROUP
    | 0x0002_0000 // CLONE_NEWNS
    | 0x0400_0000 // CLONE_NEWUTS
    | 0x0800_0000 // CLONE_NEWIPC
    | 0x1000_0000 // CLONE_NEWUSER
    | 0x2000_0000 // CLONE_NEWPID
    | 0x4000_0000 // CLONE_NEWNET
    | 0x0000_0080; // CLONE_NEWTIME
const S_ISUID: u32 = 0o4000;
const S_ISGID: u32 = 0o2000;
const O_CREAT: u32 = 0o100;
const O_TMPFILE_BIT: u32 = 0o20_000_000;
const AF_VSOCK: u32 = 40;
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

/// A test of one argument's low 32 bits: `(arg & mask) == value`.
#[derive(Debug, Clone, Copy)]
struct ArgTest {
    arg: u32,
    mask: u32,
    value: u32,
}

/// When a rule refuses its system call.
#[derive(Debug, Clone)]
enum When {
    /// Always.
    Always,
    /// When any of these conjunctions holds.
    Any(Vec<Vec<ArgTest>>),
}

#[derive(Debug, Clone)]
struct Rule {
    nr: u32,
    errno: u32,
    when: When,
}

/// The filter: rules for this architecture.
#[derive(Debug, Clone)]
pub struct Filter {
    rules: Vec<Rule>,
}

fn test(arg: u32, mask: u32, value: u32) -> ArgTest {
    ArgTest { arg, mask, value }
}

/// Any of the set-ID bits set in argument `mode_arg`.
fn set_id(mode_arg: u32) -> Vec<Vec<ArgTest>> {
    vec![
        vec![test(mode_arg, S_ISUID, S_ISUID)],
        vec![test(mode_arg, S_ISGID, S_ISGID)],
    ]
}

/// A file created (`O_CREAT` or `O_TMPFILE` in `flags_arg`) with a set-ID
/// bit in `mode_arg`.
fn creates_set_id(flags_arg: u32, mode_arg: u32) -> Vec<Vec<ArgTest>> {
    let mut any = Vec::new();
    for create in [O_CREAT, O_TMPFILE_BIT] {
        for bit in [S_ISUID, S_ISGID] {
            any.push(vec![
                test(flags_arg, create, create),
                test(mode_arg, bit, bit),
            ]);
        }
    }
    any
}

/// The system call numbers, from the kernel's tables.
#[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
fn nr(n: libc::c_long) -> u32 {
    n as u32
}

impl Filter {
    /// The filter for this architecture, or `None` on an architecture it
    /// does not know (x86-64 and aarch64 only).
    pub fn new() -> Option<Self> {
        AUDIT_ARCH?;
        let mut rules = Vec::new();
        let mut deny = |n: libc::c_long| {
            rules.push(Rule {
                nr: nr(n),
                errno: EPERM,
                when: When::Always,
            });
        };
        for n in [
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_chroot,
            libc::SYS_open_tree,
            libc::SYS_move_mount,
            libc::SYS_fsopen,
            libc::SYS_fsconfig,
            libc::SYS_fsmount,
            libc::SYS_fspick,
            libc::SYS_mount_setattr,
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_process_vm_writev,
            libc::SYS_pidfd_getfd,
            libc::SYS_kcmp,
            libc::SYS_bpf,
            libc::SYS_perf_event_open,
            libc::SYS_userfaultfd,
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_request_key,
            libc::SYS_sethostname,
            libc::SYS_setdomainname,
            libc::SYS_reboot,
            libc::SYS_kexec_load,
            libc::SYS_kexec_file_load,
            libc::SYS_init_module,
            libc::SYS_finit_module,
            libc::SYS_delete_module,
            libc::SYS_swapon,
            libc::SYS_swapoff,
            libc::SYS_acct,
            libc::SYS_quotactl,
            libc::SYS_syslog,
            libc::SYS_vhangup,
            libc::SYS_settimeofday,
            libc::SYS_clock_settime,
            libc::SYS_clock_adjtime,
            libc::SYS_adjtimex,
            libc::SYS_open_by_handle_at,
            libc::SYS_name_to_handle_at,
        ] {
            deny(n);
        }
        let mut rule = |n: libc::c_long, errno: u32, when: When| {
            rules.push(Rule {
                nr: nr(n),
                errno,
                when,
            });
        };
        rule(libc::SYS_clone3, ENOSYS, When::Always);
        rule(libc::SYS_openat2, ENOSYS, When::Always);
        rule(
            libc::SYS_clone,
            EPERM,
            When::Any(vec![vec![test(0, CLONE_NEW_ANY, 0)]]),
        );
        rule(libc::SYS_fchmod, EPERM, When::Any(set_id(1)));
        rule(libc::SYS_fchmodat, EPERM, When::Any(set_id(2)));
        rule(libc::SYS_fchmodat2, EPERM, When::Any(set_id(2)));
        rule(libc::SYS_openat, EPERM, When::Any(creates_set_id(2, 3)));
        rule(libc::SYS_mknodat, EPERM, When::Any(set_id(2)));
        let vsock = || When::Any(vec![vec![test(0, u32::MAX, AF_VSOCK)]]);
        rule(libc::SYS_socket, EPERM, vsock());
        rule(libc::SYS_socketpair, EPERM, vsock());
        rule(
            libc::SYS_ioctl,
            EPERM,
            When::Any(vec![
                vec![test(1, u32::MAX, TIOCSTI)],
                vec![test(1, u32::MAX, TIOCLINUX)],
            ]),
        );
        #[cfg(target_arch = "x86_64")]
        {
            rule(libc::SYS_chmod, EPERM, When::Any(set_id(1)));
            rule(libc::SYS_open, EPERM, When::Any(creates_set_id(1, 2)));
            rule(libc::SYS_creat, EPERM, When::Any(set_id(1)));
            rule(libc::SYS_mknod, EPERM, When::Any(set_id(1)));
        }
        // `clone` refuses when the flags hold a namespace bit: its test
        // reads "the masked flags are 0" and the rule must fire on the
        // opposite, so it is inverted when the program is built.
        Some(Self { rules })
    }

    /// The BPF program.
    pub fn program(&self) -> Vec<SockFilter> {
        let Some(arch) = AUDIT_ARCH else {
            return Vec::new();
        };
        let stmt = |code, k| SockFilter {
            code,
            jt: 0,
            jf: 0,
            k,
        };
        let jump = |code, k, jt, jf| SockFilter { code, jt, jf, k };
        let mut p = vec![
            stmt(BPF_LD_W_ABS, OFFSET_ARCH),
            jump(BPF_JMP_JEQ_K, arch, 1, 0),
            stmt(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),
            stmt(BPF_LD_W_ABS, OFFSET_NR),
        ];
        if cfg!(target_arch = "x86_64") {
            p.push(jump(BPF_JMP_JGE_K, X32_SYSCALL_BIT, 0, 1));
            p.push(stmt(BPF_RET_K, SECCOMP_RET_ERRNO | ENOSYS));
        }
        for rule in &self.rules {
            let block = block(rule);
            // Each block ends in a return, so a rule that does not match
            // jumps over its whole block to the next rule's comparison
            // (blocks are far below 255 instructions).
            let skip = u8::try_from(block.len()).unwrap_or(u8::MAX);
            p.push(jump(BPF_JMP_JEQ_K, rule.nr, 0, skip));
            p.extend(block);
        }
        p.push(stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
        p
    }
}

/// The instructions run once a rule's system call number matched (the
/// accumulator then holds the number): each ends in a return.
fn block(rule: &Rule) -> Vec<SockFilter> {
    let deny = SockFilter {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k: SECCOMP_RET_ERRNO | rule.errno,
    };
    let allow = SockFilter {
        code: BPF_RET_K,
        jt: 0,
        jf: 0,
        k: SECCOMP_RET_ALLOW,
    };
    let When::Any(alternatives) = &rule.when else {
        return vec![deny];
    };
    // `clone`: refuse unless the namespace bits are all clear.
    let invert = rule.nr == nr(libc::SYS_clone);
    let mut out = Vec::new();
    for tests in alternatives {
        // Length of this alternative: three instructions a test, and its
        // return.
        let len = tests.len() * 3 + 1;
        for (i, t) in tests.iter().enumerate() {
            out.push(SockFilter {
                code: BPF_LD_W_ABS,
                jt: 0,
                jf: 0,
                k: OFFSET_ARGS + 8 * t.arg,
            });
            out.push(SockFilter {
                code: BPF_ALU_AND_K,
                jt: 0,
                jf: 0,
                k: t.mask,
            });
            // On a failed test, jump past the rest of this alternative
            // (to the next one, or to the final allow).
            let rest = u8::try_from(len - (i * 3 + 3)).unwrap_or(u8::MAX);
            out.push(SockFilter {
                code: BPF_JMP_JEQ_K,
                jt: 0,
                jf: rest,
                k: t.value,
            });
        }
        out.push(if invert { allow } else { deny });
    }
    out.push(if invert { deny } else { allow });
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Runs a filter program on one system call, as the kernel would.
    fn run(p: &[SockFilter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let word = |off: u32| -> u32 {
            match off {
                OFFSET_NR => nr,
                OFFSET_ARCH => arch,
                o if o >= OFFSET_ARGS => {
                    let i = ((o - OFFSET_ARGS) / 8) as usize;
                    let high = (o - OFFSET_ARGS) % 8 == 4;
                    if high {
                        (args[i] >> 32) as u32
                    } else {
                        args[i] as u32
                    }
                }
                _ => panic!("load at {off}"),
            }
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = p[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => acc = word(i.k),
                BPF_ALU_AND_K => acc &= i.k,
                BPF_JMP_JEQ_K => pc += usize::from(if acc == i.k { i.jt } else { i.jf }),
                BPF_JMP_JGE_K => pc += usize::from(if acc >= i.k { i.jt } else { i.jf }),
                BPF_RET_K => return i.k,
                c => panic!("opcode {c:#x}"),
            }
        }
    }

    fn decide(nr: libc::c_long, args: [u64; 6]) -> u32 {
        let p = Filter::new().unwrap().program();
        run(&p, AUDIT_ARCH.unwrap(), super::nr(nr), args)
    }

    const DENY: u32 = SECCOMP_RET_ERRNO | EPERM;
    const NOSYS: u32 = SECCOMP_RET_ERRNO | ENOSYS;
    const ALLOW: u32 = SECCOMP_RET_ALLOW;

    #[test]
    fn decisions() {
        let z = [0; 6];
        assert_eq!(decide(libc::SYS_read, z), ALLOW);
        assert_eq!(decide(libc::SYS_unshare, z), DENY);
        assert_eq!(decide(libc::SYS_sethostname, z), DENY);
        assert_eq!(decide(libc::SYS_ptrace, z), DENY);
        assert_eq!(decide(libc::SYS_clone3, z), NOSYS);
        assert_eq!(decide(libc::SYS_openat2, z), NOSYS);
        // clone: a plain fork or thread is fine, a namespace is not.
        assert_eq!(decide(libc::SYS_clone, [0x11, 0, 0, 0, 0, 0]), ALLOW);
        assert_eq!(decide(libc::SYS_clone, [0x3d0f00, 0, 0, 0, 0, 0]), ALLOW);
        assert_eq!(decide(libc::SYS_clone, [0x1000_0011, 0, 0, 0, 0, 0]), DENY);
        assert_eq!(decide(libc::SYS_clone, [0x80 | 0x11, 0, 0, 0, 0, 0]), DENY);
        // Set-ID modes.
        assert_eq!(decide(libc::SYS_fchmod, [3, 0o755, 0, 0, 0, 0]), ALLOW);
        assert_eq!(decide(libc::SYS_fchmod, [3, 0o4755, 0, 0, 0, 0]), DENY);
        assert_eq!(decide(libc::SYS_fchmodat, [3, 0, 0o2755, 0, 0, 0]), DENY);
        assert_eq!(decide(libc::SYS_fchmodat, [3, 0, 0o1777, 0, 0, 0]), ALLOW);
        // High bits of a 32-bit argument are ignored by the kernel and by
        // the filter alike.
        assert_eq!(
            decide(libc::SYS_fchmod, [3, 0xffff_0000_0000_01ed, 0, 0, 0, 0]),
            ALLOW
        );
        let creat = u64::from(O_CREAT | 1);
        assert_eq!(decide(libc::SYS_openat, [3, 0, creat, 0o644, 0, 0]), ALLOW);
        assert_eq!(decide(libc::SYS_openat, [3, 0, creat, 0o4755, 0, 0]), DENY);
        // Without O_CREAT the mode is not used (and may be garbage).
        assert_eq!(decide(libc::SYS_openat, [3, 0, 0, 0o4755, 0, 0]), ALLOW);
        let tmp = u64::from(O_TMPFILE_BIT | 0o200_000 | 2);
        assert_eq!(decide(libc::SYS_openat, [3, 0, tmp, 0o6755, 0, 0]), DENY);
        assert_eq!(decide(libc::SYS_mknodat, [3, 0, 0o104755, 0, 0, 0]), DENY);
        // Sockets and terminals.
        assert_eq!(decide(libc::SYS_socket, [40, 1, 0, 0, 0, 0]), DENY);
        assert_eq!(decide(libc::SYS_socket, [1, 1, 0, 0, 0, 0]), ALLOW);
        assert_eq!(decide(libc::SYS_socket, [2, 1, 0, 0, 0, 0]), ALLOW);
        assert_eq!(decide(libc::SYS_ioctl, [0, 0x5412, 0, 0, 0, 0]), DENY);
        assert_eq!(decide(libc::SYS_ioctl, [0, 0x5413, 0, 0, 0, 0]), ALLOW);
        assert_eq!(decide(libc::SYS_ioctl, [0, 0x541C, 0, 0, 0, 0]), DENY);
    }

    #[test]
    fn other_architectures_are_killed() {
        let p = Filter::new().unwrap().program();
        // i386's value, as an `int 0x80` call on x86-64 reports.
        assert_eq!(
            run(&p, 3 | 0x4000_0000, 1, [0; 6]),
            SECCOMP_RET_KILL_PROCESS
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x32_calls_are_refused() {
        let p = Filter::new().unwrap().program();
        let x32_unshare = X32_SYSCALL_BIT | nr(libc::SYS_unshare);
        assert_eq!(run(&p, AUDIT_ARCH.unwrap(), x32_unshare, [0; 6]), NOSYS);
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(decide(libc::SYS_chmod, [0, 0o4755, 0, 0, 0, 0]), DENY);
            assert_eq!(decide(libc::SYS_chmod, [0, 0o755, 0, 0, 0, 0]), ALLOW);
            let creat = u64::from(O_CREAT);
            assert_eq!(decide(libc::SYS_open, [0, creat, 0o4700, 0, 0, 0]), DENY);
            assert_eq!(decide(libc::SYS_creat, [0, 0o2700, 0, 0, 0, 0]), DENY);
        }
    }

    #[test]
    fn jumps_stay_inside_the_program() {
        let p = Filter::new().unwrap().program();
        assert!(p.len() < 4096);
        for (pc, i) in p.iter().enumerate() {
            if i.code == BPF_JMP_JEQ_K || i.code == BPF_JMP_JGE_K {
                assert!(pc + 1 + usize::from(i.jt.max(i.jf)) < p.len(), "{pc}");
            }
        }
        assert_eq!(p.last().unwrap().k, SECCOMP_RET_ALLOW);
    }
}
