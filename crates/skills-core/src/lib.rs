//! The core of `skills`: the Agent Skills data model, `SKILL.md` parsing and
//! validation, the [`SkillProvider`] trait with in-code and layered providers, the
//! byte-stable catalog renderer and transcript injection tagging.
//!
//! It is about skills only: how commands run in a workspace (the
//! `WorkspaceRuntime` trait, run and exec requests, path rules) is the contract
//! of `skills-workspace`, which depends on this crate, never the reverse.
//!
//! # Who should depend on this crate
//! Anyone implementing a provider, a disclosure surface or an agent integration,
//! and `skills-workspace` for the skill types it stages. The API is small on
//! purpose and changes rarely.
//!
//! # What it must not depend on
//! No I/O of any kind: no file system, network, processes, clocks or threads, and
//! no other crate of the workspace outside its tests. The crate builds for
//! `wasm32-unknown-unknown`, so edge workers can serve in-code skills.
//! File-system discovery lives in `skills-fs`; the execution contract in
//! `skills-workspace`; agents in `skills-agent`.
//!
//! # Design
//! * Only the private `frontmatter` module touches the YAML parser, so the
//!   parser's hardening (size, depth, alias budget) lives in one place.
//! * Validation never stops at the first problem: [`parse_skill_md`] returns every
//!   [`Diagnostic`], each with a stable [`Code`], a message, file and line.
//! * [`Mode::Strict`] reproduces the verdicts of the reference validator
//!   `skills-ref`; [`Mode::Lenient`] (the default for loading) loads what a user
//!   would expect and warns about the rest.
//! * [`Catalog::render`] is a pure function: the same skills give the same bytes,
//!   whatever order they were found in.
//!
//! ```
//! use skills_core::{parse_skill_md, Origin, ValidationOptions, Catalog, RenderOptions};
//! let src = "---\nname: greet\ndescription: Greets people. Use when the user says hello.\n---\nSay hello.\n";
//! let out = parse_skill_md(src, Origin::new(Some("greet/SKILL.md"), Some("greet")), &ValidationOptions::strict());
//! assert!(out.is_valid());
//! let catalog = Catalog::new(out.document.map(|d| d.metadata));
//! assert!(catalog.render(&RenderOptions::default()).contains(r#"<skill name="greet">"#));
//! ```

mod catalog;
mod diagnostic;
mod display;
mod docs;
mod error;
mod frontmatter;
mod in_code;
mod layered;
mod lint;
mod metadata;
mod name;
mod provider;
mod requirements;
mod resource;
mod search;
mod tagging;
mod tools_section;
mod validate;
mod visibility;

pub use catalog::{
    Budget, BudgetLimit, Catalog, CatalogFormat, EstimateTokens, RenderOptions, RenderReport,
    TokenCounter, escape_xml, estimate_tokens,
};
pub use diagnostic::{Code, Diagnostic, Excerpt, Severity};
pub use display::{escape_html, is_display_unsafe};
pub use docs::{
    DOC_EXTENSIONS, REFERENCES_DIR, docs_in, find_doc, is_doc, list_docs, read_doc, read_doc_range,
};
pub use error::{Error, ErrorKind, Result};
pub use frontmatter::{
    DEFAULT_MAX_FRONTMATTER_BYTES, MAX_YAML_DEPTH, MAX_YAML_EXPANDED_BYTES, MAX_YAML_NODES,
    NODE_COST_BYTES, YAML_EXPANSION_FACTOR, max_expanded_bytes,
};
pub use in_code::{
    AsyncResourceLoader, DefineError, DefineErrorKind, InCodeProvider, InCodeSkill, LoadFuture,
    ResourceLoader, SkillDefinition, define_skill,
};
pub use layered::{FilteredProvider, LayeredProvider, SkillFilter, SwappableProvider};
pub use lint::{
    MAX_BODY_LINES, MAX_BODY_TOKENS, ResourceFact, lint_skill, mentioned_paths, narrates_workflow,
    says_when,
};
pub use metadata::{
    ContextMode, EXTENSION_FIELDS, Extensions, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS,
    PARSED_KEY, SPEC_FIELDS, SkillMetadata, parse_yaml_json,
};
pub use name::{MAX_NAME_CHARS, ReservedNames, SkillName, is_letter_or_number, normalize_name};
pub use provider::{MaybeSend, MaybeSync, Skill, SkillProvider};
pub use requirements::{Missing, Probe, Requirements, describe_missing, normalize_os};
pub use resource::{
    DEFAULT_MAX_LISTED, DEFAULT_MAX_READ_BYTES, LineRange, ResourceBytes, ResourceContent,
    ResourceEntry, ResourceKind, ResourceListing, ResourcePath, guess_mime, looks_binary,
    text_content,
};
pub use search::{
    FieldWeights, MAX_QUERY_BYTES, MAX_QUERY_TERMS, MAX_TOKEN_BYTES, STOP_WORDS, SearchDocument,
    SearchField, SearchHit, SearchIndex, SearchOptions, tokens as search_tokens,
};
pub use tagging::{
    InjectionAction, Message, Role, SKILL_INJECTION_KEY, SkillInjection, TaggedMessage,
    add_injection, collect_loaded_skill_names,
};
pub use tools_section::declared_tools;
pub use validate::{
    Mode, Origin, PORTABILITY_CODES, ParseOutcome, SkillDocument, ValidationOptions, is_portable,
    parse_skill_md, parse_skill_md_bytes, parse_skill_md_bytes_metadata,
};
pub use visibility::{SkillRule, Tier, UnknownTier, VisibilityPolicy};

/// The examples in `docs/catalog.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/catalog.md")]
pub struct CatalogGuide;

/// The examples in `docs/search.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/search.md")]
pub struct SearchGuide;
