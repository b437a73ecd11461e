//! Skill metadata: the spec fields, typed extensions and the lossless raw frontmatter.

use std::collections::BTreeMap;

use serde::Serialize;

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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    /// `allowed-tools`, split on whitespace.
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
        }
    }
}

/// How a skill wants to run when invoked (the `context` extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
    pub disable_model_invocation: bool,
    /// `user-invocable`: whether a user may invoke the skill directly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_invocable: Option<bool>,
    /// `argument-hint`: how to pass arguments when invoking it directly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
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
