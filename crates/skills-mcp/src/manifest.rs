//! Skill manifests: a provider's skill as the extension's `Skill` entry,
//! every file with its size and `sha256:` digest.
//!
//! Hashing reads every file of the skill, so manifests are cached per skill
//! and reused while the provider hands out the same [`Arc<Skill>`] (the
//! filesystem provider keeps it until its staleness check sees a change).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    DIRECTORY_MIME_TYPE, Resource, Skill as McpSkill, SkillFrontmatter, SkillResource,
    SkillResources,
};
use skills_core::{ErrorKind, Skill, SkillProvider, guess_mime};

use crate::uri::{SKILL_MD, skill_uri};

/// Files per skill above which a skill is not served through the extension
/// (the limit of rmcp's folder catalog: hosts need not load larger skills).
pub const SKILL_FILE_LIMIT: usize = 512;

/// Bytes per skill (all files together) above which a skill is not served
/// through the extension.
pub const SKILL_BYTE_LIMIT: u64 = 16 * 1024 * 1024;

/// Why a skill has no manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ManifestError {
    /// The provider has no skill of that name.
    NotFound(String),
    /// The skill is over [`SKILL_FILE_LIMIT`] or [`SKILL_BYTE_LIMIT`], or its
    /// listing was cut.
    OverLimit(String),
    /// A file could not be read.
    Unreadable(String),
}

impl ManifestError {
    pub(crate) fn message(&self) -> &str {
        match self {
            Self::NotFound(m) | Self::OverLimit(m) | Self::Unreadable(m) => m,
        }
    }
}

/// One skill's manifest and what the other methods need from it.
#[derive(Debug)]
pub(crate) struct Manifest {
    /// The extension's entry.
    pub(crate) entry: McpSkill,
    /// The `SKILL.md` resource, for `resources/list`.
    pub(crate) listed: Resource,
    /// Size of every file by path (`SKILL.md` included).
    pub(crate) sizes: BTreeMap<String, u64>,
    /// The bytes of `SKILL.md` (the provider's file, or rebuilt from the
    /// frontmatter and body for providers without one).
    pub(crate) skill_md: bytes::Bytes,
}

impl Manifest {
    /// The direct children of the folder `dir` (`""` for the skill folder),
    /// or `None` when `dir` is not a folder of the skill.
    pub(crate) fn directory(&self, name: &str, dir: &str) -> Option<Vec<Resource>> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut children: BTreeMap<&str, Resource> = BTreeMap::new();
        let mut found = dir.is_empty();
        for (path, size) in &self.sizes {
            let Some(rest) = path.strip_prefix(&prefix) else {
                continue;
            };
            found = true;
            match rest.split_once('/') {
                Some((sub, _)) => {
                    children.entry(sub).or_insert_with(|| {
                        Resource::new(skill_uri(name, &format!("{prefix}{sub}")), sub)
                            .with_mime_type(DIRECTORY_MIME_TYPE)
                    });
                }
                None => {
                    children.insert(
                        rest,
                        Resource::new(skill_uri(name, path), rest)
                            .with_size(*size)
                            .with_mime_type(guess_mime(path)),
                    );
                }
            }
        }
        found.then(|| children.into_values().collect())
    }
}

/// Manifests by skill name, each with the skill snapshot it was built from.
type Cache = HashMap<String, (Arc<Skill>, Arc<Manifest>)>;

/// Manifests by skill name, each with the skill it was built from.
#[derive(Debug, Default)]
pub(crate) struct Manifests {
    cache: Mutex<Cache>,
}

impl Manifests {
    /// The manifest of `name`, built or reused.
    pub(crate) async fn get(
        &self,
        provider: &dyn SkillProvider,
        name: &str,
    ) -> Result<Arc<Manifest>, ManifestError> {
        let skill = provider.get(name).await.map_err(|err| {
            if err.kind() == ErrorKind::SkillNotFound {
                ManifestError::NotFound(format!("no skill named `{name}`"))
            } else {
                ManifestError::Unreadable(err.to_string())
            }
        })?;
        if let Some((cached, manifest)) = self.lock().get(name)
            && Arc::ptr_eq(cached, &skill)
        {
            return Ok(Arc::clone(manifest));
        }
        let manifest = Arc::new(build(provider, &skill).await?);
        self.lock()
            .insert(name.to_owned(), (skill, Arc::clone(&manifest)));
        Ok(manifest)
    }

    /// Forgets the manifests of skills not in `names`.
    pub(crate) fn retain<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        let keep: std::collections::HashSet<&str> = names.into_iter().collect();
        self.lock().retain(|name, _| keep.contains(name.as_str()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `SKILL.md` as the provider has it, or rebuilt for providers without files.
pub(crate) async fn skill_md_bytes(provider: &dyn SkillProvider, skill: &Skill) -> bytes::Bytes {
    match provider.read_resource_bytes(skill.name(), SKILL_MD).await {
        Ok(file) => file.bytes,
        Err(_) => bytes::Bytes::from(format!(
            "---\n{}\n---\n{}\n",
            skill.metadata.raw_frontmatter.trim_end(),
            skill.body
        )),
    }
}

async fn build(provider: &dyn SkillProvider, skill: &Skill) -> Result<Manifest, ManifestError> {
    let name = skill.name();
    let over = |what: String| {
        ManifestError::OverLimit(format!(
            "the skill `{name}` has {what}, over the limit of {SKILL_FILE_LIMIT} files and \
             {SKILL_BYTE_LIMIT} bytes per skill; load it with the `load_skill` tool instead"
        ))
    };
    let listing = &skill.resources;
    let paths: Vec<String> = listing
        .paths()
        .into_iter()
        .filter(|p| p != SKILL_MD)
        .collect();
    if !listing.is_complete() || paths.len() + 1 > SKILL_FILE_LIMIT {
        return Err(over(format!(
            "{} files or more",
            paths.len() + 1 + listing.omitted
        )));
    }
    let listed_bytes: u64 = listing.entries.iter().filter_map(|e| e.size).sum();
    if listed_bytes > SKILL_BYTE_LIMIT {
        return Err(over(format!("{listed_bytes} bytes")));
    }
    let skill_md = skill_md_bytes(provider, skill).await;
    let mut total = skill_md.len() as u64;
    let md_uri = skill_uri(name, SKILL_MD);
    let mut files = vec![SkillResource::from_bytes(md_uri.clone(), &skill_md)];
    let mut sizes = BTreeMap::new();
    sizes.insert(SKILL_MD.to_owned(), skill_md.len() as u64);
    for path in paths {
        let file = provider
            .read_resource_bytes(name, &path)
            .await
            .map_err(|err| {
                ManifestError::Unreadable(format!(
                    "the file `{path}` of the skill `{name}` cannot be read: {}",
                    err.message()
                ))
            })?;
        total += file.bytes.len() as u64;
        if total > SKILL_BYTE_LIMIT {
            return Err(over(format!("more than {total} bytes")));
        }
        files.push(SkillResource::from_bytes(
            skill_uri(name, &path),
            &file.bytes,
        ));
        sizes.insert(path, file.bytes.len() as u64);
    }
    files.sort_by(|a, b| a.uri.cmp(&b.uri));
    let metadata = &skill.metadata;
    let mut frontmatter = SkillFrontmatter::new(name, metadata.description.clone());
    if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(metadata) {
        for (key, value) in fields {
            if !matches!(
                key.as_str(),
                "name" | "description" | "title" | skills_core::PARSED_KEY
            ) {
                frontmatter = frontmatter.with_field(key, value);
            }
        }
    }
    let listed = Resource::new(md_uri.clone(), name)
        .with_description(metadata.description.clone())
        .with_mime_type("text/markdown")
        .with_size(skill_md.len() as u64);
    Ok(Manifest {
        entry: McpSkill::new(md_uri, frontmatter, SkillResources::Files(files)),
        listed,
        sizes,
        skill_md,
    })
}
