//! Command policy (F-EXE-7): allow and deny lists of programs. Under a policy
//! a command is one program with arguments, run without a shell: shell syntax
//! is refused, the program is resolved to a file (not matched by base name
//! alone), and risky variables supplied with the request are dropped.

use std::path::{Path, PathBuf};

use skills_core::{WorkspaceError, WorkspaceErrorKind};

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
/// only listed programs run; with a deny list, listed programs never run; with
/// either, commands run without a shell (see [`parse_command`]).
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

    /// Checks `command` (run in the host folder `cwd`) against the policy.
    pub(crate) fn check(&self, command: &str, cwd: &Path) -> Result<Resolved, WorkspaceError> {
        let parsed = parse_command(command)?;
        let Some(program) = self.resolve(&parsed.program, cwd) else {
            return Err(refused(
                command,
                format!("program `{}` not found", parsed.program),
            ));
        };
        let base = program.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let denied = self.denied.iter().any(|d| {
            let d_base = d.rsplit('/').next().unwrap_or(d);
            d_base == base
                || d_base == parsed.program
                || self.resolve(d, Path::new("/")).as_deref() == Some(program.as_path())
        });
        if denied {
            return Err(refused(command, format!("`{}` is denied", parsed.program)));
        }
        if !self.allowed.is_empty()
            && !self
                .allowed
                .iter()
                .any(|a| self.resolve(a, Path::new("/")).as_deref() == Some(program.as_path()))
        {
            return Err(refused(
                command,
                format!(
                    "`{}` ({}) is not an allowed program (allowed: {})",
                    parsed.program,
                    program.display(),
                    self.allowed.join(", ")
                ),
            ));
        }
        Ok(Resolved {
            program,
            args: parsed.args,
        })
    }
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
