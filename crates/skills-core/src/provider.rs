//! The [`SkillProvider`] trait (F-PRV-1) and the [`Skill`] it hands out.

use std::fmt;

use async_trait::async_trait;
use serde::Serialize;

use crate::catalog::Catalog;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::metadata::SkillMetadata;
use crate::resource::{LineRange, ResourceContent, ResourceListing};

/// A skill at disclosure level 2: metadata, body and the listing of its files.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Skill {
    /// The frontmatter.
    pub metadata: SkillMetadata,
    /// The Markdown body, trimmed.
    pub body: String,
    /// The skill's other files, grouped and sorted.
    pub resources: ResourceListing,
    /// Where the skill lives (a path or URL), for people; `None` for in-code skills.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

impl Skill {
    /// A skill from its parts.
    pub fn new(
        metadata: SkillMetadata,
        body: impl Into<String>,
        resources: ResourceListing,
    ) -> Self {
        Self {
            metadata,
            body: body.into(),
            resources,
            location: None,
        }
    }

    /// Sets the location.
    #[must_use]
    pub fn with_location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_str()
    }
}

/// A source of skills.
///
/// The contract:
/// * [`list`](SkillProvider::list) returns level 1 (metadata) as an immutable,
///   sorted [`Catalog`] snapshot. Cheap to call repeatedly.
/// * [`get`](SkillProvider::get) returns level 2 (body and listing) of one skill,
///   or an [`ErrorKind::SkillNotFound`](crate::ErrorKind::SkillNotFound) error
///   listing the available names.
/// * [`read_resource`](SkillProvider::read_resource) returns level 3: one file's
///   text, optionally a line range. Implementations must validate `path` with
///   [`ResourcePath::parse`](crate::ResourcePath::parse) and never read outside the
///   skill.
/// * Providers have no side effects on agent state, and a bad skill never breaks
///   the others: it is reported through [`diagnostics`](SkillProvider::diagnostics).
///
/// The trait is object safe; agents hold an `Arc<dyn SkillProvider>`.
#[async_trait]
pub trait SkillProvider: Send + Sync + fmt::Debug {
    /// All skills' metadata, sorted by name.
    async fn list(&self) -> Result<Catalog>;

    /// One skill's body and resource listing.
    async fn get(&self, name: &str) -> Result<Skill>;

    /// One resource's text (a line range of it when `range` is given).
    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent>;

    /// Problems found while loading skills (skipped skills, collisions, …).
    async fn diagnostics(&self) -> Vec<Diagnostic> {
        Vec::new()
    }
}

/// Builds the standard "no skill named …" error from a catalog.
pub fn not_found(name: &str, catalog: &Catalog) -> Error {
    Error::skill_not_found(name, catalog.names().map(str::to_owned).collect())
}
