//! `evals/evals.json`: a skill's output eval cases and their assertions.
//!
//! The file follows the agentskills.io / skill-creator convention
//! (`skill_name`, `evals[]` with `id`, `prompt`, `expected_output`, `files`)
//! and reads both names the convention has used for the checks,
//! `assertions` and `expectations`. A check written as a plain string is a
//! statement for a grader model (checked only when one is given); a check
//! written as an object is checked by the runner itself:
//!
//! | `type` | fields | passes when |
//! | --- | --- | --- |
//! | `contains` | `value`, optional `file`, `ignore_case` | the answer (or the workspace file) contains `value` |
//! | `not_contains` | `value`, optional `file`, `ignore_case` | it does not |
//! | `regex` | `pattern`, optional `file` | the pattern matches somewhere |
//! | `file_exists` | `path` | the workspace has that regular file |
//! | `json_path` | `path`, optional `file`, `equals` | the JSON (the answer, or the file) has a value there (equal to `equals` when given) |
//! | `script` | `command` | the command, run in the skill's folder in the workspace with the answer on standard input, exits 0 |
//! | `llm` | `text` | the grader model says so (same as a plain string) |

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::error::{EvalError, EvalErrorKind};
use crate::jsonpath::JsonPath;

/// Most cases one file may hold.
pub const MAX_CASES: usize = 1_000;
/// Most checks per case.
pub const MAX_ASSERTIONS: usize = 100;
/// Longest prompt, in bytes.
pub const MAX_PROMPT_BYTES: usize = 256 * 1024;
/// Largest compiled `regex` pattern, in bytes.
pub const MAX_REGEX_BYTES: usize = 1 << 20;

/// The cases of one skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct EvalSet {
    /// The skill the file is for.
    pub skill_name: String,
    /// Its cases, in file order.
    pub evals: Vec<EvalCase>,
}

/// One case: a prompt, what should come of it, and the checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct EvalCase {
    /// The case's id (a number in most files; kept as text).
    pub id: String,
    /// A readable name, when the file gives one.
    pub name: Option<String>,
    /// What the user says.
    pub prompt: String,
    /// What a good result looks like, for people and the grader.
    pub expected_output: Option<String>,
    /// Input files, relative to the skill's folder; attached to the prompt
    /// (staged into `work/inputs/` of the workspace).
    pub files: Vec<String>,
    /// The checks, in file order.
    pub assertions: Vec<Assertion>,
}

/// One check of a case.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Assertion {
    /// The answer or a workspace file contains `value`.
    Contains {
        /// The text to find.
        value: String,
        /// A workspace file to look in instead of the answer.
        file: Option<String>,
        /// Compare without case.
        ignore_case: bool,
    },
    /// The answer or a workspace file does not contain `value`.
    NotContains {
        /// The text that must not appear.
        value: String,
        /// A workspace file to look in instead of the answer.
        file: Option<String>,
        /// Compare without case.
        ignore_case: bool,
    },
    /// A regular expression matches the answer or a workspace file.
    Regex {
        /// The pattern (Rust `regex` syntax).
        pattern: String,
        /// A workspace file to match instead of the answer.
        file: Option<String>,
        /// The compiled pattern.
        #[serde(skip)]
        compiled: regex::Regex,
    },
    /// The workspace has this regular file (`out/report.md`).
    FileExists {
        /// The workspace path.
        path: String,
    },
    /// The JSON of the answer or a workspace file has a value at `path`.
    JsonPath {
        /// The path (`$.a.b[0]` or a JSON Pointer `/a/b/0`).
        path: String,
        /// A workspace file to read instead of the answer.
        file: Option<String>,
        /// The value it must equal; without one, any value passes.
        equals: Option<Value>,
        /// The parsed path.
        #[serde(skip)]
        parsed: JsonPath,
    },
    /// A command run in the skill's folder in the workspace exits 0.
    Script {
        /// The command (run with `bash -c`, in the runtime's boundary).
        command: String,
    },
    /// A statement a grader model judges.
    Llm {
        /// The statement.
        text: String,
    },
}

impl PartialEq for Assertion {
    fn eq(&self, other: &Self) -> bool {
        serde_json::to_value(self).ok() == serde_json::to_value(other).ok()
    }
}

impl Assertion {
    /// The check as people read it (`contains "Total"`, the statement of an
    /// `llm` check): the `text` of `grading.json`.
    pub fn describe(&self) -> String {
        let within = |file: &Option<String>| match file {
            Some(file) => format!(" in {file}"),
            None => String::new(),
        };
        match self {
            Self::Contains {
                value,
                file,
                ignore_case,
            } => format!(
                "contains {value:?}{}{}",
                within(file),
                if *ignore_case { " (any case)" } else { "" }
            ),
            Self::NotContains {
                value,
                file,
                ignore_case,
            } => format!(
                "does not contain {value:?}{}{}",
                within(file),
                if *ignore_case { " (any case)" } else { "" }
            ),
            Self::Regex { pattern, file, .. } => format!("matches /{pattern}/{}", within(file)),
            Self::FileExists { path } => format!("file {path} exists"),
            Self::JsonPath {
                path, file, equals, ..
            } => match equals {
                Some(v) => format!("JSON {path}{} equals {v}", within(file)),
                None => format!("JSON {path}{} is present", within(file)),
            },
            Self::Script { command } => format!("script `{command}` exits 0"),
            Self::Llm { text } => text.clone(),
        }
    }

    /// Whether only a grader model can check it.
    pub fn needs_grader(&self) -> bool {
        matches!(self, Self::Llm { .. })
    }

    /// Whether it looks at the workspace (and so needs a runtime).
    pub fn needs_workspace(&self) -> bool {
        match self {
            Self::Contains { file, .. }
            | Self::NotContains { file, .. }
            | Self::Regex { file, .. }
            | Self::JsonPath { file, .. } => file.is_some(),
            Self::FileExists { .. } | Self::Script { .. } => true,
            Self::Llm { .. } => false,
        }
    }

    fn parse(value: &Value) -> Result<Self, String> {
        let object = match value {
            Value::String(text) => {
                return if text.trim().is_empty() {
                    Err("an empty statement".to_owned())
                } else {
                    Ok(Self::Llm { text: text.clone() })
                };
            }
            Value::Object(object) => object,
            _ => return Err("a check is a string or an object with a `type`".to_owned()),
        };
        let text = |key: &str| -> Result<String, String> {
            match object.get(key) {
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                _ => Err(format!("needs a non-empty `{key}` string")),
            }
        };
        let optional = |key: &str| -> Result<Option<String>, String> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
                _ => Err(format!("`{key}` must be a non-empty string")),
            }
        };
        let flag = |key: &str| -> Result<bool, String> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                _ => Err(format!("`{key}` must be true or false")),
            }
        };
        let kind = match object.get("type") {
            Some(Value::String(kind)) => kind.as_str(),
            _ => return Err(format!("an object check needs a `type`: {KINDS}")),
        };
        Ok(match kind {
            "contains" => Self::Contains {
                value: text("value")?,
                file: optional("file")?,
                ignore_case: flag("ignore_case")?,
            },
            "not_contains" => Self::NotContains {
                value: text("value")?,
                file: optional("file")?,
                ignore_case: flag("ignore_case")?,
            },
            "regex" => {
                let pattern = text("pattern")?;
                let compiled = regex::RegexBuilder::new(&pattern)
                    .size_limit(MAX_REGEX_BYTES)
                    .build()
                    .map_err(|err| format!("a bad `pattern`: {err}"))?;
                Self::Regex {
                    pattern,
                    file: optional("file")?,
                    compiled,
                }
            }
            "file_exists" => Self::FileExists {
                path: text("path")?,
            },
            "json_path" => {
                let path = text("path")?;
                let parsed = JsonPath::parse(&path)?;
                Self::JsonPath {
                    path,
                    file: optional("file")?,
                    equals: object.get("equals").cloned(),
                    parsed,
                }
            }
            "script" => Self::Script {
                command: text("command")?,
            },
            "llm" => Self::Llm {
                text: text("text")?,
            },
            other => {
                return Err(format!(
                    "unknown check type `{other}`; the types are {KINDS}"
                ));
            }
        })
    }
}

const KINDS: &str = "contains, not_contains, regex, file_exists, json_path, script, llm";

impl EvalSet {
    /// Reads `evals/evals.json` text. Fails, naming the case and the check,
    /// on anything it cannot use; never on unknown extra fields.
    pub fn from_json(text: &str) -> Result<Self, EvalError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|err| input(format!("evals.json is not JSON: {err}")))?;
        let Value::Object(object) = value else {
            return Err(input(
                "evals.json is an object with `skill_name` and `evals`",
            ));
        };
        let skill_name = match object.get("skill_name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(input("evals.json needs a `skill_name` string")),
        };
        let Some(Value::Array(cases)) = object.get("evals") else {
            return Err(input("evals.json needs an `evals` array"));
        };
        if cases.len() > MAX_CASES {
            return Err(input(format!(
                "{} cases; a file holds at most {MAX_CASES}",
                cases.len()
            )));
        }
        let mut ids = BTreeSet::new();
        let mut folders = BTreeSet::new();
        let mut evals = Vec::with_capacity(cases.len());
        for (i, case) in cases.iter().enumerate() {
            let case =
                EvalCase::parse(case).map_err(|why| input(format!("case {}: {why}", i + 1)))?;
            if !ids.insert(case.id.clone()) {
                return Err(input(format!(
                    "case {}: the id {} is used twice",
                    i + 1,
                    case.id
                )));
            }
            if !folders.insert(file_safe(&case.id)) {
                return Err(input(format!(
                    "case {}: the id {} would share its result folder `eval-{}` with another \
                     case (ids keep ASCII letters, digits, `-` and `_`; other characters \
                     become `_`)",
                    i + 1,
                    case.id,
                    file_safe(&case.id)
                )));
            }
            evals.push(case);
        }
        Ok(Self { skill_name, evals })
    }
}

impl EvalCase {
    fn parse(value: &Value) -> Result<Self, String> {
        let Value::Object(object) = value else {
            return Err("not an object".to_owned());
        };
        let id = match object.get("id") {
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err("needs an `id` (a number or a string)".to_owned()),
        };
        let name = match object.get("name").or_else(|| object.get("eval_name")) {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let prompt = match object.get("prompt") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            _ => return Err(format!("{id}: needs a non-empty `prompt`")),
        };
        if prompt.len() > MAX_PROMPT_BYTES {
            return Err(format!("{id}: the prompt is over {MAX_PROMPT_BYTES} bytes"));
        }
        let expected_output = match object.get("expected_output") {
            Some(Value::String(s)) => Some(s.clone()),
            None | Some(Value::Null) => None,
            Some(_) => return Err(format!("{id}: `expected_output` must be a string")),
        };
        let files = match object.get("files") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(files)) => files
                .iter()
                .map(|f| match f {
                    Value::String(s) if !s.is_empty() => Ok(s.clone()),
                    _ => Err(format!("{id}: `files` holds paths (strings)")),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(format!("{id}: `files` is an array of paths")),
        };
        let mut assertions = Vec::new();
        for key in ["assertions", "expectations"] {
            match object.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Array(checks)) => {
                    for (j, check) in checks.iter().enumerate() {
                        assertions.push(
                            Assertion::parse(check)
                                .map_err(|why| format!("{id}: {key}[{j}]: {why}"))?,
                        );
                    }
                }
                Some(_) => return Err(format!("{id}: `{key}` is an array")),
            }
        }
        if assertions.len() > MAX_ASSERTIONS {
            return Err(format!("{id}: at most {MAX_ASSERTIONS} checks per case"));
        }
        Ok(Self {
            id,
            name,
            prompt,
            expected_output,
            files,
            assertions,
        })
    }
}

/// A case id as a folder name: ASCII letters, digits, `-` and `_` kept,
/// anything else `_`.
pub(crate) fn file_safe(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "_".to_owned()
    } else {
        safe
    }
}

fn input(message: impl Into<String>) -> EvalError {
    EvalError::new(EvalErrorKind::Input, message)
}
