//! Skills defined in code (F-PRV-2): plain data, resources as strings or lazy
//! loaders, validated by [`define_skill`]. No I/O, so it works on wasm32.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;

use crate::catalog::Catalog;
use crate::diagnostic::{Code, Diagnostic};
use crate::error::{Error, ErrorKind, Result};
use crate::metadata::{Extensions, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, SkillMetadata};
use crate::name::{self, MAX_NAME_CHARS, SkillName};
use crate::provider::{Skill, SkillProvider, not_found};
use crate::resource::{
    DEFAULT_MAX_LISTED, DEFAULT_MAX_READ_BYTES, LineRange, ResourceContent, ResourceEntry,
    ResourceListing, ResourcePath, text_content,
};
use crate::tools_section::declared_tools;

/// A function that produces a resource's text on first use.
pub type ResourceLoader = Arc<dyn Fn() -> Result<String> + Send + Sync>;

enum Source {
    Text(String),
    Lazy {
        load: ResourceLoader,
        cache: OnceLock<String>,
    },
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Text(t) => f.debug_tuple("Text").field(&t.len()).finish(),
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

    /// Adds a resource whose text is produced by `load` on first read (and kept).
    /// A failing loader is retried on the next read.
    pub fn lazy_resource<F>(mut self, path: impl Into<String>, load: F) -> Self
    where
        F: Fn() -> Result<String> + Send + Sync + 'static,
    {
        self.resources.push((
            path.into(),
            Source::Lazy {
                load: Arc::new(load),
                cache: OnceLock::new(),
            },
        ));
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
                Err(err) => problems.push(Diagnostic::error(Code::IoError, err.to_string())),
            }
        }
        let name = match SkillName::parse(&normalized) {
            Ok(name) if problems.is_empty() => name,
            _ => {
                return Err(DefineError {
                    diagnostics: problems,
                });
            }
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
                .map(|(path, source)| {
                    let size = match source {
                        Source::Text(t) => Some(t.len() as u64),
                        Source::Lazy { .. } => None,
                    };
                    ResourceEntry::new(path.clone(), size)
                })
                .collect(),
            DEFAULT_MAX_LISTED,
        );
        Ok(InCodeSkill {
            skill: Skill::new(metadata, self.body.trim(), listing),
            resources,
        })
    }
}

/// Why [`SkillDefinition::build`] failed: every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefineError {
    /// The problems.
    pub diagnostics: Vec<Diagnostic>,
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
    skill: Skill,
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
}

#[async_trait]
impl SkillProvider for InCodeProvider {
    async fn list(&self) -> Result<Catalog> {
        Ok(self.catalog.clone())
    }

    async fn get(&self, name: &str) -> Result<Skill> {
        Ok(self.skill(name)?.skill.clone())
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent> {
        let skill = self.skill(name)?;
        let path = ResourcePath::parse(path)?;
        let Some(source) = skill.resources.get(&path) else {
            return Err(Error::new(
                ErrorKind::ResourceNotFound,
                format!("skill `{name}` has no file `{path}`"),
            )
            .with_available(skill.skill.resources.paths()));
        };
        let text = match source {
            Source::Text(text) => text.as_str(),
            Source::Lazy { load, cache } => match cache.get() {
                Some(text) => text.as_str(),
                None => {
                    let loaded = load()?;
                    cache.get_or_init(|| loaded).as_str()
                }
            },
        };
        text_content(path, text.as_bytes(), range, self.max_read_bytes)
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
        let codes: Vec<_> = err.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            vec![
                Code::NameNotLowercase,
                Code::NameInvalidChars,
                Code::DescriptionEmpty,
                Code::IoError
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
    fn duplicate_names_are_refused() {
        let a = || define_skill("a", "d").build().expect("valid");
        assert!(InCodeProvider::new([a(), a()]).is_err());
    }
}
