//! Parsing and validating a `SKILL.md` into metadata and body (F-FMT-1..3, F-FMT-7).
//!
//! One entry point, [`parse_skill_md`], does both: it always returns every
//! diagnostic it found (never just the first) and a [`SkillDocument`] when the
//! skill is usable in the chosen [`Mode`].

use std::collections::BTreeMap;

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::frontmatter::{self, SplitError, YamlNode, YamlRules, YamlValue};
use crate::metadata::{
    ContextMode, EXTENSION_FIELDS, Extensions, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS,
    SPEC_FIELDS, SkillMetadata,
};
use crate::name::{self, MAX_NAME_CHARS, ReservedNames, SkillName};
use crate::tools_section::declared_tools;

pub(crate) use crate::frontmatter::DEFAULT_MAX_FRONTMATTER_BYTES;

/// How strictly a skill is judged (F-FMT-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// The specification's rules, with the same verdicts as the reference validator
    /// `skills-ref`: unknown fields, over-long names and a name/directory mismatch
    /// are errors, and so are YAML flow style, anchors, tags and duplicate keys.
    Strict,
    /// What a user expects when loading: extra fields are kept, an over-long name or
    /// description, a name/directory mismatch and duplicate keys only warn, and a
    /// `name` that is a display title loads under the folder name (when that is a
    /// valid name). Each of these gives a portability warning (see
    /// [`PORTABILITY_CODES`]). A missing description or unparseable YAML still skips
    /// the skill.
    #[default]
    Lenient,
}

/// Options for [`parse_skill_md`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidationOptions {
    /// Strict or lenient.
    pub mode: Mode,
    /// Names the platform refuses (an error in both modes).
    pub reserved: ReservedNames,
    /// Frontmatter larger than this many bytes is refused.
    pub max_frontmatter_bytes: usize,
    /// Lenient mode: also warn about fields outside the specification
    /// (`portability-extension-field`) and YAML flow style, anchors and tags
    /// (`portability-yaml-style`). Off by default, so loading stays quiet about
    /// what works here; `skills validate` turns it on. [`is_portable`] needs it on
    /// to see every portability problem.
    pub portability_warnings: bool,
}

impl Default for ValidationOptions {
    fn default() -> Self {
        Self {
            mode: Mode::Lenient,
            reserved: ReservedNames::none(),
            max_frontmatter_bytes: DEFAULT_MAX_FRONTMATTER_BYTES,
            portability_warnings: false,
        }
    }
}

impl ValidationOptions {
    /// Strict-mode options.
    pub fn strict() -> Self {
        Self {
            mode: Mode::Strict,
            ..Self::default()
        }
    }

    /// Lenient-mode options (the default).
    pub fn lenient() -> Self {
        Self::default()
    }

    /// Sets the reserved-name policy.
    #[must_use]
    pub fn with_reserved(mut self, reserved: ReservedNames) -> Self {
        self.reserved = reserved;
        self
    }

    /// Sets the mode.
    #[must_use]
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Turns the lenient-mode portability warnings for extension fields and YAML
    /// style on or off (see [`portability_warnings`](Self::portability_warnings)).
    #[must_use]
    pub fn with_portability_warnings(mut self, on: bool) -> Self {
        self.portability_warnings = on;
        self
    }
}

/// A parsed skill file: metadata and body.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SkillDocument {
    /// The frontmatter, validated.
    pub metadata: SkillMetadata,
    /// The Markdown body after the closing fence, trimmed.
    pub body: String,
    /// The 1-based line of `SKILL.md` on which [`body`](Self::body) starts (for
    /// diagnostics about the body, such as lint warnings).
    pub body_line: u32,
}

impl SkillDocument {
    /// A document from validated metadata and a body (not from a file: the
    /// body is taken to start on line 1).
    pub fn new(metadata: SkillMetadata, body: impl Into<String>) -> Self {
        Self {
            metadata,
            body: body.into(),
            body_line: 1,
        }
    }

    /// Sets the line of the file on which the body starts.
    #[must_use]
    pub fn with_body_line(mut self, line: u32) -> Self {
        self.body_line = line;
        self
    }
}

/// What [`parse_skill_md`] found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ParseOutcome {
    /// The skill, when it has no errors in the chosen mode.
    pub document: Option<SkillDocument>,
    /// Every problem found, in file order where lines are known.
    pub diagnostics: Vec<Diagnostic>,
}

impl ParseOutcome {
    /// `true` when there is no error diagnostic.
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// The codes of lenient-mode warnings about something strict mode or other clients
/// reject: a skill with one of them loads here but is not portable.
pub const PORTABILITY_CODES: &[Code] = &[
    Code::YamlDuplicateKey,
    Code::NameTooLong,
    Code::NameDirMismatch,
    Code::DescriptionTooLong,
    Code::CompatibilityNotString,
    Code::CompatibilityTooLong,
    Code::PortabilityTitleAsName,
    Code::PortabilityExtensionField,
    Code::PortabilityYamlStyle,
];

/// `true` when `diagnostics` (of one skill) hold no error and no portability
/// warning (see [`PORTABILITY_CODES`]): the skill is valid in strict mode too,
/// up to the two fence and byte-order-mark cases documented in `docs/parity.md`.
/// For lenient-mode diagnostics this holds only when they were produced with
/// [`ValidationOptions::portability_warnings`] on.
pub fn is_portable(diagnostics: &[Diagnostic]) -> bool {
    !diagnostics
        .iter()
        .any(|d| d.is_error() || PORTABILITY_CODES.contains(&d.code))
}

/// Where the text came from, for diagnostics and the directory-name rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Origin<'a> {
    /// The file path to put in diagnostics.
    pub file: Option<&'a str>,
    /// The name of the directory holding the file; when given, the skill name must
    /// match it.
    pub dir_name: Option<&'a str>,
}

impl<'a> Origin<'a> {
    /// An origin: the file path for diagnostics and the name of its folder.
    pub const fn new(file: Option<&'a str>, dir_name: Option<&'a str>) -> Self {
        Self { file, dir_name }
    }
}

/// Parses raw bytes; non-UTF-8 input gives a `not-utf8` diagnostic.
pub fn parse_skill_md_bytes(
    bytes: &[u8],
    origin: Origin<'_>,
    options: &ValidationOptions,
) -> ParseOutcome {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_skill_md(text, origin, options),
        Err(err) => {
            let line = bytes[..err.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u32
                + 1;
            let diag = Diagnostic::error(
                Code::NotUtf8,
                format!(
                    "SKILL.md is not valid UTF-8 (invalid byte at offset {}); save it as UTF-8",
                    err.valid_up_to()
                ),
            )
            .at_line(line);
            ParseOutcome {
                document: None,
                diagnostics: vec![locate(diag, origin)],
            }
        }
    }
}

/// Parses and validates the text of a `SKILL.md`.
///
/// Never panics; every problem becomes a [`Diagnostic`] located in `origin.file`.
pub fn parse_skill_md(
    source: &str,
    origin: Origin<'_>,
    options: &ValidationOptions,
) -> ParseOutcome {
    let mut out = Vec::new();
    let document = parse_inner(source, origin, options, &mut out);
    // File order; a stable sort keeps the rule order within a line.
    out.sort_by_key(|d| d.line.unwrap_or(u32::MAX));
    let diagnostics: Vec<Diagnostic> = out.into_iter().map(|d| locate(d, origin)).collect();
    let has_error = diagnostics.iter().any(Diagnostic::is_error);
    ParseOutcome {
        document: if has_error { None } else { document },
        diagnostics,
    }
}

fn locate(diag: Diagnostic, origin: Origin<'_>) -> Diagnostic {
    match origin.file {
        Some(file) if diag.file.is_none() => diag.in_file(file),
        _ => diag,
    }
}

fn parse_inner(
    source: &str,
    origin: Origin<'_>,
    options: &ValidationOptions,
    out: &mut Vec<Diagnostic>,
) -> Option<SkillDocument> {
    let strict = options.mode == Mode::Strict;
    let text = frontmatter::normalize(source);
    let split = match frontmatter::split(&text) {
        Ok(split) => split,
        Err(SplitError::Missing) => {
            out.push(
                Diagnostic::error(
                    Code::FrontmatterMissing,
                    "SKILL.md must start with YAML frontmatter: a first line `---`, the fields, then a closing `---` line",
                )
                .at_line(1),
            );
            return None;
        }
        Err(SplitError::Unclosed) => {
            out.push(
                Diagnostic::error(
                    Code::FrontmatterUnclosed,
                    "the frontmatter is not closed: add a line `---` after the last field",
                )
                .at_line(1),
            );
            return None;
        }
    };
    if split.frontmatter.len() > options.max_frontmatter_bytes {
        out.push(
            Diagnostic::error(
                Code::FrontmatterTooLarge,
                format!(
                    "the frontmatter is {} bytes; the limit is {} bytes",
                    split.frontmatter.len(),
                    options.max_frontmatter_bytes
                ),
            )
            .at_line(split.frontmatter_first_line),
        );
        return None;
    }
    let parsed = frontmatter::parse_yaml(
        split.frontmatter,
        split.frontmatter_first_line,
        YamlRules { strict },
    );
    out.extend(parsed.diagnostics);
    if out.iter().any(Diagnostic::is_error) {
        return None;
    }
    if !strict && options.portability_warnings {
        yaml_portability(split.frontmatter, split.frontmatter_first_line, out);
    }
    let entries = match parsed.root {
        Some(YamlNode {
            value: YamlValue::Mapping(entries),
            ..
        }) => entries,
        other => {
            let found = other.map_or("nothing", |n| n.value.kind_name());
            out.push(
                Diagnostic::error(
                    Code::FrontmatterNotMapping,
                    format!("the frontmatter must be a YAML mapping of fields, found {found}"),
                )
                .at_line(split.frontmatter_first_line),
            );
            return None;
        }
    };
    let fields = Fields {
        entries: &entries,
        fence_line: split.frontmatter_first_line.saturating_sub(1),
    };
    let lax = if strict {
        Severity::Error
    } else {
        Severity::Warning
    };

    if strict {
        for (key, node) in &entries {
            if !SPEC_FIELDS.contains(&key.as_str()) {
                out.push(
                    Diagnostic::error(
                        Code::FieldUnknown,
                        format!(
                            "unexpected field `{key}`; the specification allows only {}",
                            SPEC_FIELDS.join(", ")
                        ),
                    )
                    .at_line(node.line),
                );
            }
        }
    }

    if !strict && options.portability_warnings {
        let unknown: Vec<&(String, YamlNode)> = entries
            .iter()
            .filter(|(key, _)| !SPEC_FIELDS.contains(&key.as_str()))
            .collect();
        if let Some((_, first)) = unknown.first() {
            let names: Vec<String> = unknown.iter().map(|(k, _)| format!("`{k}`")).collect();
            let (noun, verb, them) = if names.len() == 1 {
                ("field", "is", "it")
            } else {
                ("fields", "are", "them")
            };
            out.push(
                Diagnostic::warning(
                    Code::PortabilityExtensionField,
                    format!(
                        "{noun} {} {verb} not in the specification; strict mode and other clients reject {them}: move {them} under `metadata`, or keep {them} only for agents that read {them}",
                        names.join(", ")
                    ),
                )
                .at_line(first.line),
            );
        }
    }
    let name = check_name(&fields, origin, options, lax, out);
    let description = check_description(&fields, lax, out);
    let compatibility = match fields.get("compatibility") {
        None => None,
        Some(node) => match node.value.as_str() {
            None => {
                out.push(
                    Diagnostic::new(
                        lax,
                        Code::CompatibilityNotString,
                        format!(
                            "`compatibility` must be a string, found {}",
                            node.value.kind_name()
                        ),
                    )
                    .at_line(node.line),
                );
                None
            }
            Some(text) => {
                let chars = text.chars().count();
                if chars > MAX_COMPATIBILITY_CHARS {
                    out.push(
                        Diagnostic::new(
                            lax,
                            Code::CompatibilityTooLong,
                            format!(
                                "`compatibility` is {chars} characters; the limit is {MAX_COMPATIBILITY_CHARS}"
                            ),
                        )
                        .at_line(node.line),
                    );
                }
                Some(text.trim().to_owned())
            }
        },
    };
    let license = fields.string_or_warn("license", out);
    let metadata = check_metadata(&fields, out);
    let allowed_tools = match fields.get("allowed-tools") {
        None => Vec::new(),
        Some(node) => match node.value.as_str() {
            Some(text) => text.split_whitespace().map(str::to_owned).collect(),
            None => {
                out.push(
                    Diagnostic::warning(
                        Code::AllowedToolsNotString,
                        format!(
                            "`allowed-tools` must be a space-separated string, found {}; it is ignored",
                            node.value.kind_name()
                        ),
                    )
                    .at_line(node.line),
                );
                Vec::new()
            }
        },
    };
    let extensions = if strict {
        Extensions::default()
    } else {
        check_extensions(&fields, out)
    };

    let ((name, title), description) = (name?, description?);
    let extra: BTreeMap<String, serde_json::Value> = entries
        .iter()
        .filter(|(k, _)| !SPEC_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.value.to_json()))
        .collect();
    let mut metadata_out = SkillMetadata::new(name, description);
    metadata_out.title = title;
    metadata_out.license = license;
    metadata_out.compatibility = compatibility;
    metadata_out.metadata = metadata;
    metadata_out.allowed_tools = allowed_tools;
    metadata_out.declared_tools = declared_tools(split.body);
    metadata_out.extensions = extensions;
    metadata_out.extra = extra;
    metadata_out.raw_frontmatter = split.frontmatter.to_owned();
    // `split.body` is a slice of `text`: its offset gives its first line.
    let body_offset = (split.body.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len());
    let body_line = text
        .get(..body_offset)
        .map_or(0, |before| before.matches('\n').count())
        .saturating_add(1);
    Some(SkillDocument {
        metadata: metadata_out,
        body: split.body.to_owned(),
        body_line: u32::try_from(body_line).unwrap_or(u32::MAX),
    })
}

struct Fields<'a> {
    entries: &'a [(String, YamlNode)],
    fence_line: u32,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a YamlNode> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// An optional string field; a non-string value warns and is ignored.
    fn string_or_warn(&self, key: &str, out: &mut Vec<Diagnostic>) -> Option<String> {
        let node = self.get(key)?;
        match node.value.as_str() {
            Some(text) => Some(text.trim().to_owned()),
            None => {
                out.push(
                    Diagnostic::warning(
                        Code::ExtensionInvalid,
                        format!(
                            "`{key}` must be a string, found {}; it is ignored",
                            node.value.kind_name()
                        ),
                    )
                    .at_line(node.line),
                );
                None
            }
        }
    }
}

fn check_name(
    fields: &Fields<'_>,
    origin: Origin<'_>,
    options: &ValidationOptions,
    lax: Severity,
    out: &mut Vec<Diagnostic>,
) -> Option<(SkillName, Option<String>)> {
    let Some(node) = fields.get("name") else {
        out.push(
            Diagnostic::error(
                Code::NameMissing,
                "missing required field `name`: add `name: <skill-name>` (lowercase letters, digits, hyphens)",
            )
            .at_line(fields.fence_line),
        );
        return None;
    };
    let line = node.line;
    let Some(raw) = node.value.as_str().filter(|s| !s.trim().is_empty()) else {
        out.push(
            Diagnostic::error(
                Code::NameEmpty,
                format!(
                    "`name` must be a non-empty string, found {}",
                    describe(&node.value)
                ),
            )
            .at_line(line),
        );
        return None;
    };
    let name = name::normalize_name(raw);
    if options.mode == Mode::Lenient
        && let Some(folder) = title_fallback(&name, origin)
    {
        out.push(
            Diagnostic::warning(
                Code::PortabilityTitleAsName,
                format!(
                    "`name: {name}` is not a skill name (it has {}); loaded as `{folder}`, the folder name: set `name: {folder}`; a display title can live in `metadata`",
                    name_problems(&name)
                ),
            )
            .at_line(line),
        );
        if let Some(word) = options.reserved.matched(&folder) {
            out.push(
                Diagnostic::error(
                    Code::NameReserved,
                    format!("the name `{folder}` contains the reserved word `{word}`"),
                )
                .at_line(line),
            );
            return None;
        }
        let title = raw.trim().to_owned();
        return SkillName::parse(&folder).ok().map(|n| (n, Some(title)));
    }
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        out.push(
            Diagnostic::new(
                lax,
                Code::NameTooLong,
                format!("the name `{name}` is {chars} characters; the limit is {MAX_NAME_CHARS}"),
            )
            .at_line(line),
        );
    }
    let problems = name::check_chars(&name);
    let chars_ok = problems.is_empty();
    for (code, message) in problems {
        out.push(Diagnostic::error(code, message).at_line(line));
    }
    if let Some(dir) = origin.dir_name {
        let dir_norm = name::normalize_name_keep_space(dir);
        if dir_norm != name {
            out.push(
                Diagnostic::new(
                    lax,
                    Code::NameDirMismatch,
                    format!("the directory name `{dir}` must match the skill name `{name}`"),
                )
                .at_line(line),
            );
        }
    }
    if let Some(word) = options.reserved.matched(&name) {
        out.push(
            Diagnostic::error(
                Code::NameReserved,
                format!("the name `{name}` contains the reserved word `{word}`"),
            )
            .at_line(line),
        );
    }
    if chars_ok {
        SkillName::parse(&name).ok().map(|n| (n, None))
    } else {
        None
    }
}

/// Lenient mode accepts YAML flow style, anchors and tags; strict mode (and the
/// reference validator) refuse them. Reports each kind once as a portability
/// warning. The second, strict parse runs only when the text has a character
/// that can start one of them.
fn yaml_portability(frontmatter: &str, first_line: u32, out: &mut Vec<Diagnostic>) {
    if !frontmatter.contains(['[', '{', '&', '*', '!']) {
        return;
    }
    let strict = frontmatter::parse_yaml(frontmatter, first_line, YamlRules { strict: true });
    let mut seen = Vec::new();
    for d in strict.diagnostics {
        let what = match d.code {
            Code::YamlFlowStyle => "flow style (`[a, b]` or `{a: b}`)",
            Code::YamlAnchor => "anchors or aliases (`&x`, `*x`)",
            Code::YamlTag => "tags (`!!str`)",
            _ => continue,
        };
        if seen.contains(&d.code) {
            continue;
        }
        seen.push(d.code);
        let mut w = Diagnostic::warning(
            Code::PortabilityYamlStyle,
            format!(
                "the frontmatter uses YAML {what}, which strict mode and the reference validator reject: write plain block YAML"
            ),
        );
        w.line = d.line;
        out.push(w);
    }
}

/// Lenient loading of a skill whose `name` is a display title: when `name` breaks
/// a character rule but the folder name is a valid skill name, the folder name.
fn title_fallback(name: &str, origin: Origin<'_>) -> Option<String> {
    if name::check_chars(name).is_empty() {
        return None;
    }
    let folder = name::normalize_name_keep_space(origin.dir_name?);
    let valid = folder.chars().count() <= MAX_NAME_CHARS
        && name::check_chars(&folder).is_empty()
        && folder.trim() == folder;
    valid.then_some(folder)
}

/// The broken character rules of a name, in words.
fn name_problems(name: &str) -> String {
    let words: Vec<&str> = name::check_chars(name)
        .into_iter()
        .map(|(code, _)| match code {
            Code::NameNotLowercase => "uppercase letters",
            Code::NameHyphenEdge => "a hyphen at the start or end",
            Code::NameConsecutiveHyphens => "`--`",
            Code::NameInvalidChars => "characters other than letters, digits and hyphens",
            _ => "nothing",
        })
        .collect();
    words.join(", ")
}

fn describe(value: &YamlValue) -> &'static str {
    match value {
        YamlValue::Scalar { .. } => "an empty string",
        other => other.kind_name(),
    }
}

fn check_description(
    fields: &Fields<'_>,
    lax: Severity,
    out: &mut Vec<Diagnostic>,
) -> Option<String> {
    let Some(node) = fields.get("description") else {
        out.push(
            Diagnostic::error(
                Code::DescriptionMissing,
                "missing required field `description`: say what the skill does and when to use it",
            )
            .at_line(fields.fence_line),
        );
        return None;
    };
    let Some(text) = node.value.as_str().filter(|s| !s.trim().is_empty()) else {
        out.push(
            Diagnostic::error(
                Code::DescriptionEmpty,
                format!(
                    "`description` must be a non-empty string, found {}",
                    describe(&node.value)
                ),
            )
            .at_line(node.line),
        );
        return None;
    };
    let chars = text.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        out.push(
            Diagnostic::new(
                lax,
                Code::DescriptionTooLong,
                format!(
                    "the description is {chars} characters; the limit is {MAX_DESCRIPTION_CHARS}"
                ),
            )
            .at_line(node.line),
        );
    }
    Some(text.trim().to_owned())
}

fn check_metadata(fields: &Fields<'_>, out: &mut Vec<Diagnostic>) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let Some(node) = fields.get("metadata") else {
        return map;
    };
    let YamlValue::Mapping(entries) = &node.value else {
        out.push(
            Diagnostic::warning(
                Code::MetadataNotMapping,
                format!(
                    "`metadata` must be a mapping of strings to strings, found {}; it is ignored",
                    node.value.kind_name()
                ),
            )
            .at_line(node.line),
        );
        return map;
    };
    for (key, value) in entries {
        match value.value.as_str() {
            Some(text) => {
                map.insert(key.clone(), text.to_owned());
            }
            None => out.push(
                Diagnostic::warning(
                    Code::MetadataValueNotString,
                    format!(
                        "`metadata.{key}` must be a string, found {}; it is ignored",
                        value.value.kind_name()
                    ),
                )
                .at_line(value.line),
            ),
        }
    }
    map
}

fn check_extensions(fields: &Fields<'_>, out: &mut Vec<Diagnostic>) -> Extensions {
    debug_assert!(EXTENSION_FIELDS.windows(2).all(|w| w[0] < w[1]));
    let mut ext = Extensions::default();
    if let Some(node) = fields.get("context") {
        match node.value.as_str().map(str::trim) {
            Some("fork") => ext.context = Some(ContextMode::Fork),
            Some("fork_with_context") => ext.context = Some(ContextMode::ForkWithContext),
            _ => out.push(
                Diagnostic::warning(
                    Code::ExtensionInvalid,
                    "`context` must be `fork` or `fork_with_context`; it is ignored",
                )
                .at_line(node.line),
            ),
        }
    }
    ext.agent = fields.string_or_warn("agent", out);
    ext.model = fields.string_or_warn("model", out);
    ext.when_to_use = fields.string_or_warn("when_to_use", out);
    ext.argument_hint = fields.string_or_warn("argument-hint", out);
    ext.disable_model_invocation =
        bool_field(fields, "disable-model-invocation", out).unwrap_or(false);
    ext.user_invocable = bool_field(fields, "user-invocable", out);
    ext
}

fn bool_field(fields: &Fields<'_>, key: &str, out: &mut Vec<Diagnostic>) -> Option<bool> {
    let node = fields.get(key)?;
    match node.value.as_str().map(str::trim) {
        Some("true" | "True" | "TRUE") => Some(true),
        Some("false" | "False" | "FALSE") => Some(false),
        _ => {
            out.push(
                Diagnostic::warning(
                    Code::ExtensionInvalid,
                    format!("`{key}` must be `true` or `false`; it is ignored"),
                )
                .at_line(node.line),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(src: &str, dir: Option<&str>, mode: Mode) -> Vec<&'static str> {
        let opts = ValidationOptions::default()
            .with_mode(mode)
            .with_portability_warnings(true);
        parse_skill_md(
            src,
            Origin {
                file: None,
                dir_name: dir,
            },
            &opts,
        )
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect()
    }

    #[test]
    fn valid_skill_parses_in_both_modes() {
        let src = "---\nname: pdf\ndescription: Read PDFs. Use for PDF files.\nlicense: MIT\nmetadata:\n  author: me\nallowed-tools: Read Bash\n---\n# PDF\n\nTools:\n- read_pdf\n";
        for mode in [Mode::Strict, Mode::Lenient] {
            let out = parse_skill_md(
                src,
                Origin {
                    file: None,
                    dir_name: Some("pdf"),
                },
                &ValidationOptions::default().with_mode(mode),
            );
            assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
            let doc = out.document.expect("document");
            assert_eq!(doc.metadata.name.as_str(), "pdf");
            assert_eq!(doc.metadata.allowed_tools, vec!["Read", "Bash"]);
            assert_eq!(
                doc.metadata.metadata.get("author").map(String::as_str),
                Some("me")
            );
            assert_eq!(doc.metadata.declared_tools, vec!["read_pdf"]);
            assert_eq!(doc.body, "# PDF\n\nTools:\n- read_pdf");
        }
    }

    #[test]
    fn reports_every_problem() {
        let src = "---\nname: Bad--Name-\ndescription: ''\nextra: 1\ncompatibility:\n  a: b\n---\n";
        assert_eq!(
            codes(src, Some("other"), Mode::Strict),
            vec![
                "name-not-lowercase",
                "name-hyphen-edge",
                "name-consecutive-hyphens",
                "name-dir-mismatch",
                "description-empty",
                "field-unknown",
                "compatibility-not-string",
            ]
        );
    }

    #[test]
    fn lenient_warns_where_strict_fails() {
        let long = "a".repeat(65);
        let src = format!("---\nname: {long}\ndescription: d\nwhen_to_use: often\n---\n");
        assert_eq!(
            codes(&src, Some("x"), Mode::Strict),
            vec!["name-too-long", "name-dir-mismatch", "field-unknown"]
        );
        let opts = ValidationOptions::lenient().with_portability_warnings(true);
        let out = parse_skill_md(
            &src,
            Origin {
                file: Some("x/SKILL.md"),
                dir_name: Some("x"),
            },
            &opts,
        );
        assert!(out.is_valid());
        assert_eq!(
            out.diagnostics
                .iter()
                .map(|d| d.code.as_str())
                .collect::<Vec<_>>(),
            vec![
                "name-too-long",
                "name-dir-mismatch",
                "portability-extension-field"
            ]
        );
        assert!(!is_portable(&out.diagnostics));
        assert!(
            out.diagnostics
                .iter()
                .all(|d| d.file.as_deref() == Some("x/SKILL.md"))
        );
        let doc = out.document.expect("loads");
        assert_eq!(
            doc.metadata.extensions.when_to_use.as_deref(),
            Some("often")
        );
        assert_eq!(
            doc.metadata.extra.get("when_to_use"),
            Some(&serde_json::json!("often"))
        );
    }

    #[test]
    fn missing_and_malformed_frontmatter() {
        assert_eq!(codes("", None, Mode::Lenient), vec!["frontmatter-missing"]);
        assert_eq!(
            codes("# hi\n", None, Mode::Lenient),
            vec!["frontmatter-missing"]
        );
        assert_eq!(
            codes("---\nname: a\n", None, Mode::Lenient),
            vec!["frontmatter-unclosed"]
        );
        assert_eq!(
            codes("---\n---\n", None, Mode::Strict),
            vec!["frontmatter-not-mapping"]
        );
        assert_eq!(
            codes("---\n- a\n---\n", None, Mode::Strict),
            vec!["frontmatter-not-mapping"]
        );
        assert_eq!(
            codes("---\nname: a\ndescription: [x\n---\n", None, Mode::Lenient),
            vec!["yaml-invalid"]
        );
        assert_eq!(
            codes("---\ndescription: d\n---\n", None, Mode::Strict),
            vec!["name-missing"]
        );
        assert_eq!(
            codes("---\nname: a\n---\n", None, Mode::Strict),
            vec!["description-missing"]
        );
    }

    #[test]
    fn bom_crlf_and_non_utf8() {
        let src = "\u{feff}---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\n";
        let out = parse_skill_md(src, Origin::default(), &ValidationOptions::strict());
        assert!(out.is_valid(), "{:?}", out.diagnostics);
        assert_eq!(out.document.map(|d| d.body), Some("body".to_owned()));
        let out = parse_skill_md_bytes(
            b"---\nname: \xff\n---\n",
            Origin::default(),
            &ValidationOptions::lenient(),
        );
        assert_eq!(out.diagnostics[0].code, Code::NotUtf8);
        assert_eq!(out.diagnostics[0].line, Some(2));
    }

    #[test]
    fn frontmatter_size_cap() {
        let src = format!(
            "---\nname: a\ndescription: {}\n---\n",
            "x".repeat(DEFAULT_MAX_FRONTMATTER_BYTES)
        );
        assert_eq!(
            codes(&src, None, Mode::Lenient),
            vec!["frontmatter-too-large"]
        );
    }

    #[test]
    fn reserved_names_are_errors_in_both_modes() {
        let opts = ValidationOptions::lenient().with_reserved(ReservedNames::words(["claude"]));
        let out = parse_skill_md(
            "---\nname: claude-helper\ndescription: d\n---\n",
            Origin::default(),
            &opts,
        );
        assert_eq!(out.diagnostics[0].code, Code::NameReserved);
        assert!(out.document.is_none());
    }

    #[test]
    fn extensions_are_typed() {
        let src = "---\nname: a\ndescription: d\ncontext: fork\ndisable-model-invocation: true\nuser-invocable: false\nargument-hint: '[file]'\nmodel: m\nagent: reviewer\n---\n";
        let out = parse_skill_md(src, Origin::default(), &ValidationOptions::lenient());
        let ext = out.document.expect("doc").metadata.extensions;
        assert_eq!(ext.context, Some(ContextMode::Fork));
        assert!(ext.disable_model_invocation);
        assert_eq!(ext.user_invocable, Some(false));
        assert_eq!(ext.argument_hint.as_deref(), Some("[file]"));
        let bad = "---\nname: a\ndescription: d\ncontext: maybe\nuser-invocable: often\n---\n";
        assert_eq!(
            codes(bad, None, Mode::Lenient),
            vec![
                "portability-extension-field",
                "extension-invalid",
                "extension-invalid"
            ]
        );
    }

    #[test]
    fn lenient_loads_a_title_under_the_folder_name() {
        let src = "---\nname: Academic Paper Citation Network Mapper\ndescription: Maps citations.\n---\nBody\n";
        let origin = Origin {
            file: Some("academic-paper-citation-network-mapper/SKILL.md"),
            dir_name: Some("academic-paper-citation-network-mapper"),
        };
        let out = parse_skill_md(src, origin, &ValidationOptions::lenient());
        assert_eq!(
            out.diagnostics
                .iter()
                .map(|d| d.code.as_str())
                .collect::<Vec<_>>(),
            vec!["portability-title-as-name"]
        );
        assert!(
            out.diagnostics[0]
                .message
                .contains("set `name: academic-paper-citation-network-mapper`"),
            "{}",
            out.diagnostics[0].message
        );
        assert!(!is_portable(&out.diagnostics));
        let doc = out.document.expect("loads");
        assert_eq!(
            doc.metadata.name.as_str(),
            "academic-paper-citation-network-mapper"
        );
        assert_eq!(
            doc.metadata.title.as_deref(),
            Some("Academic Paper Citation Network Mapper")
        );
        assert_eq!(doc.body_line, 5);
        let json = serde_json::to_value(&doc.metadata).expect("json");
        assert_eq!(json["title"], "Academic Paper Citation Network Mapper");

        // Strict mode is unchanged.
        let strict = parse_skill_md(src, origin, &ValidationOptions::strict());
        assert!(strict.document.is_none());
        assert!(
            strict
                .diagnostics
                .iter()
                .any(|d| d.code == Code::NameNotLowercase)
        );

        // No fallback when the folder name is not a valid name either, or unknown.
        for dir in [Some("Academic Paper"), None] {
            let out = parse_skill_md(
                src,
                Origin {
                    file: None,
                    dir_name: dir,
                },
                &ValidationOptions::lenient(),
            );
            assert!(out.document.is_none(), "{dir:?}");
        }
        // A valid name never gets a title.
        let ok = parse_skill_md(
            "---\nname: pdf\ndescription: d\n---\n",
            Origin::default(),
            &ValidationOptions::lenient(),
        );
        let json = serde_json::to_value(&ok.document.expect("doc").metadata).expect("json");
        assert!(json.get("title").is_none());
        // The reserved-name policy applies to the folder name.
        let reserved = parse_skill_md(
            "---\nname: Claude Helper\ndescription: d\n---\n",
            Origin {
                file: None,
                dir_name: Some("claude-helper"),
            },
            &ValidationOptions::lenient().with_reserved(ReservedNames::words(["claude"])),
        );
        assert!(reserved.document.is_none());
    }

    #[test]
    fn lenient_flags_yaml_strict_mode_refuses() {
        let src = "---\nname: a\ndescription: d\nmetadata: {k: v}\n---\n";
        assert_eq!(
            codes(src, None, Mode::Lenient),
            vec!["portability-yaml-style"]
        );
        assert_eq!(codes(src, None, Mode::Strict), vec!["yaml-flow-style"]);
        // Off by default: loading stays quiet.
        let quiet = parse_skill_md(src, Origin::default(), &ValidationOptions::lenient());
        assert!(quiet.diagnostics.is_empty(), "{:?}", quiet.diagnostics);
        let plain = "---\nname: a\ndescription: 'd [x] & *y*!'\n---\n";
        assert!(codes(plain, None, Mode::Lenient).is_empty());
    }

    #[test]
    fn nfkc_directory_match() {
        assert!(
            codes(
                "---\nname: café\ndescription: d\n---\n",
                Some("cafe\u{301}"),
                Mode::Strict
            )
            .is_empty()
        );
    }
}
