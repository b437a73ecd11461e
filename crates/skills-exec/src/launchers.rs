//! How the command policy reads programs that start other programs (threat
//! model: H10): launchers (`env`, `xargs`, `nice`, `timeout`, `find -exec`,
//! …), shells and interpreters.
//!
//! Each known program has a small grammar of its options, taken from its
//! manual (GNU coreutils, findutils, util-linux, procps, the interpreters'
//! own): enough to find the program a launcher starts (which the policy then
//! checks, and which is replaced by its absolute path so the launcher's own
//! `PATH` cannot pick another), or to see that an interpreter was given code
//! on its command line or on standard input (refused: the policy cannot see
//! what that code runs). An option a grammar does not know is refused, since
//! it might take a value and move the program's position. Programs that
//! change user, root or namespaces (`sudo`, `doas`, `su`, `chroot`,
//! `unshare`, …) are refused outright.
//!
//! Written by hand: no crate describes other programs' command lines.

/// What the policy does with a program, by its name.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// Starts nothing the policy knows of.
    Plain,
    /// Starts the program found by its grammar.
    Launcher(&'static Grammar),
    /// Runs code: a script file is accepted, code on the command line or
    /// on standard input is not.
    Interpreter(&'static Grammar),
    /// `find`: each `-exec`, `-execdir`, `-ok`, `-okdir` starts a program.
    Find,
    /// A multi-call binary (`busybox`, `toybox`): its first operand names
    /// the program it acts as.
    MultiCall,
    /// Never run under a policy, with the reason.
    Refused(&'static str),
}

/// Where a grammar's operands start the next thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operand {
    /// A script file (interpreters and shells); none, or `-`, means code
    /// from standard input.
    Script,
    /// Program text unless a program-file option was given (`awk`).
    ProgramText,
    /// A command, after `skip` operands (`timeout DURATION`,
    /// `flock FILE`); `default` runs when there is none (`xargs` runs
    /// `echo`).
    Command {
        skip: usize,
        default: Option<&'static str>,
    },
    /// `NAME=VALUE` operands, then a command (`env`).
    Assignments,
}

/// The options of a program.
#[derive(Debug)]
pub(crate) struct Grammar {
    /// The program's name (for messages).
    pub(crate) name: &'static str,
    /// Single-letter flags.
    flags: &'static str,
    /// Single-letter options taking a value (the rest of the word, or the
    /// next word).
    values: &'static str,
    /// Single-letter options whose value is the rest of the word, possibly
    /// empty (never the next word: `perl -i.bak`, `xargs -i`).
    rest_only: &'static str,
    /// Single-letter options followed by any number of characters of a set,
    /// after which the group goes on (`perl -lane` is `-l -a -n -e`); a `:`
    /// after them takes the rest of the word (`perl -d:Trace`).
    optional: &'static [(char, &'static str)],
    /// Single-letter options meaning code on the command line or on
    /// standard input.
    code: &'static str,
    /// Single-letter options naming a program file (so operands are data).
    program_file: &'static str,
    /// A program file option ends the options (`python -m module`).
    program_file_ends: bool,
    /// Long flags (also accepted as `--name=value` when listed in
    /// `long_values`).
    long_flags: &'static [&'static str],
    /// Long options taking a value (`--name value` or `--name=value`).
    long_values: &'static [&'static str],
    /// Long options with an optional value (`--name` or `--name=value`).
    long_optional: &'static [&'static str],
    /// Long options meaning code.
    long_code: &'static [&'static str],
    /// Long options naming a program file.
    long_program_file: &'static [&'static str],
    /// Options (short or long, without dashes) that are refused with a
    /// reason: they change how the program is found or run it through a
    /// shell.
    refused: &'static [(&'static str, &'static str)],
    /// `-<digits>` is a flag (`nice -10`).
    numeric_flags: bool,
    /// `+abc` groups are flags too (shells).
    plus_groups: bool,
    /// Single-letter options that make a launcher run its command
    /// directly rather than through `sh -c` (`watch -x`); when set and
    /// absent, the command is shell code.
    exec_switch: Option<(char, &'static str)>,
    /// What the operands are.
    pub(crate) operand: Operand,
}

/// What reading a command line with a grammar found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Nothing more runs (a launcher without a command).
    Nothing,
    /// The program word at this index (of the arguments) runs next.
    Program(usize),
    /// The default program runs (`xargs` without a command: `echo`).
    Default(&'static str),
    /// A script file at this index (or none needed: a program file option).
    Script,
    /// Code on the command line or standard input; why.
    Code(String),
    /// An option or operand the policy refuses; why.
    Refused(String),
}

const fn grammar(name: &'static str, operand: Operand) -> Grammar {
    Grammar {
        name,
        flags: "",
        values: "",
        rest_only: "",
        optional: &[],
        code: "",
        program_file: "",
        program_file_ends: false,
        long_flags: &[],
        long_values: &[],
        long_optional: &[],
        long_code: &[],
        long_program_file: &[],
        refused: &[],
        numeric_flags: false,
        plus_groups: false,
        exec_switch: None,
        operand,
    }
}

const COMMAND: Operand = Operand::Command {
    skip: 0,
    default: None,
};

static ENV: Grammar = Grammar {
    flags: "i0v",
    values: "u",
    long_flags: &[
        "ignore-environment",
        "null",
        "debug",
        "list-signal-handling",
    ],
    long_values: &["unset"],
    long_optional: &["default-signal", "ignore-signal", "block-signal"],
    refused: &[
        ("C", "changes the folder programs are found in"),
        ("chdir", "changes the folder programs are found in"),
        (
            "S",
            "splits a string into a command the policy does not read",
        ),
        (
            "split-string",
            "splits a string into a command the policy does not read",
        ),
        ("P", "changes where programs are found"),
    ],
    ..grammar("env", Operand::Assignments)
};
static NICE: Grammar = Grammar {
    values: "n",
    long_values: &["adjustment"],
    numeric_flags: true,
    ..grammar("nice", COMMAND)
};
static NOHUP: Grammar = grammar("nohup", COMMAND);
static TIMEOUT: Grammar = Grammar {
    flags: "v",
    values: "ks",
    long_flags: &["preserve-status", "foreground", "verbose"],
    long_values: &["kill-after", "signal"],
    ..grammar(
        "timeout",
        Operand::Command {
            skip: 1,
            default: None,
        },
    )
};
static SETSID: Grammar = Grammar {
    flags: "cfw",
    long_flags: &["ctty", "fork", "wait"],
    ..grammar("setsid", COMMAND)
};
static STDBUF: Grammar = Grammar {
    values: "ioe",
    long_values: &["input", "output", "error"],
    ..grammar("stdbuf", COMMAND)
};
static IONICE: Grammar = Grammar {
    flags: "t",
    values: "cn",
    long_flags: &["ignore"],
    long_values: &["class", "classdata"],
    refused: &[
        ("p", "acts on other processes"),
        ("P", "acts on other processes"),
        ("u", "acts on other processes"),
        ("pid", "acts on other processes"),
        ("pgid", "acts on other processes"),
        ("uid", "acts on other processes"),
    ],
    ..grammar("ionice", COMMAND)
};
static CHRT: Grammar = Grammar {
    flags: "bdfiorRav",
    values: "TPD",
    long_flags: &[
        "batch",
        "deadline",
        "fifo",
        "idle",
        "other",
        "rr",
        "reset-on-fork",
        "all-tasks",
        "verbose",
    ],
    long_values: &["sched-runtime", "sched-period", "sched-deadline"],
    refused: &[
        ("p", "acts on other processes"),
        ("pid", "acts on other processes"),
    ],
    ..grammar(
        "chrt",
        Operand::Command {
            skip: 1,
            default: None,
        },
    )
};
static TASKSET: Grammar = Grammar {
    flags: "ac",
    long_flags: &["all-tasks", "cpu-list"],
    refused: &[
        ("p", "acts on other processes"),
        ("pid", "acts on other processes"),
    ],
    ..grammar(
        "taskset",
        Operand::Command {
            skip: 1,
            default: None,
        },
    )
};
static FLOCK: Grammar = Grammar {
    flags: "sxunoF",
    values: "wE",
    code: "c",
    long_flags: &[
        "shared",
        "exclusive",
        "unlock",
        "nonblock",
        "close",
        "no-fork",
        "verbose",
    ],
    long_values: &["timeout", "wait", "conflict-exit-code"],
    long_code: &["command"],
    ..grammar(
        "flock",
        Operand::Command {
            skip: 1,
            default: None,
        },
    )
};
static TIME: Grammar = Grammar {
    flags: "apvq",
    values: "fo",
    long_flags: &["append", "portability", "verbose", "quiet"],
    long_values: &["format", "output"],
    ..grammar("time", COMMAND)
};
static XARGS: Grammar = Grammar {
    flags: "0oprtx",
    values: "adEILnPs",
    rest_only: "eil",
    long_flags: &[
        "null",
        "open-tty",
        "interactive",
        "no-run-if-empty",
        "verbose",
        "exit",
        "show-limits",
    ],
    long_values: &[
        "arg-file",
        "delimiter",
        "max-lines",
        "max-args",
        "max-procs",
        "max-chars",
        "process-slot-var",
    ],
    long_optional: &["eof", "replace", "max-lines"],
    ..grammar(
        "xargs",
        Operand::Command {
            skip: 0,
            default: Some("echo"),
        },
    )
};
static WATCH: Grammar = Grammar {
    flags: "bcdegtwx",
    values: "nq",
    long_optional: &["differences"],
    long_flags: &[
        "beep",
        "color",
        "no-color",
        "errexit",
        "chgexit",
        "no-title",
        "no-wrap",
        "exec",
        "precise",
        "no-linewrap",
    ],
    long_values: &["interval", "equexit"],
    exec_switch: Some(('x', "exec")),
    ..grammar("watch", COMMAND)
};

/// Shells: `-c` and `-s` (and no script) mean code; `-o`/`-O` take an
/// option name.
static SHELL: Grammar = Grammar {
    flags: "abefhkmnprtuvxBCEHPTlD",
    values: "oO",
    code: "csi",
    long_flags: &[
        "norc",
        "noprofile",
        "posix",
        "restricted",
        "login",
        "verbose",
        "noediting",
        "debugger",
        "dump-strings",
        "dump-po-strings",
        "protected",
        "help",
        "version",
    ],
    long_values: &["rcfile", "init-file"],
    plus_groups: true,
    ..grammar("shell", Operand::Script)
};
static PYTHON: Grammar = Grammar {
    flags: "bBdEhiIOPqsSuvVx",
    values: "WX",
    program_file: "m",
    program_file_ends: true,
    code: "c",
    long_flags: &["help", "help-env", "help-xoptions", "help-all", "version"],
    long_values: &["check-hash-based-pycs"],
    ..grammar("python", Operand::Script)
};
/// Perl's switches (perlrun).
static PERL: Grammar = Grammar {
    flags: "acfhnpsStTuUvwWX",
    values: "IMm",
    rest_only: "ixDF",
    optional: &[
        ('0', "0123456789abcdefABCDEFxX"),
        ('l', "01234567"),
        ('C', "0123456789IOEioDSAaL"),
        ('d', "t"),
    ],
    code: "eE",
    ..grammar("perl", Operand::Script)
};
static RUBY: Grammar = Grammar {
    flags: "acdhlnpsSvwy",
    values: "CEIr",
    rest_only: "FKx",
    optional: &[('0', "01234567"), ('T', "0123456789"), ('W', "012")],
    code: "e",
    long_flags: &["copyright", "verbose", "version", "help", "yydebug", "jit"],
    long_values: &[
        "enable",
        "disable",
        "encoding",
        "external-encoding",
        "internal-encoding",
        "dump",
    ],
    ..grammar("ruby", Operand::Script)
};
static NODE: Grammar = Grammar {
    flags: "chv",
    values: "rC",
    code: "epi",
    long_flags: &[
        "check",
        "help",
        "version",
        "no-deprecation",
        "no-warnings",
        "trace-warnings",
        "enable-source-maps",
        "experimental-modules",
        "preserve-symlinks",
        "pending-deprecation",
        "throw-deprecation",
        "trace-deprecation",
        "expose-gc",
    ],
    long_values: &[
        "require",
        "import",
        "conditions",
        "input-type",
        "loader",
        "title",
    ],
    long_code: &["eval", "print", "interactive"],
    ..grammar("node", Operand::Script)
};
static PHP: Grammar = Grammar {
    flags: "hHilmnqsvw",
    values: "cdtz",
    code: "rRBEa",
    program_file: "fF",
    ..grammar("php", Operand::Script)
};
static LUA: Grammar = Grammar {
    flags: "vEW",
    values: "l",
    code: "ei",
    ..grammar("lua", Operand::Script)
};
static TCL: Grammar = grammar("tclsh", Operand::Script);
static EXPECT: Grammar = Grammar {
    flags: "bdinNv",
    values: "D",
    code: "ci",
    program_file: "f",
    ..grammar("expect", Operand::Script)
};
static RSCRIPT: Grammar = Grammar {
    long_flags: &[
        "vanilla",
        "verbose",
        "no-environ",
        "no-site-file",
        "no-init-file",
        "restore",
        "no-restore",
        "save",
        "no-save",
        "default-packages",
    ],
    code: "e",
    ..grammar("Rscript", Operand::Script)
};
static AWK: Grammar = Grammar {
    values: "vF",
    code: "e",
    program_file: "fE",
    long_flags: &[
        "posix",
        "traditional",
        "lint",
        "sandbox",
        "characters-as-bytes",
        "re-interval",
        "version",
        "help",
    ],
    long_values: &["assign", "field-separator"],
    refused: &[(
        "W",
        "implementation options the command policy does not read",
    )],
    long_code: &["source"],
    long_program_file: &["file", "exec"],
    ..grammar("awk", Operand::ProgramText)
};

/// How the policy treats the program `name` (its file name, or the name it
/// was called by).
pub(crate) fn classify(name: &str) -> Kind {
    let versioned = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    match name {
        "env" => Kind::Launcher(&ENV),
        "nice" => Kind::Launcher(&NICE),
        "nohup" => Kind::Launcher(&NOHUP),
        "timeout" => Kind::Launcher(&TIMEOUT),
        "setsid" => Kind::Launcher(&SETSID),
        "stdbuf" => Kind::Launcher(&STDBUF),
        "ionice" => Kind::Launcher(&IONICE),
        "chrt" => Kind::Launcher(&CHRT),
        "taskset" => Kind::Launcher(&TASKSET),
        "flock" => Kind::Launcher(&FLOCK),
        "time" => Kind::Launcher(&TIME),
        "xargs" => Kind::Launcher(&XARGS),
        "watch" => Kind::Launcher(&WATCH),
        "find" => Kind::Find,
        "busybox" | "toybox" => Kind::MultiCall,
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ksh93" | "mksh" | "ash" | "yash" | "posh"
        | "rbash" | "lksh" | "pdksh" | "oksh" | "loksh" | "hush" | "csh" | "tcsh" | "fish" => {
            Kind::Interpreter(&SHELL)
        }
        "perl" | "nodejs" | "node" | "tclsh" | "wish" | "expect" | "Rscript" | "gawk" | "mawk"
        | "nawk" | "awk" | "original-awk" | "busybox-awk" | "luajit" => match name {
            "perl" => Kind::Interpreter(&PERL),
            "node" | "nodejs" => Kind::Interpreter(&NODE),
            "tclsh" | "wish" => Kind::Interpreter(&TCL),
            "expect" => Kind::Interpreter(&EXPECT),
            "Rscript" => Kind::Interpreter(&RSCRIPT),
            "luajit" => Kind::Interpreter(&LUA),
            _ => Kind::Interpreter(&AWK),
        },
        "sudo" | "doas" | "su" | "runuser" | "pkexec" | "sg" | "newgrp" | "setpriv" | "capsh" => {
            Kind::Refused("it runs programs as another user")
        }
        "chroot" | "unshare" | "nsenter" | "bwrap" | "firejail" | "systemd-run"
        | "systemd-nspawn" | "setarch" | "linux32" | "linux64" | "prlimit" | "numactl"
        | "cgexec" | "chpst" | "start-stop-daemon" | "daemonize" | "fakeroot" | "fakechroot"
        | "faketime" | "eatmydata" | "torsocks" | "proxychains" | "proxychains4" | "rlwrap"
        | "catchsegv" | "script" | "strace" | "ltrace" | "gdb" | "valgrind" | "parallel"
        | "dbus-run-session" | "xvfb-run" | "ssh" | "sshpass" | "run-parts" => {
            Kind::Refused("it starts other programs in ways the command policy does not read")
        }
        _ if versioned("python") || versioned("pypy") => Kind::Interpreter(&PYTHON),
        _ if versioned("perl") => Kind::Interpreter(&PERL),
        _ if versioned("ruby") => Kind::Interpreter(&RUBY),
        _ if versioned("php") => Kind::Interpreter(&PHP),
        _ if versioned("lua") => Kind::Interpreter(&LUA),
        _ if versioned("tclsh") || versioned("wish") => Kind::Interpreter(&TCL),
        _ => Kind::Plain,
    }
}

impl Grammar {
    /// Reads `args` (the words after the program) with this grammar.
    pub(crate) fn read(&'static self, args: &[String]) -> Reading {
        let mut i = 0;
        let mut program_file = false;
        let mut exec_switch = false;
        while i < args.len() {
            let arg = args[i].as_str();
            if arg == "--" {
                i += 1;
                break;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, inline) = match long.split_once('=') {
                    Some((n, _)) => (n, true),
                    None => (long, false),
                };
                if let Some(why) = self.refusal(name) {
                    return Reading::Refused(format!("`{}` {arg}: {why}", self.name));
                }
                if self.long_code.contains(&name) {
                    return Reading::Code(format!("`{}` {arg}", self.name));
                }
                if self.exec_switch.is_some_and(|(_, l)| l == name) {
                    exec_switch = true;
                } else if self.long_optional.contains(&name) {
                    // The value, if any, is attached with `=`.
                } else if self.long_program_file.contains(&name) {
                    program_file = true;
                    if !inline {
                        i += 1;
                    }
                } else if self.long_values.contains(&name) {
                    if !inline {
                        i += 1;
                    }
                } else if !self.long_flags.contains(&name) || inline {
                    return Reading::Refused(format!(
                        "`{}` option {arg} is not one the command policy understands",
                        self.name
                    ));
                }
                i += 1;
                continue;
            }
            let group = if let Some(g) = arg.strip_prefix('-').filter(|g| !g.is_empty()) {
                g
            } else if let Some(g) = arg
                .strip_prefix('+')
                .filter(|g| self.plus_groups && !g.is_empty())
            {
                g
            } else {
                break;
            };
            if self.numeric_flags && group.chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            let chars: Vec<(usize, char)> = group.char_indices().collect();
            let mut takes_next = false;
            let mut k = 0;
            while let Some(&(at, c)) = chars.get(k) {
                let rest = &group[at + c.len_utf8()..];
                if let Some(why) = self.refusal(&group[at..at + c.len_utf8()]) {
                    return Reading::Refused(format!("`{}` -{c}: {why}", self.name));
                }
                if self.code.contains(c) {
                    return Reading::Code(format!("`{}` -{c}", self.name));
                }
                if self.exec_switch.is_some_and(|(x, _)| x == c) {
                    exec_switch = true;
                    k += 1;
                    continue;
                }
                if self.program_file.contains(c) {
                    if self.program_file_ends {
                        return Reading::Script;
                    }
                    program_file = true;
                    takes_next = rest.is_empty();
                    break;
                }
                if self.values.contains(c) {
                    takes_next = rest.is_empty();
                    break;
                }
                if self.rest_only.contains(c) {
                    break;
                }
                if let Some((_, set)) = self.optional.iter().find(|(o, _)| *o == c) {
                    k += 1;
                    while chars.get(k).is_some_and(|&(_, d)| set.contains(d)) {
                        k += 1;
                    }
                    if chars.get(k).is_some_and(|&(_, d)| d == ':') {
                        break;
                    }
                    continue;
                }
                if !self.flags.contains(c) {
                    return Reading::Refused(format!(
                        "`{}` option -{c} is not one the command policy understands",
                        self.name
                    ));
                }
                k += 1;
            }
            i += if takes_next { 2 } else { 1 };
        }
        let operands = i.min(args.len());
        match self.operand {
            Operand::Script => {
                if program_file {
                    Reading::Script
                } else if args.get(operands).is_none_or(|a| a == "-") {
                    Reading::Code(format!(
                        "`{}` without a script file reads code from standard input",
                        self.name
                    ))
                } else {
                    Reading::Script
                }
            }
            Operand::ProgramText => {
                if program_file {
                    Reading::Script
                } else {
                    Reading::Code(format!("`{}` program text on the command line", self.name))
                }
            }
            Operand::Command { skip, default } => {
                if self.exec_switch.is_some() && !exec_switch && operands < args.len() {
                    return Reading::Code(format!(
                        "`{}` runs its command through `sh -c` (use -{})",
                        self.name,
                        self.exec_switch.map_or('x', |(c, _)| c)
                    ));
                }
                let at = operands + skip;
                if let Some(word) = args.get(at).filter(|w| w.starts_with('-')) {
                    let opt = word.trim_start_matches('-');
                    if self.long_code.contains(&opt)
                        || (opt.chars().count() == 1 && opt.chars().all(|c| self.code.contains(c)))
                    {
                        return Reading::Code(format!("`{}` {word}", self.name));
                    }
                    return Reading::Refused(format!(
                        "`{}`: an option ({word}) where the program should be",
                        self.name
                    ));
                }
                if at < args.len() {
                    Reading::Program(at)
                } else if let Some(d) = default {
                    Reading::Default(d)
                } else {
                    Reading::Nothing
                }
            }
            Operand::Assignments => {
                let mut at = operands;
                while let Some((name, _)) = args.get(at).and_then(|a| a.split_once('=')) {
                    if name.is_empty() || crate::policy::is_risky_env_var(name) {
                        return Reading::Refused(format!(
                            "`{}` sets {name}, which changes what runs",
                            self.name
                        ));
                    }
                    at += 1;
                }
                if at < args.len() {
                    Reading::Program(at)
                } else {
                    Reading::Nothing
                }
            }
        }
    }

    fn refusal(&self, option: &str) -> Option<&'static str> {
        self.refused
            .iter()
            .find(|(o, _)| *o == option)
            .map(|(_, why)| *why)
    }
}

/// The programs `find` starts: for each `-exec`, `-execdir`, `-ok` and
/// `-okdir`, the index of its program word and of its terminator (`;` or
/// `+`). `Err` when one has no program or no terminator.
pub(crate) fn find_programs(args: &[String]) -> Result<Vec<(usize, usize)>, String> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let Some(end) = (start..args.len()).find(|&j| args[j] == ";" || args[j] == "+") else {
                return Err(format!("`find {}` without `;` or `+`", args[i]));
            };
            if end == start {
                return Err(format!("`find {}` without a program", args[i]));
            }
            found.push((start, end));
            i = end;
        }
        i += 1;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn read(name: &str, line: &str) -> Reading {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        match classify(name) {
            Kind::Launcher(g) | Kind::Interpreter(g) => g.read(&args),
            other => panic!("{name}: {other:?}"),
        }
    }

    // threat model: H10
    #[test]
    fn launchers_find_their_program() {
        assert_eq!(read("env", "bash -c id"), Reading::Program(0));
        assert_eq!(read("env", "-i -u HOME A=1 B=2 rm x"), Reading::Program(5));
        assert!(matches!(
            read("env", "LD_PRELOAD=/x.so ls"),
            Reading::Refused(_)
        ));
        assert!(matches!(read("env", "PATH=./bin ls"), Reading::Refused(_)));
        assert!(matches!(read("env", "-S rm"), Reading::Refused(_)));
        assert!(matches!(
            read("env", "--chdir=/tmp ./rm"),
            Reading::Refused(_)
        ));
        assert_eq!(read("env", "-i"), Reading::Nothing);
        assert_eq!(read("nice", "-n 5 rm"), Reading::Program(2));
        assert_eq!(read("nice", "-10 rm"), Reading::Program(1));
        assert_eq!(read("nice", "--adjustment=3 rm"), Reading::Program(1));
        assert_eq!(read("timeout", "-s KILL 5 rm x"), Reading::Program(3));
        assert_eq!(read("timeout", "--kill-after=1 5 rm"), Reading::Program(2));
        assert_eq!(read("nohup", "rm x"), Reading::Program(0));
        assert_eq!(read("setsid", "-f rm"), Reading::Program(1));
        assert_eq!(read("stdbuf", "-oL -e 0 rm"), Reading::Program(3));
        assert_eq!(read("ionice", "-c 3 rm"), Reading::Program(2));
        assert!(matches!(read("ionice", "-p 1"), Reading::Refused(_)));
        assert_eq!(read("chrt", "-f 10 rm"), Reading::Program(2));
        assert_eq!(read("taskset", "-c 0 rm"), Reading::Program(2));
        assert_eq!(read("flock", "-n /tmp/l rm x"), Reading::Program(2));
        assert!(matches!(read("flock", "/tmp/l -c id"), Reading::Code(_)));
        assert!(matches!(read("flock", "-c id /tmp/l"), Reading::Code(_)));
        assert_eq!(read("time", "-f %e rm"), Reading::Program(2));
        assert_eq!(read("xargs", "-0 -n 1 rm"), Reading::Program(3));
        assert_eq!(read("xargs", "-r"), Reading::Default("echo"));
        assert_eq!(read("xargs", "-i rm {}"), Reading::Program(1));
        assert_eq!(
            read("xargs", "-I {} --max-lines rm {}"),
            Reading::Program(3)
        );
        assert!(matches!(read("watch", "-n 1 rm x"), Reading::Code(_)));
        assert_eq!(read("watch", "-x -n 1 rm x"), Reading::Program(3));
        assert!(matches!(
            read("timeout", "--bogus 5 rm"),
            Reading::Refused(_)
        ));
    }

    // threat model: H10
    #[test]
    fn interpreters_refuse_code_but_run_scripts() {
        for (name, line) in [
            ("python3", "-c print(1)"),
            ("python3.12", "-Bc x"),
            ("python3", ""),
            ("python3", "-"),
            ("python3", "-u"),
            ("perl", "-e 1"),
            ("perl", "-lane print"),
            ("perl", "-E say"),
            ("perl", "-de 0"),
            ("perl", "-Ce 1"),
            ("perl", "-0777 -ne print"),
            ("ruby", "-e 1"),
            ("node", "-e 1"),
            ("node", "--eval=1"),
            ("node", "-p 1"),
            ("bash", "-c id"),
            ("sh", "-ec id"),
            ("sh", "-s"),
            ("bash", ""),
            ("dash", "-x"),
            ("php", "-r 1"),
            ("lua5.4", "-e x"),
            ("awk", "BEGIN{system(\"id\")}"),
            ("gawk", "-v x=1 {print}"),
            ("gawk", "--source=x"),
            ("expect", "-c spawn"),
            ("Rscript", "-e 1"),
        ] {
            assert!(
                matches!(read(name, line), Reading::Code(_)),
                "{name} {line}"
            );
        }
        for (name, line) in [
            ("python3", "script.py -c x"),
            ("python3", "-u -W ignore script.py"),
            ("python3", "-m venv .venv"),
            ("perl", "-I lib -w script.pl -e"),
            ("perl", "-Ilib script.pl"),
            ("perl", "-pi.bak script.pl"),
            ("perl", "-d:Trace script.pl"),
            ("python3", "-m http.server -c"),
            ("bash", "-e script.sh -c"),
            ("bash", "-o pipefail script.sh"),
            ("node", "--require=x.js app.js"),
            ("awk", "-f prog.awk data"),
            ("php", "-f x.php"),
        ] {
            assert_eq!(read(name, line), Reading::Script, "{name} {line}");
        }
        assert!(matches!(
            read("python3", "--bogus x.py"),
            Reading::Refused(_)
        ));
        assert!(matches!(read("bash", "--rcfile"), Reading::Code(_)));
    }

    // threat model: H10
    #[test]
    fn find_programs_and_refusals() {
        let args = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            find_programs(&args(". -name x -exec rm {} ; -execdir echo {} +")).unwrap(),
            [(4, 6), (8, 10)]
        );
        assert!(find_programs(&args(". -exec rm {}")).is_err());
        assert!(find_programs(&args(". -exec ;")).is_err());
        for name in ["sudo", "doas", "chroot", "script", "su", "unshare"] {
            assert!(matches!(classify(name), Kind::Refused(_)), "{name}");
        }
        assert!(matches!(classify("busybox"), Kind::MultiCall));
        assert!(matches!(classify("ls"), Kind::Plain));
        assert!(matches!(classify("python"), Kind::Interpreter(_)));
        assert!(matches!(classify("pythonx"), Kind::Plain));
    }
}
