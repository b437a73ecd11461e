//! Parsing and validating a `SKILL.md` into metadata and body (F-FMT-1..3, F-FMT-7).
//!
//! One entry point, [`parse_skill_md`], does both: it always returns every
//! diagnostic it found (never just the first) and a [`SkillDocument`] when the
//! skill is usable in the chosen [`Mode`].

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use crate::diagnostic::{Code, Diagnostic, Severity};
use crate::frontmatter::{self, SplitError, YamlEntry, YamlNode, YamlRules, YamlValue};
use crate::metadata::{
    ContextMode, EXTENSION_FIELDS, Extensions, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS,
    SPEC_FIELDS, SkillMetadata,
};
use crate::name::{self, MAX_NAME_CHARS, ReservedNames, SkillName};
use crate::tools_section::declared_tools;

mod requires;

pub(crate) use crate::frontmatter::DEFAULT_MAX_FRONTMATTER_BYTES;

/// How strictly a skill is judged (F-FMT-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// The specification's rules, with the same verdicts as the reference validator
    /// `skills-ref`: unknown fields, over-long names and a name/directory mismatch
    /// are errors, and so are YAML flow style, anchors, tags and duplicate keys.
    Strict,
    /// What a user expects when loading, which is what hosts such as Claude Code
    /// load: extra fields are kept; an over-long name or description, a
    /// name/directory mismatch and duplicate keys only warn; a `name` that is
    /// missing, empty or not a valid name (a display title such as `PDF Tools`)
    /// loads under the folder name, or a name derived from it when the folder
    /// name is not a valid name either; a missing or empty description is taken
    /// from the body's first paragraph (or, without one, from the title or
    /// name); an empty frontmatter counts as one without fields. Each of these
    /// gives a portability warning (see [`PORTABILITY_CODES`]). Unparseable YAML,
    /// a missing or unclosed frontmatter, or a `name` that is unusable when no
    /// folder name is known still skips the skill.
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
    Code::NameMissing,
    Code::NameEmpty,
    Code::NameTooLong,
    Code::NameDirMismatch,
    Code::DescriptionMissing,
    Code::DescriptionEmpty,
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
    parse_bytes(bytes, origin, options, Body::Keep)
}

/// [`parse_skill_md_bytes`] for a caller that keeps only the metadata (a
/// catalog of thousands of skills): the same checks, diagnostics and
/// metadata, the body read as always (for the declared tools, the
/// description fallback and [`SkillDocument::body_line`]) but not copied:
/// the document's [`body`](SkillDocument::body) is empty.
pub fn parse_skill_md_bytes_metadata(
    bytes: &[u8],
    origin: Origin<'_>,
    options: &ValidationOptions,
) -> ParseOutcome {
    parse_bytes(bytes, origin, options, Body::Drop)
}

/// Whether a parsed document keeps its body.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    Keep,
    Drop,
}

fn parse_bytes(
    bytes: &[u8],
    origin: Origin<'_>,
    options: &ValidationOptions,
    body: Body,
) -> ParseOutcome {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_text(text, origin, options, body),
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
    parse_text(source, origin, options, Body::Keep)
}

fn parse_text(
    source: &str,
    origin: Origin<'_>,
    options: &ValidationOptions,
    body: Body,
) -> ParseOutcome {
    let mut out = Vec::new();
    let document = parse_inner(source, origin, options, body, &mut out);
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
    body: Body,
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
        // An empty frontmatter (`---` then `---`, or only comments) has no fields:
        // lenient mode takes the name from the folder and the description from
        // the body, as it does for each missing field.
        None if !strict => Vec::new(),
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
            if !SPEC_FIELDS.contains(&&**key) {
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
        let unknown = || {
            entries
                .iter()
                .filter(|(key, _)| !SPEC_FIELDS.contains(&&**key))
        };
        if let Some((_, first)) = unknown().next() {
            let (noun, verb, them) = if unknown().nth(1).is_none() {
                ("field", "is", "it")
            } else {
                ("fields", "are", "them")
            };
            // Written in one buffer: a skill often has several such fields.
            let mut message = String::with_capacity(256);
            message.push_str(noun);
            for (i, (key, _)) in unknown().enumerate() {
                message.push_str(if i == 0 { " `" } else { ", `" });
                message.push_str(key);
                message.push('`');
            }
            let _ = write!(
                message,
                " {verb} not in the specification; strict mode and other clients reject {them}: move {them} under `metadata`, or keep {them} only for agents that read {them}"
            );
            out.push(
                Diagnostic::warning(Code::PortabilityExtensionField, message).at_line(first.line),
            );
        }
    }
    let name = check_name(&fields, origin, options, lax, out);
    let fallback = (!strict).then(|| DescriptionFallback {
        body: split.body,
        name: name
            .as_ref()
            .map(|(name, title)| title.as_deref().unwrap_or(name.as_str())),
    });
    let description = check_description(&fields, lax, fallback, out);
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
    // Lenient mode reads a `metadata` written as one JSON string (OpenClaw's
    // habit) as the map it holds, and the requirement spellings in it.
    let inline_metadata = if strict {
        None
    } else {
        fields.get("metadata").and_then(requires::inline_map)
    };
    let metadata_node = inline_metadata.as_ref().or(fields.get("metadata"));
    let quiet_keys = if strict {
        &[][..]
    } else {
        requires::METADATA_KEYS
    };
    let metadata = check_metadata(metadata_node, quiet_keys, out);
    let allowed_tools = match fields.get("allowed-tools") {
        None => Vec::new(),
        Some(node) => match node.value.as_str() {
            Some(text) => crate::metadata::split_allowed_tools(text),
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
        let mut extensions = check_extensions(&fields, out);
        extensions.requires = requires::read(&entries, metadata_node, out);
        extensions
    };

    let ((name, title), description) = (name?, description?);
    // Inserted one by one: a few fields fill one node, where collecting
    // first gathers and sorts them in a vector of their own.
    let mut extra: BTreeMap<String, serde_json::Value> = BTreeMap::new();
    for (k, v) in entries.iter().filter(|(k, _)| !SPEC_FIELDS.contains(&&**k)) {
        extra.insert(k.to_string(), v.value.to_json());
    }
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
        .map_or(0, |before| {
            memchr::memchr_iter(b'\n', before.as_bytes()).count()
        })
        .saturating_add(1);
    Some(SkillDocument {
        metadata: metadata_out,
        body: match body {
            Body::Keep => split.body.to_owned(),
            Body::Drop => String::new(),
        },
        body_line: u32::try_from(body_line).unwrap_or(u32::MAX),
    })
}

struct Fields<'a> {
    entries: &'a [YamlEntry<'a>],
    fence_line: u32,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a YamlNode<'a>> {
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
    let lenient = options.mode == Mode::Lenient;
    let Some(node) = fields.get("name") else {
        if lenient && let Some(folder) = origin.dir_name.and_then(name_from_folder) {
            let line = fields.fence_line;
            let source = folder_source(&folder, origin, "add");
            let message = format!("missing field `name`; loaded as `{folder}`, {source}");
            out.push(Diagnostic::warning(Code::NameMissing, message).at_line(line));
            return folder_name(folder, None, options, line, out);
        }
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
        if lenient && let Some(folder) = origin.dir_name.and_then(name_from_folder) {
            let source = folder_source(&folder, origin, "set");
            let message = format!(
                "`name` is {}; loaded as `{folder}`, {source}",
                describe(&node.value)
            );
            out.push(Diagnostic::warning(Code::NameEmpty, message).at_line(line));
            return folder_name(folder, None, options, line, out);
        }
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
    if lenient
        && !name::chars_ok(&name)
        && let Some(folder) = origin.dir_name.and_then(name_from_folder)
    {
        let source = folder_source(&folder, origin, "set");
        // Written in one buffer sized for the usual message.
        let mut message = String::with_capacity(320);
        let _ = write!(
            message,
            "`name: {name}` is not a skill name (it has {}); loaded as `{folder}`, {source}; a display title can live in `metadata`",
            NameProblems(&name)
        );
        out.push(Diagnostic::warning(Code::PortabilityTitleAsName, message).at_line(line));
        // The title as written; the normalized name is that already when
        // it is ASCII.
        let title = if name == raw.trim() {
            name
        } else {
            raw.trim().to_owned()
        };
        return folder_name(folder, Some(title), options, line, out);
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
        SkillName::parse_owned(name).ok().map(|n| (n, None))
    } else {
        None
    }
}

/// The rest of a lenient-mode load under a name taken from the folder (see
/// [`name_from_folder`]): the over-long-name warning and the reserved-name policy
/// apply to it as to a written name.
fn folder_name(
    folder: String,
    title: Option<String>,
    options: &ValidationOptions,
    line: u32,
    out: &mut Vec<Diagnostic>,
) -> Option<(SkillName, Option<String>)> {
    let chars = folder.chars().count();
    if chars > MAX_NAME_CHARS {
        out.push(
            Diagnostic::warning(
                Code::NameTooLong,
                format!(
                    "the name `{folder}`, taken from the folder, is {chars} characters; the limit is {MAX_NAME_CHARS}: rename the folder and set `name:` to match"
                ),
            )
            .at_line(line),
        );
    }
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
    SkillName::parse_owned(folder).ok().map(|n| (n, title))
}

/// How a folder-derived name came about and how to fix the skill, for
/// messages, as `{source}: {fix}`: `source` is "the folder name" or names the
/// folder the name was derived from, and `fix` is what to do, given the verb
/// for the `name` field (`add` or `set`).
fn folder_source<'a>(folder: &'a str, origin: Origin<'a>, verb: &'a str) -> FolderSource<'a> {
    FolderSource {
        folder,
        derived_from: origin
            .dir_name
            .filter(|dir| name::normalize_name_keep_space(dir) != folder),
        verb,
    }
}

/// What [`folder_source`] tells, written straight into the message that
/// holds it (no string of its own).
struct FolderSource<'a> {
    folder: &'a str,
    /// The folder's name, when the name was derived from it (not equal).
    derived_from: Option<&'a str>,
    verb: &'a str,
}

impl fmt::Display for FolderSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            folder,
            derived_from,
            verb,
        } = self;
        match derived_from {
            Some(dir) => write!(
                f,
                "a name derived from the folder name `{dir}`: rename the folder to `{folder}` and {verb} `name: {folder}`"
            ),
            None => write!(f, "the folder name: {verb} `name: {folder}`"),
        }
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

/// Rounds of [`name_from_folder`]'s normalization before it gives up (one
/// round is enough for almost every input; NFKC can split a letter into a letter
/// and a combining mark, which the next round removes).
const DERIVE_ROUNDS: usize = 4;

/// The name lenient mode loads a skill under when its `name` is missing, empty
/// or not a valid name (a display title): the folder name when that is a valid
/// name (of any length), otherwise a name derived from it. `None` when nothing
/// valid is left.
///
/// The derivation is deterministic: NFKC, lowercase, every character that is
/// not a letter or a number becomes `-`, runs of `-` collapse into one and
/// `-` is trimmed from both ends, repeated until nothing changes. The result
/// always parses as a [`SkillName`] equal to itself.
fn name_from_folder(dir: &str) -> Option<String> {
    let mut current = name::normalize_name_keep_space(dir).into_owned();
    for _ in 0..DERIVE_ROUNDS {
        if name::chars_ok(&current) && name::is_normalized_name(&current) {
            return Some(current);
        }
        current = slug_round(&current);
        if current.is_empty() {
            return None;
        }
    }
    None
}

/// One round of [`name_from_folder`]'s derivation.
fn slug_round(text: &str) -> String {
    let lower = name::normalize_name_keep_space(text).to_lowercase();
    let lower = name::normalize_name_keep_space(&lower);
    let mut out = String::with_capacity(lower.len());
    for c in lower.chars() {
        if name::is_letter_or_number(c) {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// The broken character rules of a name, in words, written straight into
/// the message that holds them.
struct NameProblems<'a>(&'a str);

impl fmt::Display for NameProblems<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, code) in name::broken_char_rules(self.0).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(match code {
                Code::NameNotLowercase => "uppercase letters",
                Code::NameHyphenEdge => "a hyphen at the start or end",
                Code::NameConsecutiveHyphens => "`--`",
                Code::NameInvalidChars => "characters other than letters, digits and hyphens",
                _ => "nothing",
            })?;
        }
        Ok(())
    }
}

fn describe(value: &YamlValue<'_>) -> &'static str {
    match value {
        YamlValue::Scalar { .. } => "an empty string",
        other => other.kind_name(),
    }
}

/// Where lenient mode finds a description the frontmatter does not give.
struct DescriptionFallback<'a> {
    /// The body, whose first paragraph is used.
    body: &'a str,
    /// The text used when the body has no paragraph: the display title, or the
    /// name the skill loads under (`None` when the name is unusable).
    name: Option<&'a str>,
}

impl DescriptionFallback<'_> {
    /// The description and, in words, where it came from.
    fn resolve(&self) -> Option<(String, &'static str)> {
        if let Some(text) = first_paragraph(self.body) {
            return Some((text, "the first paragraph of the body stands in for it"));
        }
        self.name.map(|name| {
            (
                name.to_owned(),
                "the body has no paragraph either, so the skill's name stands in for it",
            )
        })
    }
}

fn check_description(
    fields: &Fields<'_>,
    lax: Severity,
    fallback: Option<DescriptionFallback<'_>>,
    out: &mut Vec<Diagnostic>,
) -> Option<String> {
    let Some(node) = fields.get("description") else {
        if let Some((text, from)) = fallback.as_ref().and_then(DescriptionFallback::resolve) {
            out.push(
                Diagnostic::warning(
                    Code::DescriptionMissing,
                    format!(
                        "missing field `description`; {from}: add `description:` saying what the skill does and when to use it"
                    ),
                )
                .at_line(fields.fence_line),
            );
            return Some(text);
        }
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
        if let Some((text, from)) = fallback.as_ref().and_then(DescriptionFallback::resolve) {
            out.push(
                Diagnostic::warning(
                    Code::DescriptionEmpty,
                    format!(
                        "`description` is {}; {from}: write what the skill does and when to use it",
                        describe(&node.value)
                    ),
                )
                .at_line(node.line),
            );
            return Some(text);
        }
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

/// The text of the body's first paragraph, for a skill without a description:
/// the first block of non-blank lines, each trimmed, joined by single spaces and
/// cut to [`MAX_DESCRIPTION_CHARS`] characters. A Markdown heading is a block of
/// its own and gives its text without the `#` marks; fenced code blocks, HTML
/// comments and thematic breaks (`---`, `***`) are skipped. `None` when the body
/// has no such text.
fn first_paragraph(body: &str) -> Option<String> {
    let mut lines: Vec<&str> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut in_comment = false;
    for raw in body.lines() {
        let line = raw.trim();
        if let Some((mark, len)) = fence {
            if closes_fence(line, mark, len) {
                fence = None;
            }
            continue;
        }
        if in_comment {
            in_comment = !line.contains("-->");
            continue;
        }
        if line.is_empty() {
            if lines.is_empty() {
                continue;
            }
            break;
        }
        let opens_fence = fence_open(line);
        let heading = atx_heading(line);
        let rule = is_rule(line);
        let comment = line.starts_with("<!--");
        if !lines.is_empty() && (opens_fence.is_some() || heading.is_some() || rule || comment) {
            // The paragraph ends here (a rule under it made it a setext heading,
            // whose text is the same).
            break;
        }
        if let Some(open) = opens_fence {
            fence = Some(open);
        } else if comment {
            in_comment = !line["<!--".len()..].contains("-->");
        } else if let Some(text) = heading {
            if !text.is_empty() {
                lines.push(text);
                break;
            }
        } else if !rule {
            lines.push(line);
        }
    }
    if lines.is_empty() {
        return None;
    }
    let joined = lines.join(" ");
    let text: String = joined.chars().take(MAX_DESCRIPTION_CHARS).collect();
    let text = text.trim_end();
    (!text.is_empty()).then(|| text.to_owned())
}

/// The marker and length of a fence opening a code block (```` ``` ```` or
/// `~~~`, three or more).
fn fence_open(line: &str) -> Option<(char, usize)> {
    let mark = line.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let len = line.chars().take_while(|&c| c == mark).count();
    (len >= 3).then_some((mark, len))
}

/// `true` when `line` closes a code block opened by `len` × `mark`.
fn closes_fence(line: &str, mark: char, len: usize) -> bool {
    let run = line.chars().take_while(|&c| c == mark).count();
    run >= len && line.chars().skip(run).all(char::is_whitespace)
}

/// The text of an ATX heading (`## Title ##` → `Title`), if `line` is one.
fn atx_heading(line: &str) -> Option<&str> {
    let level = line.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let rest = rest.trim();
    // A closing sequence of `#` counts only after a space (or alone).
    let without_close = rest.trim_end_matches('#');
    let text = if without_close.is_empty() || without_close.ends_with([' ', '\t']) {
        without_close
    } else {
        rest
    };
    Some(text.trim())
}

/// `true` for a thematic break or setext underline: three or more of one of
/// `-`, `*`, `_`, `=`, with only spaces between.
fn is_rule(line: &str) -> bool {
    let mut chars = line.chars().filter(|c| !matches!(c, ' ' | '\t'));
    let Some(first) = chars.next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_' | '=')
        && line.chars().filter(|&c| c == first).count() >= 3
        && chars.all(|c| c == first)
}

/// The `metadata` map's string values. Other values are dropped with a
/// warning, except under `quiet_keys` (read as requirements instead).
fn check_metadata(
    node: Option<&YamlNode<'_>>,
    quiet_keys: &[&str],
    out: &mut Vec<Diagnostic>,
) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let Some(node) = node else {
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
                map.insert(key.to_string(), text.to_owned());
            }
            None if quiet_keys.contains(&&**key) => {}
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

    /// Asserts that the diagnostic's message contains `text`.
    #[track_caller]
    fn says(diagnostic: &Diagnostic, text: &str) {
        assert!(diagnostic.message.contains(text), "{}", diagnostic.message);
    }

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
        says(
            &out.diagnostics[0],
            "set `name: academic-paper-citation-network-mapper`",
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

        // No fallback when the folder is unknown (a skill defined in code).
        let out = parse_skill_md(src, Origin::default(), &ValidationOptions::lenient());
        assert!(out.document.is_none());
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

    /// Lenient parse with portability warnings on, in folder `dir`.
    fn lenient(src: &str, dir: Option<&str>) -> ParseOutcome {
        parse_skill_md(
            src,
            Origin::new(None, dir),
            &ValidationOptions::lenient().with_portability_warnings(true),
        )
    }

    fn code_list(out: &ParseOutcome) -> Vec<&'static str> {
        out.diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn a_title_in_an_over_long_folder_loads_under_the_folder_name() {
        let folder =
            "add-ide-style-semantic-code-navigation-and-symbol-safe-refactors-to-any-agent";
        assert!(folder.chars().count() > MAX_NAME_CHARS);
        let src = "---\nname: Add IDE-style semantic code navigation and symbol-safe refactors to any agent\ndescription: Navigates code.\n---\nBody\n";
        let out = lenient(src, Some(folder));
        assert_eq!(
            code_list(&out),
            vec!["portability-title-as-name", "name-too-long"]
        );
        says(
            &out.diagnostics[0],
            &format!("loaded as `{folder}`, the folder name"),
        );
        assert!(!is_portable(&out.diagnostics));
        let doc = out.document.expect("loads");
        assert_eq!(doc.metadata.name.as_str(), folder);
        assert_eq!(
            doc.metadata.title.as_deref(),
            Some("Add IDE-style semantic code navigation and symbol-safe refactors to any agent")
        );
        // Strict mode is unchanged: every rule the title breaks is an error.
        assert_eq!(
            codes(src, Some(folder), Mode::Strict),
            vec![
                "name-too-long",
                "name-not-lowercase",
                "name-invalid-chars",
                "name-dir-mismatch"
            ]
        );
    }

    #[test]
    fn a_folder_that_is_not_a_name_gives_a_derived_name() {
        let src = "---\nname: Academic Paper\ndescription: d\n---\n";
        for (dir, name) in [
            ("Academic Paper", "academic-paper"),
            ("PDF_Tools", "pdf-tools"),
            ("--x--y--", "x-y"),
            ("  spaced  ", "spaced"),
            ("Café Notes", "café-notes"),
            ("ﬁle (v2)", "file-v2"),
        ] {
            let out = lenient(src, Some(dir));
            let doc = out.document.as_ref().expect(dir);
            assert_eq!(doc.metadata.name.as_str(), name, "{dir}");
            assert_eq!(doc.metadata.title.as_deref(), Some("Academic Paper"));
            assert_eq!(code_list(&out), vec!["portability-title-as-name"], "{dir}");
            says(
                &out.diagnostics[0],
                &format!("derived from the folder name `{dir}`"),
            );
        }
        // Nothing valid left: skipped with the name's own errors.
        for dir in ["___", "", "-", "\u{301}"] {
            let out = lenient(src, Some(dir));
            assert!(out.document.is_none(), "{dir:?}");
            assert!(
                out.diagnostics
                    .iter()
                    .any(|d| d.is_error() && d.code == Code::NameNotLowercase),
                "{dir:?}: {:?}",
                out.diagnostics
            );
        }
    }

    #[test]
    fn a_missing_or_empty_name_loads_under_the_folder_name() {
        for (src, code) in [
            ("---\ndescription: d\n---\n", Code::NameMissing),
            ("---\nname: ''\ndescription: d\n---\n", Code::NameEmpty),
            ("---\nname:\n  - a\ndescription: d\n---\n", Code::NameEmpty),
        ] {
            let out = lenient(src, Some("My Tools"));
            assert_eq!(
                out.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(),
                vec![code],
                "{src}"
            );
            assert_eq!(out.diagnostics[0].severity, Severity::Warning);
            says(&out.diagnostics[0], "loaded as `my-tools`");
            assert!(!is_portable(&out.diagnostics));
            let doc = out.document.expect("loads");
            assert_eq!(doc.metadata.name.as_str(), "my-tools");
            assert_eq!(doc.metadata.title, None);
            // Without a folder, or in strict mode, it is still an error.
            assert!(lenient(src, None).document.is_none(), "{src}");
            assert!(
                parse_skill_md(
                    src,
                    Origin::new(None, Some("my-tools")),
                    &ValidationOptions::strict()
                )
                .document
                .is_none()
            );
        }
    }

    #[test]
    fn folder_names_follow_the_reserved_name_policy() {
        let opts = ValidationOptions::lenient().with_reserved(ReservedNames::words(["claude"]));
        for src in [
            "---\nname: Claude Helper\ndescription: d\n---\n",
            "---\ndescription: d\n---\n",
        ] {
            let out = parse_skill_md(src, Origin::new(None, Some("Claude_Helper")), &opts);
            assert!(out.document.is_none(), "{src}");
            assert!(
                out.diagnostics.iter().any(|d| d.code == Code::NameReserved),
                "{:?}",
                out.diagnostics
            );
        }
    }

    #[test]
    fn the_metadata_parse_is_the_full_parse_without_the_body() {
        let cases: [&[u8]; 8] = [
            b"---\nname: pdf\ndescription: Reads PDFs.\n---\n# PDF\n\nTools:\n- read_pdf\n",
            b"\xef\xbb\xbf---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\n",
            b"---\nname: Academic Paper Mapper\nversion: 2\n---\n\n# Title\n\nFirst paragraph.\n",
            b"---\nname: x\ndescription: |\n  multi\n  line\n---\n",
            b"---\nname: Bad--Name\n---\nbody",
            b"no frontmatter at all",
            b"---\nname: a\ndescription: \xff\n---\n",
            b"",
        ];
        for options in [ValidationOptions::lenient(), ValidationOptions::strict()] {
            for bytes in cases {
                let origin = Origin::new(Some("x/SKILL.md"), Some("x"));
                let full = parse_skill_md_bytes(bytes, origin, &options);
                let lean = parse_skill_md_bytes_metadata(bytes, origin, &options);
                assert_eq!(lean.diagnostics, full.diagnostics, "{bytes:?}");
                assert_eq!(
                    lean.document.is_some(),
                    full.document.is_some(),
                    "{bytes:?}"
                );
                if let (Some(lean), Some(full)) = (lean.document, full.document) {
                    assert_eq!(lean.metadata, full.metadata, "{bytes:?}");
                    assert_eq!(lean.body_line, full.body_line, "{bytes:?}");
                    assert!(lean.body.is_empty(), "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn a_missing_or_empty_description_comes_from_the_body() {
        let body = "\n# Ansible Playbook Runner\n\nRuns playbooks.\n";
        for (front, code) in [
            ("name: runner\n", Code::DescriptionMissing),
            ("name: runner\ndescription: \"\"\n", Code::DescriptionEmpty),
            ("name: runner\ndescription: '   '\n", Code::DescriptionEmpty),
            ("name: runner\ndescription:\n", Code::DescriptionEmpty),
            (
                "name: runner\ndescription:\n  - a\n",
                Code::DescriptionEmpty,
            ),
        ] {
            let src = format!("---\n{front}---\n{body}");
            let out = lenient(&src, Some("runner"));
            assert_eq!(
                out.diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(),
                vec![code],
                "{src}"
            );
            assert_eq!(out.diagnostics[0].severity, Severity::Warning);
            says(
                &out.diagnostics[0],
                "the first paragraph of the body stands in for it",
            );
            assert!(!is_portable(&out.diagnostics));
            let doc = out.document.expect("loads");
            assert_eq!(doc.metadata.description, "Ansible Playbook Runner");
            // The body itself is unchanged.
            assert_eq!(doc.body, "# Ansible Playbook Runner\n\nRuns playbooks.");
            // Strict mode is unchanged.
            let strict = parse_skill_md(
                &src,
                Origin::new(None, Some("runner")),
                &ValidationOptions::strict(),
            );
            assert!(strict.document.is_none());
            assert_eq!(strict.diagnostics[0].code, code);
            assert!(strict.diagnostics[0].is_error());
        }
    }

    #[test]
    fn a_body_without_a_paragraph_gives_the_title_or_the_name() {
        let titled = "---\nname: Ansible Runner\n---\n```yaml\n- hosts: all\n```\n";
        let out = lenient(titled, Some("ansible-runner"));
        assert_eq!(
            code_list(&out),
            // File order: a missing field is reported at the opening fence.
            vec!["description-missing", "portability-title-as-name"]
        );
        says(&out.diagnostics[0], "the skill's name stands in");
        let doc = out.document.expect("loads");
        assert_eq!(doc.metadata.name.as_str(), "ansible-runner");
        assert_eq!(doc.metadata.description, "Ansible Runner");

        let plain = "---\nname: runner\ndescription: ''\n---\n";
        let doc = lenient(plain, Some("runner")).document.expect("loads");
        assert_eq!(doc.metadata.description, "runner");
        assert_eq!(doc.body, "");
    }

    #[test]
    fn an_empty_frontmatter_loads_from_the_folder_and_body() {
        for src in [
            "---\n---\nRuns things.\n",
            "---\n# only a comment\n---\nRuns things.\n",
        ] {
            let out = lenient(src, Some("runner"));
            assert_eq!(
                code_list(&out),
                vec!["name-missing", "description-missing"],
                "{src}"
            );
            let doc = out.document.expect("loads");
            assert_eq!(doc.metadata.name.as_str(), "runner");
            assert_eq!(doc.metadata.description, "Runs things.");
            assert_eq!(
                codes(src, Some("runner"), Mode::Strict),
                vec!["frontmatter-not-mapping"]
            );
        }
        // A frontmatter that is a list or a single value still skips the skill.
        assert_eq!(
            codes("---\n- a\n---\n", Some("runner"), Mode::Lenient),
            vec!["frontmatter-not-mapping"]
        );
        assert_eq!(
            codes("---\njust text\n---\n", Some("runner"), Mode::Lenient),
            vec!["frontmatter-not-mapping"]
        );
    }

    #[test]
    fn unparseable_yaml_still_skips() {
        let src = "---\nname: Runner\ndescription: [x\n---\nBody\n";
        let out = lenient(src, Some("runner"));
        assert!(out.document.is_none());
        assert_eq!(code_list(&out), vec!["yaml-invalid"]);
    }

    #[test]
    fn first_paragraph_rules() {
        let cases: &[(&str, Option<&str>)] = &[
            ("", None),
            ("\n\n  \n", None),
            ("Plain text.", Some("Plain text.")),
            ("  two\n  lines  \n\nnext", Some("two lines")),
            ("# Title #\ntext", Some("Title")),
            ("###### Deep", Some("Deep")),
            ("####### not a heading", Some("####### not a heading")),
            ("#hashtag", Some("#hashtag")),
            (
                "#\n\nAfter an empty heading",
                Some("After an empty heading"),
            ),
            ("## C# tips\n", Some("C# tips")),
            ("Setext\n======\nmore", Some("Setext")),
            ("---\n\n***\nAfter rules", Some("After rules")),
            ("```bash\nrun\n\n```\nAfter code", Some("After code")),
            ("~~~~\n```\n~~~~\nTilde", Some("Tilde")),
            ("```\nunclosed", None),
            ("<!-- licence\nheader -->\nText", Some("Text")),
            ("<!-- one line -->\n\nText", Some("Text")),
            ("text\n```\ncode\n```", Some("text")),
            ("- a list\n- item", Some("- a list - item")),
        ];
        for (body, want) in cases {
            assert_eq!(first_paragraph(body).as_deref(), *want, "{body:?}");
        }
        // Cut to the limit on a character boundary.
        let long = "é".repeat(MAX_DESCRIPTION_CHARS + 10);
        let cut = first_paragraph(&long).expect("text");
        assert_eq!(cut.chars().count(), MAX_DESCRIPTION_CHARS);
        assert!(long.starts_with(&cut));
    }

    mod props {
        use proptest::prelude::*;

        use super::super::*;

        proptest! {
            /// A folder-derived name is always a valid name equal to its own
            /// normalization, or there is none.
            #[test]
            fn derived_names_are_valid(dir in "\\PC{0,40}") {
                if let Some(derived) = name_from_folder(&dir) {
                    let parsed = SkillName::parse(&derived).expect("valid");
                    prop_assert_eq!(parsed.as_str(), derived.as_str());
                    prop_assert!(name::check_chars(&derived).is_empty());
                    // Deterministic, and a valid folder name is kept as it is.
                    prop_assert_eq!(name_from_folder(&derived), Some(derived.clone()));
                }
            }

            /// Through the public entry point: a title with any folder either
            /// loads under a valid name or is skipped with an error.
            #[test]
            fn a_title_with_any_folder_loads_or_errs(dir in "\\PC{0,80}", title in "[A-Za-z &]{1,30}") {
                let src = format!("---\nname: \"{title}\"\ndescription: d\n---\n");
                let out = parse_skill_md(
                    &src,
                    Origin::new(None, Some(&dir)),
                    &ValidationOptions::lenient(),
                );
                match &out.document {
                    Some(doc) => {
                        prop_assert!(SkillName::parse(doc.metadata.name.as_str()).is_ok());
                        prop_assert!(out.is_valid());
                    }
                    None => prop_assert!(!out.is_valid()),
                }
            }

            /// The body's first paragraph is one trimmed line within the limit.
            #[test]
            fn first_paragraphs_fit(body in "(\\PC{0,60}\n){0,8}", long in 0usize..3) {
                let body = body.repeat(1 + long * 200);
                if let Some(text) = first_paragraph(&body) {
                    prop_assert!(!text.is_empty());
                    prop_assert!(text.chars().count() <= MAX_DESCRIPTION_CHARS);
                    prop_assert!(!text.contains('\n'));
                    prop_assert_eq!(text.trim(), text.as_str());
                }
            }
        }
    }
}
