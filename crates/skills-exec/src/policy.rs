//! Command policy (F-EXE-7): allow and deny lists of programs. Under a policy
//! a command is one program with arguments, run without a shell: shell syntax
//! is refused, the program is resolved to a file (not matched by base name
//! alone), the programs it starts through launchers and `#!` lines are
//! checked too (threat model H10, see [`crate::launchers`]), and risky
//! variables supplied with the request are dropped.

use std::path::{Path, PathBuf};

use skills_workspace::{WorkspaceError, WorkspaceErrorKind};

use crate::launchers::{Kind, Reading, classify, find_programs};

/// The variable holding allowed programs (comma or space separated).
pub const ENV_ALLOWED_COMMANDS: &str = "SKILLS_RUN_ALLOWED_COMMANDS";
/// The variable holding denied programs (comma or space separated).
pub const ENV_DENIED_COMMANDS: &str = "SKILLS_RUN_DENIED_COMMANDS";

/// Variables a request may not set under a policy (exact names); names
/// starting with `LD_`, `DYLD_` or `BASH_FUNC_` are dropped too.
pub const RISKY_ENV_VARS: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "PROMPT_COMMAND",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "RUBYLIB",
    "NODE_OPTIONS",
    "NODE_PATH",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "GIT_SSH_COMMAND",
    "GIT_EXEC_PATH",
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "EDITOR",
    "VISUAL",
];

/// `true` for variables a request may not set under a policy.
pub fn is_risky_env_var(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    RISKY_ENV_VARS.contains(&upper.as_str())
        || ["LD_", "DYLD_", "BASH_FUNC_"]
            .iter()
            .any(|p| upper.starts_with(p))
}

/// A command split into a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParsedCommand {
    /// The program as written.
    pub program: String,
    /// The arguments, quotes removed.
    pub args: Vec<String>,
}

fn refused(command: &str, why: impl std::fmt::Display) -> WorkspaceError {
    WorkspaceError::new(
        WorkspaceErrorKind::PolicyDenied,
        format!("command {command:?} refused by the command policy: {why}"),
    )
}

/// Splits a policy-mode command into words: spaces and tabs separate words;
/// `'…'` quotes literally; `"…"` quotes without expansions. Refused (with
/// [`WorkspaceErrorKind::PolicyDenied`]): newlines and control characters,
/// `; | & < > ( ) $ \` \ * ? [ ] { } ~ # !` outside single quotes (and `$`,
/// `` ` ``, `\` inside double quotes), an unterminated quote, a leading
/// `NAME=value` assignment, an empty command.
pub fn parse_command(command: &str) -> Result<ParsedCommand, WorkspaceError> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) if c.is_control() => {
                            return Err(refused(command, "control character"));
                        }
                        Some(c) => word.push(c),
                        None => return Err(refused(command, "unterminated quote")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some(c @ ('$' | '`' | '\\')) => {
                            return Err(refused(
                                command,
                                format!("shell syntax `{c}` is not allowed"),
                            ));
                        }
                        Some(c) if c.is_control() => {
                            return Err(refused(command, "control character"));
                        }
                        Some(c) => word.push(c),
                        None => return Err(refused(command, "unterminated quote")),
                    }
                }
            }
            '\n' | '\r' => return Err(refused(command, "more than one line")),
            c if c.is_control() => return Err(refused(command, "control character")),
            ';' | '|' | '&' | '<' | '>' | '(' | ')' | '$' | '`' | '\\' | '*' | '?' | '[' | ']'
            | '{' | '}' | '~' | '#' | '!' => {
                return Err(refused(
                    command,
                    format!("shell syntax `{c}` is not allowed (one program, no shell)"),
                ));
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    let mut words = words.into_iter();
    let Some(program) = words.next() else {
        return Err(refused(command, "empty command"));
    };
    if program.is_empty() {
        return Err(refused(command, "empty program name"));
    }
    if program.contains('=') {
        return Err(refused(
            command,
            "variable assignments before the program are not allowed",
        ));
    }
    Ok(ParsedCommand {
        program,
        args: words.collect(),
    })
}

/// Which programs runs may start.
///
/// Unrestricted by default (commands run with `bash -c`). With an allow list,
/// only listed programs are started by the command; with a deny list, listed
/// programs are never started by it; with either, commands run without a
/// shell (see [`parse_command`]).
///
/// "Started by the command" covers the command's program, the programs the
/// known launchers start (`env`, `xargs`, `nice`, `timeout`, `nohup`,
/// `setsid`, `stdbuf`, `ionice`, `chrt`, `taskset`, `flock`, `time`,
/// `watch -x`, `find -exec`, `busybox` applets), and the interpreter named
/// by a script's `#!` line; every one of them must pass. Code given to an
/// interpreter on its command line or standard input (`python3 -c`,
/// `perl -e`, `node -e`, `bash -c`, an `awk` program, a shell without a
/// script) is refused, and so are programs that change user, root or
/// namespaces (`sudo`, `doas`, `su`, `chroot`, `unshare`, `script`, …).
/// What the policy does not cover: what an allowed program does once it
/// runs (a script file can start anything; `tar`, `git`, `make`, `sed`,
/// editors and pagers can start programs), which is why an allow list of
/// programs that start nothing else is the only strict setting.
///
/// Entries are program names (`python3`, looked up on the runtime's own
/// search path, never the request's) or absolute paths. A command's program is
/// resolved to a file the same way (a name on the search path, a path with a
/// `/` relative to the working folder) and matches an entry only when both
/// resolve to the same file, so a `./python3` in the skill does not pass for
/// an allowed `python3`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandPolicy {
    allowed: Vec<String>,
    denied: Vec<String>,
    search_path: Option<String>,
}

/// A command that passed the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
}

const DEFAULT_SEARCH_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

impl CommandPolicy {
    /// No restriction.
    pub fn unrestricted() -> Self {
        Self::default()
    }

    /// Reads [`ENV_ALLOWED_COMMANDS`] and [`ENV_DENIED_COMMANDS`].
    pub fn from_env() -> Self {
        let list = |var: &str| -> Vec<String> {
            std::env::var(var)
                .map(|v| {
                    v.split([',', ' ', '\t', '\n'])
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        Self {
            allowed: list(ENV_ALLOWED_COMMANDS),
            denied: list(ENV_DENIED_COMMANDS),
            search_path: None,
        }
    }

    /// Adds allowed programs.
    #[must_use]
    pub fn allow<I, S>(mut self, programs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed.extend(programs.into_iter().map(Into::into));
        self
    }

    /// Adds denied programs.
    #[must_use]
    pub fn deny<I, S>(mut self, programs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.denied.extend(programs.into_iter().map(Into::into));
        self
    }

    /// Sets the search path programs are resolved on (default
    /// `/usr/local/bin:/usr/bin:/bin`).
    #[must_use]
    pub fn search_path(mut self, path: impl Into<String>) -> Self {
        self.search_path = Some(path.into());
        self
    }

    /// `true` when an allow or deny list is set (commands run without a shell).
    pub fn is_restricted(&self) -> bool {
        !self.allowed.is_empty() || !self.denied.is_empty()
    }

    /// The allowed programs.
    pub fn allowed(&self) -> &[String] {
        &self.allowed
    }

    /// The denied programs.
    pub fn denied(&self) -> &[String] {
        &self.denied
    }

    fn path(&self) -> &str {
        self.search_path.as_deref().unwrap_or(DEFAULT_SEARCH_PATH)
    }

    /// Resolves a program name or path to a canonical file.
    fn resolve(&self, program: &str, cwd: &Path) -> Option<PathBuf> {
        let candidate = if program.contains('/') {
            let p = Path::new(program);
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                cwd.join(p)
            }
        } else {
            self.path()
                .split(':')
                .filter(|d| d.starts_with('/'))
                .map(|d| Path::new(d).join(program))
                .find(|p| is_executable(p))?
        };
        let canonical = candidate.canonicalize().ok()?;
        is_executable(&canonical).then_some(canonical)
    }

    /// Checks `command` (run in the host folder `cwd`) against the policy,
    /// following launchers to the programs they start (threat model H10):
    /// every program of the chain must pass, and every one after the first
    /// is replaced by its absolute path, so a launcher's own search path
    /// cannot pick another file.
    pub(crate) fn check(&self, command: &str, cwd: &Path) -> Result<Resolved, WorkspaceError> {
        let parsed = parse_command(command)?;
        let mut words = Vec::with_capacity(parsed.args.len() + 1);
        words.push(parsed.program);
        words.extend(parsed.args);
        let program = self.check_chain(command, &mut words, cwd, 0)?;
        words.remove(0);
        Ok(Resolved {
            program,
            args: words,
        })
    }

    /// Checks the program `words[0]` and what it starts; returns its path.
    fn check_chain(
        &self,
        command: &str,
        words: &mut [String],
        cwd: &Path,
        depth: usize,
    ) -> Result<PathBuf, WorkspaceError> {
        if depth > MAX_CHAIN {
            return Err(refused(
                command,
                format!("more than {MAX_CHAIN} programs starting each other"),
            ));
        }
        let Some(typed) = words.first().cloned() else {
            return Err(refused(command, "a launcher without a program"));
        };
        let Some(program) = self.resolve(&typed, cwd) else {
            return Err(refused(command, format!("program `{typed}` not found")));
        };
        self.check_program(command, &typed, &program)?;
        // A script run directly starts the interpreter of its `#!` line:
        // that program must pass too.
        match shebang(&program) {
            Ok(Some(mut line)) => {
                self.check_chain(command, &mut line, cwd, depth + 1)?;
            }
            Ok(None) => {}
            Err(why) => return Err(refused(command, format!("`{typed}`: {why}"))),
        }
        if depth > 0 {
            let Some(path) = program.to_str() else {
                return Err(refused(
                    command,
                    format!("`{typed}` has a path that is not UTF-8"),
                ));
            };
            words[0] = path.to_owned();
        }
        let name = program.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let kind = match classify(name) {
            Kind::Plain => classify(typed.rsplit('/').next().unwrap_or(&typed)),
            kind => kind,
        };
        let code = |why: String| {
            refused(
                command,
                format!("{why}: code the command policy cannot see (run a script file instead)"),
            )
        };
        match kind {
            Kind::Plain => {}
            Kind::Refused(why) => {
                return Err(refused(command, format!("`{typed}` is refused: {why}")));
            }
            Kind::Launcher(grammar) | Kind::Interpreter(grammar) => {
                match grammar.read(&words[1..]) {
                    Reading::Nothing | Reading::Script => {}
                    Reading::Program(i) => {
                        self.check_chain(command, &mut words[1 + i..], cwd, depth + 1)?;
                    }
                    Reading::Default(name) => {
                        let Some(p) = self.resolve(name, Path::new("/")) else {
                            return Err(refused(command, format!("program `{name}` not found")));
                        };
                        self.check_program(command, name, &p)?;
                    }
                    Reading::Code(why) => return Err(code(why)),
                    Reading::Refused(why) => return Err(refused(command, why)),
                }
            }
            Kind::Find => {
                let started = find_programs(&words[1..]).map_err(|why| refused(command, why))?;
                for (start, end) in started {
                    self.check_chain(command, &mut words[1 + start..1 + end], cwd, depth + 1)?;
                }
            }
            Kind::MultiCall => {
                if let Some(applet) = words.get(1).cloned() {
                    self.check_applet(command, &typed, &applet)?;
                }
            }
        }
        Ok(program)
    }

    /// Checks one program (`typed` as written, resolved to `program`)
    /// against the lists.
    fn check_program(
        &self,
        command: &str,
        typed: &str,
        program: &Path,
    ) -> Result<(), WorkspaceError> {
        let base = program.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let typed_base = typed.rsplit('/').next().unwrap_or(typed);
        let denied = self.denied.iter().any(|d| {
            let d_base = d.rsplit('/').next().unwrap_or(d);
            d_base == base
                || d_base == typed_base
                || self.resolve(d, Path::new("/")).as_deref() == Some(program)
        });
        if denied {
            return Err(refused(command, format!("`{typed}` is denied")));
        }
        if !self.allowed.is_empty()
            && !self
                .allowed
                .iter()
                .any(|a| self.resolve(a, Path::new("/")).as_deref() == Some(program))
        {
            return Err(refused(
                command,
                format!(
                    "`{typed}` ({}) is not an allowed program (allowed: {})",
                    program.display(),
                    self.allowed.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// Checks the program a multi-call binary acts as (`busybox rm`): by
    /// name against the lists; one that starts other programs is refused.
    fn check_applet(&self, command: &str, multi: &str, applet: &str) -> Result<(), WorkspaceError> {
        if applet.starts_with('-') {
            return Ok(());
        }
        let named = |list: &[String]| {
            list.iter()
                .any(|e| e.rsplit('/').next().unwrap_or(e) == applet)
        };
        if named(&self.denied) {
            return Err(refused(
                command,
                format!("`{multi} {applet}`: `{applet}` is denied"),
            ));
        }
        if !self.allowed.is_empty() && !named(&self.allowed) {
            return Err(refused(
                command,
                format!("`{multi} {applet}`: `{applet}` is not an allowed program"),
            ));
        }
        match classify(applet) {
            Kind::Plain => Ok(()),
            _ => Err(refused(
                command,
                format!(
                    "`{multi} {applet}` starts other programs or runs code; not read under a command policy"
                ),
            )),
        }
    }
}

/// Most programs one command may chain through launchers.
const MAX_CHAIN: usize = 8;
/// Most bytes read of a program file to find its `#!` line (the kernel
/// reads 256).
const SHEBANG_BYTES: u64 = 256;

/// The `#!` line of the program file `program` as the kernel runs it:
/// the interpreter, its one optional argument, the script. `Ok(None)` when
/// the file has none (or cannot be read as a regular file: then the kernel
/// cannot run it either).
fn shebang(program: &Path) -> Result<Option<Vec<String>>, String> {
    use std::io::Read;
    let Ok((file, _)) = crate::fsutil::open_regular(program) else {
        return Ok(None);
    };
    let mut head = Vec::new();
    if file.take(SHEBANG_BYTES).read_to_end(&mut head).is_err() {
        return Ok(None);
    }
    let Some(line) = head.strip_prefix(b"#!") else {
        return Ok(None);
    };
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let Some(line) = std::str::from_utf8(line).ok().map(str::trim) else {
        return Err("its #! line is not UTF-8".to_owned());
    };
    let (interpreter, arg) = match line.split_once([' ', '\t']) {
        Some((i, a)) => (i, a.trim()),
        None => (line, ""),
    };
    if interpreter.is_empty() {
        return Err("its #! line names no interpreter".to_owned());
    }
    let mut words = vec![interpreter.to_owned()];
    if !arg.is_empty() {
        words.push(arg.to_owned());
    }
    let Some(script) = program.to_str() else {
        return Err("its path is not UTF-8".to_owned());
    };
    words.push(script.to_owned());
    Ok(Some(words))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn splits_words_and_quotes() {
        let p = parse_command(r#"python3 'a b' "c d" e"#).unwrap();
        assert_eq!(p.program, "python3");
        assert_eq!(p.args, ["a b", "c d", "e"]);
        assert_eq!(parse_command("echo ''").unwrap().args, [""]);
    }

    #[test]
    fn refuses_shell_syntax() {
        for bad in [
            "ls; rm -rf /",
            "ls | sh",
            "ls && x",
            "echo $(id)",
            "echo `id`",
            "ls\nid",
            "PATH=./bin ls",
            "LD_PRELOAD=/x.so ls",
            "echo \"$HOME\"",
            "cat < /etc/passwd",
            "ls > x",
            "ls *",
            "echo 'unterminated",
            "",
            "   ",
        ] {
            let err = parse_command(bad).unwrap_err();
            assert_eq!(err.kind(), WorkspaceErrorKind::PolicyDenied, "{bad}");
        }
    }

    #[test]
    fn risky_names() {
        for v in [
            "PATH",
            "ld_preload",
            "LD_LIBRARY_PATH",
            "DYLD_INSERT_LIBRARIES",
            "BASH_ENV",
            "IFS",
            "BASH_FUNC_x%%",
        ] {
            assert!(is_risky_env_var(v), "{v}");
        }
        assert!(!is_risky_env_var("LANG"));
    }

    // threat model: H10
    #[test]
    fn allow_lists_cover_every_program_of_a_chain() {
        let root = Path::new("/");
        let p = CommandPolicy::unrestricted().allow(["env", "echo", "xargs"]);
        let ok = p.check("env -i echo hi", root).unwrap();
        // The launched program is named by its absolute path.
        assert!(ok.args[1].starts_with('/'), "{:?}", ok.args);
        assert!(ok.args[1].ends_with("/echo"), "{:?}", ok.args);
        assert!(p.check("env cat x", root).is_err());
        assert!(p.check("xargs", root).is_ok(), "xargs runs echo, allowed");
        assert!(p.check("xargs cat", root).is_err());
        let only_xargs = CommandPolicy::unrestricted().allow(["xargs"]);
        assert!(
            only_xargs.check("xargs", root).is_err(),
            "echo is not allowed"
        );
        let deep = format!("{}echo x", "env ".repeat(MAX_CHAIN + 2));
        let e = CommandPolicy::unrestricted()
            .deny(["rm"])
            .check(&deep, root)
            .unwrap_err();
        assert!(e.message().contains("more than"), "{e}");
    }

    #[test]
    fn resolves_programs() {
        let policy = CommandPolicy::unrestricted().allow(["echo"]);
        assert!(policy.is_restricted());
        let ok = policy.check("echo hi", Path::new("/")).unwrap();
        assert!(ok.program.is_absolute());
        assert_eq!(ok.args, ["hi"]);
        assert!(policy.check("cat /etc/passwd", Path::new("/")).is_err());
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("echo");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = policy.check("./echo hi", dir.path()).unwrap_err();
        assert_eq!(err.kind(), WorkspaceErrorKind::PolicyDenied);
        let deny = CommandPolicy::unrestricted().deny(["rm"]);
        assert!(deny.check("rm -rf x", Path::new("/")).is_err());
        assert!(deny.check("/bin/rm x", Path::new("/")).is_err());
        assert!(deny.check("ls", Path::new("/")).is_ok());
    }
}
