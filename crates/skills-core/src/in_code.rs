//! Skills defined in code (F-PRV-2): plain data, resources as strings or lazy
//! loaders, validated by [`define_skill`]. No I/O, so it works on wasm32.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;

use crate::catalog::Catalog;
use crate::diagnostic::{Code, Diagnostic};
use crate::error::{Error, ErrorKind, Result};
use crate::metadata::{Extensions, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, SkillMetadata};
use crate::name::{self, MAX_NAME_CHARS, SkillName};
use crate::provider::{MaybeSend, MaybeSync, Skill, SkillProvider, not_found};
use crate::resource::{
    DEFAULT_MAX_LISTED, DEFAULT_MAX_READ_BYTES, LineRange, ResourceBytes, ResourceContent,
    ResourceEntry, ResourceListing, ResourcePath, text_content,
};
use crate::tools_section::declared_tools;

/// A function that produces a resource's text on first use.
pub type ResourceLoader = Arc<dyn Fn() -> Result<String> + Send + Sync>;

/// The future an [`AsyncResourceLoader`] returns: `Send` on native targets, not
/// on `wasm32` (where it may await JavaScript).
#[cfg(not(target_arch = "wasm32"))]
pub type LoadFuture = Pin<Box<dyn Future<Output = Result<String>> + Send>>;
/// The future an [`AsyncResourceLoader`] returns: `Send` on native targets, not
/// on `wasm32` (where it may await JavaScript).
#[cfg(target_arch = "wasm32")]
pub type LoadFuture = Pin<Box<dyn Future<Output = Result<String>>>>;

/// An async function that produces a resource's text on first use (for example
/// from a key-value store or an HTTP fetch).
#[cfg(not(target_arch = "wasm32"))]
pub type AsyncResourceLoader = Arc<dyn Fn() -> LoadFuture + Send + Sync>;
/// An async function that produces a resource's text on first use (for example
/// from a key-value store or an HTTP fetch).
#[cfg(target_arch = "wasm32")]
pub type AsyncResourceLoader = Arc<dyn Fn() -> LoadFuture>;

enum Loader {
    Blocking(ResourceLoader),
    Async(AsyncResourceLoader),
}

enum Source {
    Text(String),
    Bytes(bytes::Bytes),
    Lazy {
        load: Loader,
        cache: OnceLock<String>,
    },
}

impl Source {
    fn lazy(load: Loader) -> Self {
        Source::Lazy {
            load,
            cache: OnceLock::new(),
        }
    }

    /// The content, loading it on first use. Concurrent first uses may each run
    /// the loader; the first result stored is the one every caller sees after.
    async fn content(&self) -> Result<&[u8]> {
        match self {
            Source::Text(text) => Ok(text.as_bytes()),
            Source::Bytes(bytes) => Ok(bytes),
            Source::Lazy { load, cache } => {
                if let Some(text) = cache.get() {
                    return Ok(text.as_bytes());
                }
                let loaded = match load {
                    Loader::Blocking(load) => load()?,
                    Loader::Async(load) => load().await?,
                };
                Ok(cache.get_or_init(|| loaded).as_bytes())
            }
        }
    }

    /// The size, when known without loading.
    fn size(&self) -> Option<u64> {
        match self {
            Source::Text(t) => Some(t.len() as u64),
            Source::Bytes(b) => Some(b.len() as u64),
            Source::Lazy { cache, .. } => cache.get().map(|t| t.len() as u64),
        }
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Text(t) => f.debug_tuple("Text").field(&t.len()).finish(),
            Source::Bytes(b) => f.debug_tuple("Bytes").field(&b.len()).finish(),
            Source::Lazy { cache, .. } => f
                .debug_struct("Lazy")
                .field("loaded", &cache.get().is_some())
                .finish(),
        }
    }
}

/// Starts defining a skill in code. Finish with [`SkillDefinition::build`], which
/// applies the specification's rules (strict mode).
///
/// ```
/// use skills_core::define_skill;
/// let skill = define_skill("greeting", "Greets people. Use when the user says hello.")
///     .body("Say hello warmly.")
///     .resource("references/tone.md", "Be kind.")
///     .build()
///     .expect("valid skill");
/// assert_eq!(skill.name(), "greeting");
/// ```
pub fn define_skill(name: impl Into<String>, description: impl Into<String>) -> SkillDefinition {
    SkillDefinition {
        name: name.into(),
        description: description.into(),
        body: String::new(),
        license: None,
        compatibility: None,
        metadata: BTreeMap::new(),
        allowed_tools: Vec::new(),
        extensions: Extensions::default(),
        resources: Vec::new(),
    }
}

/// A skill being defined in code; see [`define_skill`].
#[derive(Debug)]
#[must_use]
pub struct SkillDefinition {
    name: String,
    description: String,
    body: String,
    license: Option<String>,
    compatibility: Option<String>,
    metadata: BTreeMap<String, String>,
    allowed_tools: Vec<String>,
    extensions: Extensions,
    resources: Vec<(String, Source)>,
}

impl SkillDefinition {
    /// Sets the Markdown body (a `Tools:` section in it declares tools).
    pub fn body(mut self, body: impl Into<String>) -> Self {
        self.body = body.into();
        self
    }

    /// Sets `license`.
    pub fn license(mut self, license: impl Into<String>) -> Self {
        self.license = Some(license.into());
        self
    }

    /// Sets `compatibility`.
    pub fn compatibility(mut self, compatibility: impl Into<String>) -> Self {
        self.compatibility = Some(compatibility.into());
        self
    }

    /// Adds a `metadata` entry.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Sets `allowed-tools`.
    pub fn allowed_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools = tools.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the typed extensions.
    pub fn extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// Adds a resource with fixed text.
    pub fn resource(mut self, path: impl Into<String>, text: impl Into<String>) -> Self {
        self.resources
            .push((path.into(), Source::Text(text.into())));
        self
    }

    /// Adds a resource with fixed bytes (an image, an archive, a script): served
    /// by [`SkillProvider::read_resource_bytes`]; the text read refuses it when
    /// it is binary.
    pub fn binary_resource(
        mut self,
        path: impl Into<String>,
        bytes: impl Into<bytes::Bytes>,
    ) -> Self {
        self.resources
            .push((path.into(), Source::Bytes(bytes.into())));
        self
    }

    /// Adds a resource whose text is produced by `load` on first read (and kept).
    /// A failing loader is retried on the next read.
    pub fn lazy_resource<F>(mut self, path: impl Into<String>, load: F) -> Self
    where
        F: Fn() -> Result<String> + Send + Sync + 'static,
    {
        self.resources
            .push((path.into(), Source::lazy(Loader::Blocking(Arc::new(load)))));
        self
    }

    /// Adds a resource whose text is produced by the async `load` on first read
    /// (and kept), for example from a key-value store. A failing loader is
    /// retried on the next read; concurrent first reads may each run it.
    pub fn async_lazy_resource<F, Fut>(mut self, path: impl Into<String>, load: F) -> Self
    where
        F: Fn() -> Fut + MaybeSend + MaybeSync + 'static,
        Fut: Future<Output = Result<String>> + MaybeSend + 'static,
    {
        let load: AsyncResourceLoader = Arc::new(move || -> LoadFuture { Box::pin(load()) });
        self.resources
            .push((path.into(), Source::lazy(Loader::Async(load))));
        self
    }

    /// Validates the definition.
    ///
    /// # Errors
    /// A [`DefineError`] carrying every problem found.
    pub fn build(self) -> Result<InCodeSkill, DefineError> {
        let mut problems = Vec::new();
        let normalized = name::normalize_name(&self.name);
        for (code, message) in name::check_chars(&normalized) {
            problems.push(Diagnostic::error(code, message));
        }
        let chars = normalized.chars().count();
        if chars > MAX_NAME_CHARS {
            problems.push(Diagnostic::error(
                Code::NameTooLong,
                format!(
                    "the name `{normalized}` is {chars} characters; the limit is {MAX_NAME_CHARS}"
                ),
            ));
        }
        let description = self.description.trim().to_owned();
        if description.is_empty() {
            problems.push(Diagnostic::error(
                Code::DescriptionEmpty,
                "`description` must be a non-empty string",
            ));
        } else if description.chars().count() > MAX_DESCRIPTION_CHARS {
            problems.push(Diagnostic::error(
                Code::DescriptionTooLong,
                format!("the description is longer than {MAX_DESCRIPTION_CHARS} characters"),
            ));
        }
        if let Some(c) = &self.compatibility
            && c.chars().count() > MAX_COMPATIBILITY_CHARS
        {
            problems.push(Diagnostic::error(
                Code::CompatibilityTooLong,
                format!("`compatibility` is longer than {MAX_COMPATIBILITY_CHARS} characters"),
            ));
        }
        let mut resources = BTreeMap::new();
        for (raw, source) in self.resources {
            match ResourcePath::parse(&raw) {
                Ok(path) => {
                    if resources.insert(path, source).is_some() {
                        problems.push(Diagnostic::error(
                            Code::SkillDuplicate,
                            format!("resource `{raw}` is defined twice"),
                        ));
                    }
                }
                Err(err) => problems.push(Diagnostic::error(
                    Code::ResourcePathInvalid,
                    err.to_string(),
                )),
            }
        }
        let name = match SkillName::parse(&normalized) {
            Ok(name) if problems.is_empty() => name,
            _ => return Err(DefineError::new(problems)),
        };
        let mut metadata = SkillMetadata::new(name, description);
        metadata.license = self.license;
        metadata.compatibility = self.compatibility;
        metadata.metadata = self.metadata;
        metadata.allowed_tools = self.allowed_tools;
        metadata.declared_tools = declared_tools(&self.body);
        metadata.extensions = self.extensions;
        let listing = ResourceListing::new(
            resources
                .iter()
                .map(|(path, source)| ResourceEntry::new(path.clone(), source.size()))
                .collect(),
            DEFAULT_MAX_LISTED,
        );
        Ok(InCodeSkill {
            skill: Arc::new(Skill::new(metadata, self.body.trim(), listing)),
            resources,
        })
    }
}

/// What kind of problem made [`SkillDefinition::build`] fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DefineErrorKind {
    /// The definition breaks the specification's rules (name, description,
    /// compatibility) or a resource path rule; see [`DefineError::diagnostics`].
    Invalid,
}

/// Why [`SkillDefinition::build`] failed: every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefineError {
    kind: DefineErrorKind,
    diagnostics: Vec<Diagnostic>,
}

impl DefineError {
    fn new(diagnostics: Vec<Diagnostic>) -> Self {
        Self {
            kind: DefineErrorKind::Invalid,
            diagnostics,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> DefineErrorKind {
        self.kind
    }

    /// Every problem found, in definition order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

impl fmt::Display for DefineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid skill definition: ")?;
        let texts: Vec<String> = self.diagnostics.iter().map(ToString::to_string).collect();
        f.write_str(&texts.join("; "))
    }
}

impl std::error::Error for DefineError {}

/// A validated in-code skill.
#[derive(Debug)]
pub struct InCodeSkill {
    skill: Arc<Skill>,
    resources: BTreeMap<ResourcePath, Source>,
}

impl InCodeSkill {
    /// The skill's name.
    pub fn name(&self) -> &str {
        self.skill.name()
    }

    /// The skill (metadata, body, listing).
    pub fn skill(&self) -> &Skill {
        &self.skill
    }
}

/// A provider over skills defined in code.
#[derive(Debug, Default)]
pub struct InCodeProvider {
    catalog: Catalog,
    skills: BTreeMap<String, InCodeSkill>,
    max_read_bytes: usize,
}

impl InCodeProvider {
    /// A provider over `skills`.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidSkill`] when two skills share a name.
    pub fn new(skills: impl IntoIterator<Item = InCodeSkill>) -> Result<Self> {
        let mut map = BTreeMap::new();
        for skill in skills {
            let name = skill.name().to_owned();
            if map.insert(name.clone(), skill).is_some() {
                return Err(Error::new(
                    ErrorKind::InvalidSkill,
                    format!("two in-code skills are named `{name}`"),
                ));
            }
        }
        let catalog = Catalog::new(map.values().map(|s| s.skill.metadata.clone()));
        Ok(Self {
            catalog,
            skills: map,
            max_read_bytes: DEFAULT_MAX_READ_BYTES,
        })
    }

    /// Sets the cap on bytes returned by one resource read.
    #[must_use]
    pub fn with_max_read_bytes(mut self, max: usize) -> Self {
        self.max_read_bytes = max;
        self
    }

    fn skill(&self, name: &str) -> Result<&InCodeSkill> {
        self.skills
            .get(name)
            .ok_or_else(|| not_found(name, &self.catalog))
    }

    /// The checked path and the source of one resource.
    fn source(&self, name: &str, path: &str) -> Result<(ResourcePath, &Source)> {
        let skill = self.skill(name)?;
        let path = ResourcePath::parse(path)?;
        match skill.resources.get(&path) {
            Some(source) => Ok((path, source)),
            None => Err(Error::new(
                ErrorKind::ResourceNotFound,
                format!("skill `{name}` has no file `{path}`"),
            )
            .with_available(skill.skill.resources.paths())),
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
impl SkillProvider for InCodeProvider {
    async fn list(&self) -> Result<Catalog> {
        Ok(self.catalog.clone())
    }

    fn list_cached(&self) -> Option<Catalog> {
        Some(self.catalog.clone())
    }

    async fn get(&self, name: &str) -> Result<Arc<Skill>> {
        Ok(Arc::clone(&self.skill(name)?.skill))
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent> {
        let (path, source) = self.source(name, path)?;
        let content = source.content().await?;
        text_content(path, content, range, self.max_read_bytes)
    }

    async fn read_resource_bytes(&self, name: &str, path: &str) -> Result<ResourceBytes> {
        let (path, source) = self.source(name, path)?;
        let bytes = match source {
            Source::Bytes(bytes) => bytes.clone(),
            other => bytes::Bytes::copy_from_slice(other.content().await?),
        };
        Ok(ResourceBytes::new(path, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn define_validates_everything() {
        let err = define_skill("Bad_Name", " ")
            .resource("../x", "y")
            .build()
            .expect_err("invalid");
        assert_eq!(err.kind(), DefineErrorKind::Invalid);
        let codes: Vec<_> = err.diagnostics().iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            vec![
                Code::NameNotLowercase,
                Code::NameInvalidChars,
                Code::DescriptionEmpty,
                Code::ResourcePathInvalid
            ]
        );
        assert!(err.to_string().contains("name-not-lowercase"));
    }

    #[test]
    fn provider_serves_and_loads_lazily() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        let skill = define_skill("notes", "Takes notes. Use when asked to remember.")
            .body("Body\n\nTools:\n- save_note\n")
            .resource("references/a.md", "one\ntwo\n")
            .lazy_resource("assets/big.txt", move || {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok("lazy".to_owned())
            })
            .build()
            .expect("valid");
        let p = InCodeProvider::new([skill]).expect("provider");
        pollster::block_on(async {
            assert_eq!(p.list().await.expect("list").len(), 1);
            let s = p.get("notes").await.expect("get");
            assert_eq!(s.metadata.declared_tools, vec!["save_note"]);
            assert_eq!(
                s.resources.paths(),
                vec!["references/a.md", "assets/big.txt"]
            );
            assert_eq!(calls.load(Ordering::SeqCst), 0);
            for _ in 0..2 {
                let c = p
                    .read_resource("notes", "assets/big.txt", None)
                    .await
                    .expect("read");
                assert_eq!(c.text, "lazy");
            }
            assert_eq!(calls.load(Ordering::SeqCst), 1);
            let e = p.get("nope").await.expect_err("missing");
            assert_eq!(e.to_string(), "no skill named `nope`; available: notes");
            let e = p
                .read_resource("notes", "x.md", None)
                .await
                .expect_err("missing");
            assert_eq!(e.kind(), ErrorKind::ResourceNotFound);
            assert_eq!(e.available(), ["references/a.md", "assets/big.txt"]);
            let e = p
                .read_resource("notes", "/etc/passwd", None)
                .await
                .expect_err("abs");
            assert_eq!(e.kind(), ErrorKind::InvalidPath);
        });
    }

    #[test]
    fn binary_and_async_resources() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        let skill = define_skill("art", "Draws. Use when asked for a picture.")
            .binary_resource("assets/logo.png", png.clone())
            .async_lazy_resource("references/remote.md", move || {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok("fetched\n".to_owned())
                }
            })
            .build()
            .expect("valid");
        let p = InCodeProvider::new([skill]).expect("provider");
        pollster::block_on(async {
            let bytes = p
                .read_resource_bytes("art", "assets/logo.png")
                .await
                .expect("bytes");
            assert_eq!(
                (bytes.mime.as_str(), &bytes.bytes[..]),
                ("image/png", &png[..])
            );
            let err = p
                .read_resource("art", "assets/logo.png", None)
                .await
                .expect_err("binary");
            assert_eq!(err.kind(), ErrorKind::Binary);
            assert!(err.message().contains("image/png, 16 bytes"), "{err}");
            for _ in 0..2 {
                let text = p
                    .read_resource("art", "references/remote.md", None)
                    .await
                    .expect("read");
                assert_eq!(text.text, "fetched\n");
            }
            assert_eq!(calls.load(Ordering::SeqCst), 1);
            let bytes = p
                .read_resource_bytes("art", "references/remote.md")
                .await
                .expect("bytes");
            assert_eq!(
                (bytes.mime.as_str(), bytes.is_text()),
                ("text/markdown", true)
            );
            let err = p
                .read_resource_bytes("art", "../x")
                .await
                .expect_err("traversal");
            assert_eq!(err.kind(), ErrorKind::InvalidPath);
        });
    }

    #[test]
    fn duplicate_names_are_refused() {
        let a = || define_skill("a", "d").build().expect("valid");
        assert!(InCodeProvider::new([a(), a()]).is_err());
    }
}
