//! Skill metadata: the spec fields, typed extensions and the lossless raw frontmatter.

use std::collections::BTreeMap;

use serde::ser::{SerializeMap as _, Serializer};
use serde::{Deserialize, Deserializer, Serialize};

use crate::requirements::Requirements;

use crate::name::SkillName;

/// Frontmatter fields defined by the Agent Skills specification.
pub const SPEC_FIELDS: &[&str] = &[
    "allowed-tools",
    "compatibility",
    "description",
    "license",
    "metadata",
    "name",
];

/// The longest description the specification allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest `compatibility` value the specification allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// Everything the frontmatter says about a skill (level 1 of disclosure, plus the
/// declared tools from the body's `Tools:` section).
///
/// # Serialization
///
/// Serializes as a map under the frontmatter's own keys, in this order: `name`,
/// `description`, `license`, `compatibility`, `metadata`, `allowed-tools` (the
/// tools joined by single spaces), then every other frontmatter field (from
/// [`SkillMetadata::extra`], extension fields included) under its own name,
/// sorted. The interpretations follow under [`PARSED_KEY`] (`"parsed"`):
/// `allowed_tools` (the list), `declared_tools` and `extensions` (only the
/// fields that are set). Empty fields are left out everywhere, `parsed`
/// included. A frontmatter field named `parsed` is left out of the top level
/// (it stays in `extra` and `raw_frontmatter`). `raw_frontmatter` is not
/// serialized.
///
/// Deserializing reads that shape back (`raw_frontmatter` comes back empty);
/// [`crate::Catalog`] stores its entries losslessly, `raw_frontmatter`
/// included.
#[derive(Debug, Clone, PartialEq, Serialize)]
// The field attributes below are kept for readers; `into` decides the shape.
#[serde(into = "MetadataView")]
#[non_exhaustive]
pub struct SkillMetadata {
    /// The validated name.
    pub name: SkillName,
    /// What the skill does and when to use it.
    pub description: String,
    /// A display title: set in lenient mode when the frontmatter `name` was a
    /// title such as `PDF Tools` (not a valid skill name) and the skill was loaded
    /// under its folder name instead. Never rendered in the catalog.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `license`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// `compatibility`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<String>,
    /// `metadata`: string keys to string values.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// `allowed-tools`, split on whitespace and commas outside parentheses
    /// (Claude Code also accepts `Read, Grep`): `Bash(git diff *)` stays one
    /// entry.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    /// Tools named in the body's `Tools:` section (F-FMT-5), in order, deduplicated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub declared_tools: Vec<String>,
    /// Typed view of the known extension fields.
    pub extensions: Extensions,
    /// Every frontmatter field that is not a spec field, as JSON (plain scalars
    /// resolved with the YAML 1.2 core schema). Extension fields appear here too.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
    /// The frontmatter text exactly as written (line endings normalized to `\n`).
    #[serde(skip)]
    pub raw_frontmatter: String,
    /// Where the skill sits below its provider's root: `/`-separated folder
    /// names, the last one the skill's own folder (`acme/billing` for
    /// `ROOT/acme/billing/SKILL.md`). Set by providers that keep skills in
    /// folders (the filesystem provider); `None` for skills that sit at their
    /// name (in-code skills), see [`SkillMetadata::path_or_name`].
    ///
    /// Not frontmatter: never rendered in the catalog and not part of the
    /// serialized frontmatter view; the catalog's stored form keeps it. MCP
    /// servers use it for the skill's `skill://` URI.
    #[serde(skip)]
    pub path: Option<String>,
}

/// The key under which [`SkillMetadata`] serializes its parsed values.
pub const PARSED_KEY: &str = "parsed";

/// The parsed half of the serialized [`SkillMetadata`].
#[derive(Serialize)]
struct Parsed<'a> {
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    allowed_tools: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    declared_tools: &'a [String],
    #[serde(skip_serializing_if = "Extensions::is_empty")]
    extensions: &'a Extensions,
}

/// [`SkillMetadata`] in its serialized shape (see "Serialization" there).
struct MetadataView(SkillMetadata);

impl From<SkillMetadata> for MetadataView {
    fn from(metadata: SkillMetadata) -> Self {
        Self(metadata)
    }
}

impl Serialize for MetadataView {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Self(metadata) = self;
        metadata.serialize_view(serializer)
    }
}

impl SkillMetadata {
    fn serialize_view<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("name", &self.name)?;
        if let Some(title) = &self.title {
            // The frontmatter's `name` was a display title; the skill loads under
            // its folder name (lenient mode).
            map.serialize_entry("title", title)?;
        }
        map.serialize_entry("description", &self.description)?;
        if let Some(license) = &self.license {
            map.serialize_entry("license", license)?;
        }
        if let Some(compatibility) = &self.compatibility {
            map.serialize_entry("compatibility", compatibility)?;
        }
        if !self.metadata.is_empty() {
            map.serialize_entry("metadata", &self.metadata)?;
        }
        if !self.allowed_tools.is_empty() {
            map.serialize_entry("allowed-tools", &self.allowed_tools.join(" "))?;
        }
        for (key, value) in &self.extra {
            if key != PARSED_KEY && !SPEC_FIELDS.contains(&&**key) {
                map.serialize_entry(key, value)?;
            }
        }
        let parsed = Parsed {
            allowed_tools: &self.allowed_tools,
            declared_tools: &self.declared_tools,
            extensions: &self.extensions,
        };
        if !(parsed.allowed_tools.is_empty()
            && parsed.declared_tools.is_empty()
            && parsed.extensions.is_empty())
        {
            map.serialize_entry(PARSED_KEY, &parsed)?;
        }
        map.end()
    }
}

/// The parsed half as read back.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ParsedOwned {
    allowed_tools: Vec<String>,
    declared_tools: Vec<String>,
    extensions: Extensions,
}

impl<'de> Deserialize<'de> for SkillMetadata {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut map = BTreeMap::<String, serde_json::Value>::deserialize(deserializer)?;
        let mut take = |key: &str| map.remove(key);
        fn field<T: serde::de::DeserializeOwned, E: serde::de::Error>(
            key: &str,
            value: Option<serde_json::Value>,
        ) -> Result<Option<T>, E> {
            value
                .map(|v| serde_json::from_value(v).map_err(|e| E::custom(format!("`{key}`: {e}"))))
                .transpose()
        }
        let name: SkillName =
            field("name", take("name"))?.ok_or_else(|| D::Error::missing_field("name"))?;
        let description: String = field("description", take("description"))?
            .ok_or_else(|| D::Error::missing_field("description"))?;
        let title = field("title", take("title"))?;
        let license = field("license", take("license"))?;
        let compatibility = field("compatibility", take("compatibility"))?;
        let metadata = field("metadata", take("metadata"))?.unwrap_or_default();
        let joined: Option<String> = field("allowed-tools", take("allowed-tools"))?;
        let parsed: ParsedOwned = field(PARSED_KEY, take(PARSED_KEY))?.unwrap_or_default();
        let allowed_tools = if parsed.allowed_tools.is_empty() {
            joined.map(|j| split_allowed_tools(&j)).unwrap_or_default()
        } else {
            parsed.allowed_tools
        };
        Ok(Self {
            name,
            description,
            title,
            license,
            compatibility,
            metadata,
            allowed_tools,
            declared_tools: parsed.declared_tools,
            extensions: parsed.extensions,
            extra: map,
            raw_frontmatter: String::new(),
            path: None,
        })
    }
}

impl SkillMetadata {
    /// Metadata with just a name and a description; other fields empty.
    pub fn new(name: SkillName, description: impl Into<String>) -> Self {
        Self {
            name,
            description: description.into(),
            title: None,
            license: None,
            compatibility: None,
            metadata: BTreeMap::new(),
            allowed_tools: Vec::new(),
            declared_tools: Vec::new(),
            extensions: Extensions::default(),
            extra: BTreeMap::new(),
            raw_frontmatter: String::new(),
            path: None,
        }
    }

    /// Sets [`SkillMetadata::path`].
    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// The skill's [`path`](SkillMetadata::path) below its root, or its name
    /// when the provider gave none.
    pub fn path_or_name(&self) -> &str {
        self.path.as_deref().unwrap_or(self.name.as_str())
    }

    /// Every top-level field of the frontmatter as written, as JSON: what a
    /// client that parses `SKILL.md` itself sees, before any lenient fix-up
    /// (a title given as `name`, a description taken from the body, a
    /// `metadata` value that is not a string). Plain scalars resolve with the
    /// YAML 1.2 core schema, as in [`SkillMetadata::extra`]; a key given twice
    /// keeps its last value.
    ///
    /// Parses [`raw_frontmatter`](SkillMetadata::raw_frontmatter) again with
    /// the same hardened parser (size, depth and alias budgets). `None` when
    /// it is empty, does not parse, or is not a mapping.
    pub fn frontmatter_fields(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        use crate::frontmatter::{YamlRules, YamlValue, parse_yaml};
        if self.raw_frontmatter.trim().is_empty() {
            return None;
        }
        let parsed = parse_yaml(&self.raw_frontmatter, 1, YamlRules { strict: false });
        match parsed.root?.value {
            YamlValue::Mapping(entries) => Some(
                entries
                    .into_iter()
                    .map(|(key, node)| (key.into_owned(), node.value.to_json()))
                    .collect(),
            ),
            _ => None,
        }
    }
}

/// How a skill wants to run when invoked (the `context` extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextMode {
    /// Run in a fresh sub-agent that sees only the skill.
    Fork,
    /// Run in a sub-agent that gets a copy of the conversation.
    ForkWithContext,
}

/// Typed access to the extension fields used by known agents (F-FMT-4).
///
/// The raw values stay in [`SkillMetadata::extra`]; these are interpretations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Extensions {
    /// `context: fork | fork_with_context`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextMode>,
    /// `agent`: the sub-agent to run the skill with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `model`: the model to run the skill with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `when_to_use`: extra guidance on when to pick the skill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when_to_use: Option<String>,
    /// `disable-model-invocation: true`: hidden from the catalog, loaded only on an
    /// explicit mention.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disable_model_invocation: bool,
    /// `user-invocable`: whether a user may invoke the skill directly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_invocable: Option<bool>,
    /// `argument-hint`: how to pass arguments when invoking it directly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// What the skill needs from the machine (binaries, environment variables,
    /// tools, operating systems), read from the spellings in
    /// `docs/skill-format.md` ("Requirements").
    #[serde(skip_serializing_if = "Requirements::is_empty")]
    pub requires: Requirements,
    /// Codex's `agents/openai.yaml` `policy.allow_implicit_invocation`; `false`
    /// makes the skill manual (listed nowhere, loaded by explicit mention).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_implicit_invocation: Option<bool>,
}

impl Extensions {
    /// Whether no extension field is set (`disable_model_invocation` false).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Names of the extension fields [`Extensions`] interprets.
pub const EXTENSION_FIELDS: &[&str] = &[
    "agent",
    "argument-hint",
    "context",
    "disable-model-invocation",
    "model",
    "user-invocable",
    "when_to_use",
];

/// Splits an `allowed-tools` value into its entries: on whitespace (and
/// commas, as Claude Code also accepts `Read, Grep`) outside parentheses, so
/// a pattern such as `Bash(git diff *)` stays whole.
pub(crate) fn split_allowed_tools(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && (c.is_whitespace() || c == ',') {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Parses a YAML file that is not a frontmatter (a sidecar such as Codex's
/// `agents/openai.yaml`) into JSON, under every hardening rule of the
/// frontmatter parser: the nesting depth limit and the node and byte budgets
/// that end an alias bomb in an error instead of exhausting memory (see
/// [`max_expanded_bytes`](crate::max_expanded_bytes)). Anchors, aliases and
/// flow style are accepted; plain scalars resolve with the YAML 1.2 core
/// schema (`false` is a boolean, `"false"` a string). The caller caps the
/// text's size first.
///
/// Returns `Ok(None)` for an empty document (or only comments). The error is
/// the first problem found, located at a line of `text` (counted from 1).
///
/// ```
/// let json = skills_core::parse_yaml_json("policy:\n  allow_implicit_invocation: false\n")
///     .expect("valid")
///     .expect("not empty");
/// assert_eq!(json["policy"]["allow_implicit_invocation"], serde_json::Value::Bool(false));
/// assert!(skills_core::parse_yaml_json("a: [1,\n").is_err());
/// ```
pub fn parse_yaml_json(text: &str) -> Result<Option<serde_json::Value>, crate::Diagnostic> {
    let text = crate::frontmatter::normalize(text);
    let parsed =
        crate::frontmatter::parse_yaml(&text, 1, crate::frontmatter::YamlRules { strict: false });
    if let Some(error) = parsed
        .diagnostics
        .into_iter()
        .find(crate::Diagnostic::is_error)
    {
        return Err(error);
    }
    Ok(parsed.root.map(|root| root.value.to_json()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn meta() -> SkillMetadata {
        SkillMetadata::new(SkillName::parse("pdf").unwrap(), "Reads PDFs.")
    }

    #[test]
    fn allowed_tools_split_outside_parentheses_only() {
        assert_eq!(
            split_allowed_tools("Read, Grep  Bash(git diff *) Bash(npm run:*)\tWebFetch"),
            [
                "Read",
                "Grep",
                "Bash(git diff *)",
                "Bash(npm run:*)",
                "WebFetch"
            ]
        );
        assert!(split_allowed_tools(" ,, ").is_empty());
        // Read back from the joined form, a pattern with a space stays whole.
        let mut m = meta();
        m.allowed_tools = vec!["Read".into(), "Bash(git diff *)".into()];
        let back: SkillMetadata = serde_json::from_value(json!({
            "name": "pdf", "description": "Reads PDFs.", "allowed-tools": "Read Bash(git diff *)"
        }))
        .unwrap();
        assert_eq!(back.allowed_tools, m.allowed_tools);
    }

    #[test]
    fn a_bare_skill_is_name_and_description_only() {
        assert_eq!(
            serde_json::to_value(meta()).unwrap(),
            json!({"name": "pdf", "description": "Reads PDFs."})
        );
    }

    #[test]
    fn the_serialized_shape_reads_back() {
        let mut m = meta();
        m.title = Some("PDF Tools".into());
        m.license = Some("MIT".into());
        m.allowed_tools = vec!["Read".into(), "Bash(git:*)".into()];
        m.declared_tools = vec!["read_pdf".into()];
        m.metadata.insert("team".into(), "docs".into());
        m.extensions.context = Some(ContextMode::Fork);
        m.extra.insert("context".into(), json!("fork"));
        let text = serde_json::to_string(&m).unwrap();
        let back: SkillMetadata = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        let bad = serde_json::from_value::<SkillMetadata>(
            json!({"name": "Bad Name", "description": "x"}),
        );
        assert!(bad.is_err());
    }

    #[test]
    fn the_path_defaults_to_the_name_and_is_not_frontmatter() {
        assert_eq!(meta().path_or_name(), "pdf");
        let nested = meta().with_path("docs/pdf");
        assert_eq!(nested.path_or_name(), "docs/pdf");
        assert_eq!(
            serde_json::to_value(&nested).unwrap(),
            serde_json::to_value(meta()).unwrap()
        );
    }

    #[test]
    fn frontmatter_fields_are_the_fields_as_written() {
        let mut m = meta();
        assert_eq!(m.frontmatter_fields(), None);
        m.raw_frontmatter = "name: PDF Tools\ndescription: ''\nallowed-tools:\n  - Read\n  - Grep\nmetadata:\n  version: 2\nx-flag: true\n".into();
        let fields = m.frontmatter_fields().unwrap();
        assert_eq!(
            serde_json::Value::Object(fields),
            json!({
                "name": "PDF Tools",
                "description": "",
                "allowed-tools": ["Read", "Grep"],
                "metadata": {"version": 2},
                "x-flag": true
            })
        );
        m.raw_frontmatter = "- a list\n".into();
        assert_eq!(m.frontmatter_fields(), None);
        m.raw_frontmatter = "name: [unclosed\n".into();
        assert_eq!(m.frontmatter_fields(), None);
    }

    #[test]
    fn frontmatter_keys_then_parsed_values() {
        let mut m = meta();
        m.allowed_tools = vec!["Read".into(), "Bash(git:*)".into()];
        m.declared_tools = vec!["read_pdf".into()];
        m.extensions.disable_model_invocation = true;
        m.extra
            .insert("disable-model-invocation".into(), json!(true));
        m.extra.insert("x-team".into(), json!({"a": 1}));
        m.extra.insert(PARSED_KEY.into(), json!("clash"));
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(
            text,
            r#"{"name":"pdf","description":"Reads PDFs.","allowed-tools":"Read Bash(git:*)","disable-model-invocation":true,"x-team":{"a":1},"parsed":{"allowed_tools":["Read","Bash(git:*)"],"declared_tools":["read_pdf"],"extensions":{"disable_model_invocation":true}}}"#
        );
    }
}
