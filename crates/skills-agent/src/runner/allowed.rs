//! The entries of `allowed-tools` as patterns matched against tool calls
//! (F-AGT-7), in Claude Code's syntax:
//!
//! - `Tool` and `Tool(*)`: every call of `Tool`;
//! - `Tool(prefix:*)`: calls whose matched argument is `prefix` or starts
//!   with `prefix` and a space (`Bash(git:*)` allows `git status`, not
//!   `gitx`);
//! - `Tool(text *)`: the same with the space written out (`Bash(git *)`);
//! - `Tool(a * b)`: `*` stands for any text (a glob over the argument);
//! - `Tool(exact arg)`: calls whose matched argument is exactly that.
//!
//! The matched argument of a call is one string argument of the tool
//! (`command` unless [`RunnerBuilder::policy_argument`] names another); a
//! call without it matches only `Tool` and `Tool(*)`. An argument holding a
//! shell operator that chains or substitutes commands (`;`, `&`, `|`, a
//! backquote, `$(`, a redirection, a line break) matches only `Tool` and
//! `Tool(*)`: `Bash(git:*)` does not pre-approve `git status && rm -rf /`.
//!
//! [`RunnerBuilder::policy_argument`]: super::RunnerBuilder::policy_argument

use std::fmt;

use serde_json::Value;

/// One parsed entry of `allowed-tools`: a tool name and what its matched
/// argument must look like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPattern {
    tool: String,
    rule: Rule,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Rule {
    /// `Tool` or `Tool(*)`.
    Any,
    /// `Tool(prefix:*)` or `Tool(prefix *)`: the prefix alone, or followed
    /// by a space and anything.
    Words(String),
    /// `Tool(a*b)`: pieces matched in order, `*` between them.
    Glob(Vec<String>),
    /// `Tool(arg)`.
    Exact(String),
}

/// Characters and sequences that chain, substitute or redirect shell
/// commands.
const SHELL_OPERATORS: &[&str] = &[";", "&", "|", "`", "$(", "<", ">", "\n", "\r"];

impl ToolPattern {
    /// Parses one entry; `None` for an entry that is not `Tool` or
    /// `Tool(…)` (an empty name, unbalanced parentheses, text after `)`).
    pub fn parse(entry: &str) -> Option<Self> {
        let entry = entry.trim();
        let (tool, rule) = match entry.split_once('(') {
            None => (entry, Rule::Any),
            Some((tool, rest)) => {
                let inner = rest.strip_suffix(')')?;
                (tool.trim_end(), Self::rule(inner.trim()))
            }
        };
        let valid =
            !tool.is_empty() && !tool.contains([')', '(']) && !tool.contains(char::is_whitespace);
        valid.then(|| Self {
            tool: tool.to_owned(),
            rule,
        })
    }

    fn rule(inner: &str) -> Rule {
        if inner.is_empty() || inner == "*" {
            return Rule::Any;
        }
        if let Some(prefix) = inner
            .strip_suffix(":*")
            .or_else(|| inner.strip_suffix(" *"))
            && !prefix.contains('*')
        {
            return Rule::Words(prefix.trim_end().to_owned());
        }
        if inner.contains('*') {
            return Rule::Glob(inner.split('*').map(str::to_owned).collect());
        }
        Rule::Exact(inner.to_owned())
    }

    /// The tool the pattern names.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// Whether the pattern allows every call of its tool (`Tool`, `Tool(*)`).
    pub fn allows_any(&self) -> bool {
        self.rule == Rule::Any
    }

    /// Whether the pattern allows a call whose matched argument is
    /// `argument` (`None` when the call has no such string argument). The
    /// tool name is not compared here.
    pub fn matches_argument(&self, argument: Option<&str>) -> bool {
        if self.rule == Rule::Any {
            return true;
        }
        let Some(arg) = argument else {
            return false;
        };
        if SHELL_OPERATORS.iter().any(|op| arg.contains(op)) {
            return false;
        }
        let arg = arg.trim();
        match &self.rule {
            Rule::Any => true,
            Rule::Exact(exact) => arg == exact,
            Rule::Words(prefix) => {
                arg == prefix
                    || arg
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(' '))
            }
            Rule::Glob(pieces) => glob(pieces, arg),
        }
    }
}

impl fmt::Display for ToolPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rule {
            Rule::Any => write!(f, "{}", self.tool),
            Rule::Words(prefix) => write!(f, "{}({prefix}:*)", self.tool),
            Rule::Glob(pieces) => write!(f, "{}({})", self.tool, pieces.join("*")),
            Rule::Exact(arg) => write!(f, "{}({arg})", self.tool),
        }
    }
}

/// Whether `text` is the pieces in order with anything between them (the
/// first piece at the start, the last at the end).
fn glob(pieces: &[String], text: &str) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return text.is_empty();
    };
    let Some(mut left) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for piece in middle {
        match left.find(piece.as_str()) {
            Some(at) => left = &left[at + piece.len()..],
            None => return false,
        }
    }
    left.len() >= last.len() && left.ends_with(last.as_str())
}

/// The string argument `name` of a call's arguments (an object, or a JSON
/// text of one as some providers send).
pub(crate) fn string_argument(arguments: &Value, name: &str) -> Option<String> {
    match arguments {
        Value::Object(map) => map.get(name)?.as_str().map(str::to_owned),
        Value::String(raw) => serde_json::from_str::<Value>(raw)
            .ok()?
            .get(name)?
            .as_str()
            .map(str::to_owned),
        _ => None,
    }
}

/// How long a loaded skill's `allowed-tools` grant lasts (F-AGT-7).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrantLifetime {
    /// As long as the skill is loaded (the default).
    #[default]
    Load,
    /// Until the next user message, as in Claude Code: only skills loaded
    /// during the current run (the turn of the latest user message) grant
    /// tools; a skill still loaded from an earlier turn does not.
    Turn,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(entry: &str) -> ToolPattern {
        ToolPattern::parse(entry).expect("pattern")
    }

    #[test]
    fn parses_the_claude_code_forms() {
        assert!(p("Bash").allows_any());
        assert!(p("Bash(*)").allows_any());
        assert!(p("Bash()").allows_any());
        assert_eq!(p("Bash(git:*)").to_string(), "Bash(git:*)");
        assert_eq!(p("Bash(git diff *)").to_string(), "Bash(git diff:*)");
        assert_eq!(p("Bash(npm run test)").to_string(), "Bash(npm run test)");
        assert_eq!(
            p("mcp__linear__create_issue").tool(),
            "mcp__linear__create_issue"
        );
        for bad in ["", "(git)", "Bash(git", "Bash(git)x", "Ba sh", "Bash)("] {
            assert_eq!(ToolPattern::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_prefix_pattern_allows_the_command_and_its_arguments_only() {
        let git = p("Bash(git:*)");
        assert!(git.matches_argument(Some("git")));
        assert!(git.matches_argument(Some("git status")));
        assert!(git.matches_argument(Some("  git log --oneline ")));
        assert!(!git.matches_argument(Some("gitx")));
        assert!(!git.matches_argument(Some("rm -rf /")));
        assert!(!git.matches_argument(Some("git status && rm -rf /")));
        assert!(!git.matches_argument(Some("git log; rm -rf /")));
        assert!(!git.matches_argument(Some("git $(rm -rf /)")));
        assert!(!git.matches_argument(Some("git log > /etc/passwd")));
        assert!(!git.matches_argument(None));
        let diff = p("Bash(git diff *)");
        assert!(diff.matches_argument(Some("git diff HEAD")));
        assert!(!diff.matches_argument(Some("git status")));
    }

    #[test]
    fn exact_and_glob_patterns() {
        let exact = p("Bash(npm run test)");
        assert!(exact.matches_argument(Some("npm run test")));
        assert!(!exact.matches_argument(Some("npm run test --all")));
        let glob = p("Bash(git * main)");
        assert!(glob.matches_argument(Some("git push origin main")));
        assert!(!glob.matches_argument(Some("git push origin dev")));
        let ls = p("Bash(ls*)");
        assert!(ls.matches_argument(Some("lsof")));
        assert!(ls.matches_argument(Some("ls -la")));
        assert!(p("Read").matches_argument(None));
        assert!(p("Bash(*)").matches_argument(Some("a; b")));
    }

    #[test]
    fn arguments_come_from_objects_or_json_text() {
        let args = serde_json::json!({"command": "git status", "n": 1});
        assert_eq!(
            string_argument(&args, "command").as_deref(),
            Some("git status")
        );
        assert_eq!(string_argument(&args, "n"), None);
        let text = Value::String(r#"{"command":"ls"}"#.into());
        assert_eq!(string_argument(&text, "command").as_deref(), Some("ls"));
        assert_eq!(string_argument(&Value::Null, "command"), None);
    }

    proptest! {
        /// `Tool(p:*)` allows exactly `p` and `p` + space + operator-free
        /// text; never a longer word.
        #[test]
        fn prefix_patterns_respect_word_boundaries(
            prefix in "[a-z]{1,8}",
            extra in "[a-z]{1,8}",
            args in "[a-z -]{0,20}",
        ) {
            let pattern = p(&format!("Bash({prefix}:*)"));
            prop_assert!(pattern.matches_argument(Some(&prefix)));
            let with_args = format!("{prefix} {args}");
            prop_assert!(pattern.matches_argument(Some(&with_args)));
            let longer = format!("{prefix}{extra}");
            prop_assert!(!pattern.matches_argument(Some(&longer)));
        }

        /// No pattern with an argument allows a text with a shell operator.
        #[test]
        fn chained_commands_never_match_an_argument_pattern(
            prefix in "[a-z]{1,8}",
            op in prop::sample::select(vec![";", "&&", "||", "|", "`", "$(", ">", "<", "\n", "&"]),
            tail in "[a-z ]{0,10}",
        ) {
            let text = format!("{prefix} x{op}{tail}");
            for entry in [format!("Bash({prefix}:*)"), format!("Bash({prefix} *)"), format!("Bash({prefix}*)"), format!("Bash({text})")] {
                prop_assert!(!p(&entry).matches_argument(Some(&text)), "{entry}");
            }
        }

        /// A pattern without `*` allows exactly its own text.
        #[test]
        fn exact_patterns_allow_only_their_text(a in "[a-z]{1,6}( [a-z]{1,6}){0,2}", b in "[a-z ]{1,12}") {
            let pattern = p(&format!("Bash({a})"));
            prop_assert!(pattern.matches_argument(Some(&a)));
            prop_assert_eq!(pattern.matches_argument(Some(&b)), a == b.trim());
        }

        /// Display parses back to the same pattern.
        #[test]
        fn display_round_trips(tool in "[A-Za-z_]{1,8}", inner in "[a-z :*]{0,12}") {
            let entry = format!("{tool}({inner})");
            if let Some(pattern) = ToolPattern::parse(&entry) {
                prop_assert_eq!(ToolPattern::parse(&pattern.to_string()), Some(pattern));
            }
        }
    }
}
