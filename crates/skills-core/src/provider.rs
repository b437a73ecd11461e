//! The [`SkillProvider`] trait (F-PRV-1) and the [`Skill`] it hands out.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;

use crate::catalog::Catalog;
use crate::diagnostic::Diagnostic;
use crate::error::ErrorKind;
use crate::error::{Error, Result};
use crate::metadata::SkillMetadata;
use crate::resource::{LineRange, ResourceBytes, ResourceContent, ResourceListing};

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

/// `Send` on native targets; nothing on `wasm32`, where providers may hold
/// JavaScript values (a Workers KV or R2 binding) that are not `Send`.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSend: Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + ?Sized> MaybeSend for T {}
/// `Send` on native targets; nothing on `wasm32`, where providers may hold
/// JavaScript values (a Workers KV or R2 binding) that are not `Send`.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSend {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSend for T {}

/// `Sync` on native targets; nothing on `wasm32` (see [`MaybeSend`]).
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSync: Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Sync + ?Sized> MaybeSync for T {}
/// `Sync` on native targets; nothing on `wasm32` (see [`MaybeSend`]).
#[cfg(target_arch = "wasm32")]
pub trait MaybeSync {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSync for T {}

/// A source of skills.
///
/// The contract:
/// * [`list`](SkillProvider::list) returns level 1 (metadata) as an immutable,
///   sorted [`Catalog`] snapshot. Cheap to call repeatedly: callers (layered and
///   filtered views, agents) call it on every lookup, and compare snapshots to
///   tell whether anything changed, so return the same snapshot (a clone of one
///   [`Catalog`]) while nothing changed.
/// * [`get`](SkillProvider::get) returns level 2 (body and listing) of one skill
///   as a shared [`Arc<Skill>`] (a cached hit clones nothing), or an
///   [`ErrorKind::SkillNotFound`] error listing the available names.
/// * [`read_resource`](SkillProvider::read_resource) returns level 3: one file's
///   text, optionally a line range; binary files are refused with an
///   [`ErrorKind::Binary`] error naming their type and size.
///   [`read_resource_bytes`](SkillProvider::read_resource_bytes) returns a file's
///   raw bytes with a MIME type, for staging scripts and serving assets.
///   Implementations must validate `path` with
///   [`ResourcePath::parse`](crate::ResourcePath::parse) and never read outside
///   the skill.
/// * Providers have no side effects on agent state, and a bad skill never breaks
///   the others: it is reported through [`diagnostics`](SkillProvider::diagnostics).
///
/// The trait is object safe; agents hold an `Arc<dyn SkillProvider>`. On native
/// targets providers and their futures are `Send + Sync`; on `wasm32` they need
/// not be (implement it there with `#[async_trait(?Send)]`), so a provider can
/// await JavaScript futures.
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
pub trait SkillProvider: MaybeSend + MaybeSync + fmt::Debug {
    /// All skills' metadata, sorted by name.
    async fn list(&self) -> Result<Catalog>;

    /// One skill's body and resource listing.
    async fn get(&self, name: &str) -> Result<Arc<Skill>>;

    /// One resource's text (a line range of it when `range` is given).
    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent>;

    /// One resource's raw bytes and MIME type, text or binary.
    ///
    /// The default refuses with [`ErrorKind::Unsupported`]; every provider in
    /// this workspace implements it.
    async fn read_resource_bytes(&self, name: &str, path: &str) -> Result<ResourceBytes> {
        let _ = (name, path);
        Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "this provider (`{}`) does not serve raw resource bytes",
                std::any::type_name::<Self>()
            ),
        ))
    }

    /// Problems found while loading skills (skipped skills, collisions, …).
    async fn diagnostics(&self) -> Vec<Diagnostic> {
        Vec::new()
    }

    /// The catalog [`list`](SkillProvider::list) would return right now, when
    /// the provider can tell without I/O, waiting, or a due staleness check;
    /// `None` otherwise (the default).
    ///
    /// A fast path for composite providers: a layered or filtered view asks
    /// its inner providers this first and answers a repeated `list` from its
    /// cached merge without awaiting every layer. Returning `None` is always
    /// correct; returning `Some` promises the same catalog `list` would give.
    fn list_cached(&self) -> Option<Catalog> {
        None
    }
}

/// Builds the standard "no skill named …" error from a catalog.
pub(crate) fn not_found(name: &str, catalog: &Catalog) -> Error {
    Error::skill_not_found(name, catalog.names().map(str::to_owned).collect())
}
