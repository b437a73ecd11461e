//! Skill manifests: a provider's skill as the extension's `Skill` entry,
//! every file with its size and `sha256:` digest.
//!
//! Hashing reads every file of the skill, so manifests are cached per skill
//! and reused while the provider hands out the same [`Arc<Skill>`] (the
//! filesystem provider keeps it until its staleness check sees a change).
//!
//! A skill that cannot be listed (over the limits, or an entry SEP-2640
//! forbids: a name over 64 characters, a `SKILL.md` whose `name` is a title
//! the lenient loader replaced, no description) gets a [`ManifestError`]
//! instead, cached the same way and logged once as a warning: the listing
//! leaves it out and lists the rest. The fallback tools still serve it.
//!
//! The entry's `frontmatter` is the frontmatter as the served `SKILL.md`
//! has it, field by field (what a host that checks the file against the
//! listing, as MCP Inspector's `--verify` does, parses back), not the
//! loader's interpretation of it.
//!
//! A nested skill's files are also files of every skill around it, as in
//! rmcp's folder catalog; a URI names one file, so a file of the enclosing
//! skill whose URI falls inside a nested skill is listed only when its bytes
//! are the nested skill's (always, unless the two come from different roots).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    DIRECTORY_MIME_TYPE, Resource, Skill as McpSkill, SkillFrontmatter, SkillResource,
    SkillResources,
};
use serde_json::{Map, Value};
use skills_core::{
    ErrorKind, MAX_DESCRIPTION_CHARS, Skill, SkillMetadata, SkillProvider, guess_mime,
};

use crate::index::{Entry, SkillIndex};
use crate::uri::{SKILL_MD, SkillUri, skill_uri};

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
    /// Its entry would break a rule of the extension (see the module doc).
    NotListable(String),
    /// A file could not be read.
    Unreadable(String),
}

impl ManifestError {
    pub(crate) fn message(&self) -> &str {
        match self {
            Self::NotFound(m) | Self::OverLimit(m) | Self::NotListable(m) | Self::Unreadable(m) => {
                m
            }
        }
    }
}

/// One skill's manifest and what the other methods need from it.
#[derive(Debug)]
pub(crate) struct Manifest {
    /// The skill's path in its URIs.
    pub(crate) path: String,
    /// The extension's entry.
    pub(crate) entry: McpSkill,
    /// The `SKILL.md` resource, for `resources/list`.
    pub(crate) listed: Resource,
    /// Size of every file listed by path (`SKILL.md` included).
    pub(crate) sizes: BTreeMap<String, u64>,
    /// The bytes of `SKILL.md` (the provider's file, or rebuilt from the
    /// frontmatter and body for providers without one).
    pub(crate) skill_md: bytes::Bytes,
}

impl Manifest {
    /// The direct children of the folder `dir` (`""` for the skill folder),
    /// or `None` when `dir` is not a folder of the skill.
    pub(crate) fn directory(&self, dir: &str) -> Option<Vec<Resource>> {
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
                        Resource::new(skill_uri(&self.path, &format!("{prefix}{sub}")), sub)
                            .with_mime_type(DIRECTORY_MIME_TYPE)
                    });
                }
                None => {
                    children.insert(
                        rest,
                        Resource::new(skill_uri(&self.path, path), rest)
                            .with_size(*size)
                            .with_mime_type(guess_mime(path)),
                    );
                }
            }
        }
        found.then(|| children.into_values().collect())
    }
}

/// A manifest, or why there is none.
type Built = Result<Arc<Manifest>, ManifestError>;

/// One cached answer: the skill snapshot and URI path it was built for.
#[derive(Debug)]
struct Cached {
    skill: Arc<Skill>,
    path: String,
    built: Built,
}

/// Manifests by skill name, each with the skill it was built from.
#[derive(Debug, Default)]
pub(crate) struct Manifests {
    cache: Mutex<HashMap<String, Cached>>,
}

impl Manifests {
    /// The manifest of the skill `entry` of `index`, built or reused. A skill
    /// that cannot be listed is logged as a warning when its snapshot is
    /// first seen, not on every call.
    pub(crate) async fn get(
        &self,
        provider: &dyn SkillProvider,
        index: &SkillIndex,
        entry: &Entry,
    ) -> Built {
        let name = entry.name.as_str();
        let skill = provider.get(name).await.map_err(|err| {
            if err.kind() == ErrorKind::SkillNotFound {
                ManifestError::NotFound(format!("no skill named `{name}`"))
            } else {
                ManifestError::Unreadable(err.to_string())
            }
        })?;
        if let Some(cached) = self.lock().get(name)
            && Arc::ptr_eq(&cached.skill, &skill)
            && cached.path == entry.path
        {
            return cached.built.clone();
        }
        let built = build(provider, index, entry, &skill).await.map(Arc::new);
        match &built {
            // A read that failed may work next time: not cached.
            Err(ManifestError::Unreadable(reason)) => {
                tracing::warn!(skill = name, reason = %reason, "skill left out of skills/list");
                return built;
            }
            Err(err) => {
                tracing::warn!(
                    skill = name,
                    reason = err.message(),
                    "skill left out of skills/list"
                );
            }
            Ok(_) => {}
        }
        self.lock().insert(
            name.to_owned(),
            Cached {
                skill,
                path: entry.path.clone(),
                built: built.clone(),
            },
        );
        built
    }

    /// Forgets the manifests of skills not in `names`.
    pub(crate) fn retain<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        let keep: std::collections::HashSet<&str> = names.into_iter().collect();
        self.lock().retain(|name, _| keep.contains(name.as_str()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Cached>> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `SKILL.md` as the provider has it, or rebuilt for providers without files:
/// the frontmatter as written, or (for a skill defined in code, which has no
/// frontmatter text) the metadata's fields written as YAML.
pub(crate) async fn skill_md_bytes(provider: &dyn SkillProvider, skill: &Skill) -> bytes::Bytes {
    if let Ok(file) = provider.read_resource_bytes(skill.name(), SKILL_MD).await {
        return file.bytes;
    }
    let metadata = &skill.metadata;
    let frontmatter = if metadata.raw_frontmatter.trim().is_empty() {
        let mut lines = String::new();
        for (key, value) in &metadata_fields(metadata) {
            write_yaml_field(&mut lines, 0, key, value);
        }
        lines
    } else {
        format!("{}\n", metadata.raw_frontmatter.trim_end())
    };
    bytes::Bytes::from(format!("---\n{frontmatter}---\n{}\n", skill.body))
}

/// Writes `key: value` as block-style YAML at `indent` spaces, every key and
/// string double-quoted with JSON's escapes (a subset of YAML's), so any YAML
/// parser, StrictYAML-style ones included, reads back exactly `value`. List
/// items that are themselves lists or mappings are written in flow style.
fn write_yaml_field(out: &mut String, indent: usize, key: &str, value: &Value) {
    out.extend(std::iter::repeat_n(' ', indent));
    out.push_str(&Value::String(key.to_owned()).to_string());
    out.push(':');
    match value {
        Value::Object(fields) if !fields.is_empty() => {
            out.push('\n');
            for (key, value) in fields {
                write_yaml_field(out, indent + 2, key, value);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            for item in items {
                out.extend(std::iter::repeat_n(' ', indent + 2));
                out.push_str("- ");
                out.push_str(&item.to_string());
                out.push('\n');
            }
        }
        scalar => {
            out.push(' ');
            out.push_str(&scalar.to_string());
            out.push('\n');
        }
    }
}

/// The frontmatter fields of a skill as its `SKILL.md` has them.
fn frontmatter_fields(metadata: &SkillMetadata) -> Map<String, Value> {
    metadata
        .frontmatter_fields()
        .unwrap_or_else(|| metadata_fields(metadata))
}

/// The frontmatter fields the metadata stands for (for skills defined in
/// code): its serialized view without the loader's own keys.
fn metadata_fields(metadata: &SkillMetadata) -> Map<String, Value> {
    match serde_json::to_value(metadata) {
        Ok(Value::Object(mut fields)) => {
            fields.remove("title");
            fields.remove(skills_core::PARSED_KEY);
            fields
        }
        _ => Map::new(),
    }
}

async fn build(
    provider: &dyn SkillProvider,
    index: &SkillIndex,
    at: &Entry,
    skill: &Skill,
) -> Result<Manifest, ManifestError> {
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
    let frontmatter = listable_frontmatter(&skill.metadata)?;
    let skill_md = skill_md_bytes(provider, skill).await;
    let mut total = skill_md.len() as u64;
    let md_uri = skill_uri(&at.path, SKILL_MD);
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
        if !served_as_listed(provider, index, at, &path, &file.bytes).await {
            continue;
        }
        files.push(SkillResource::from_bytes(
            skill_uri(&at.path, &path),
            &file.bytes,
        ));
        sizes.insert(path, file.bytes.len() as u64);
    }
    files.sort_by(|a, b| a.uri.cmp(&b.uri));
    let description = skill.metadata.description.clone();
    let listed = Resource::new(md_uri.clone(), name)
        .with_description(description)
        .with_mime_type("text/markdown")
        .with_size(skill_md.len() as u64);
    let entry = McpSkill::new(md_uri, frontmatter, SkillResources::Files(files));
    // The checks rmcp applies to every answer: one entry that fails them
    // would fail the whole `skills/list`.
    entry.validate().map_err(|err| {
        ManifestError::NotListable(format!("the skill `{name}` cannot be listed: {err}"))
    })?;
    Ok(Manifest {
        path: at.path.clone(),
        entry,
        listed,
        sizes,
        skill_md,
    })
}

/// The entry's frontmatter, or why the skill cannot be listed: its
/// `SKILL.md` must name it and describe it as SEP-2640 requires, or a host
/// that checks the listing against the file refuses it.
fn listable_frontmatter(metadata: &SkillMetadata) -> Result<SkillFrontmatter, ManifestError> {
    let name = metadata.name.as_str();
    let refuse = |why: String| {
        ManifestError::NotListable(format!(
            "the skill `{name}` cannot be listed: {why}; the `load_skill` tool still serves it"
        ))
    };
    let mut fields = frontmatter_fields(metadata);
    match fields.remove("name") {
        Some(Value::String(written)) if written == name => {}
        Some(written) => {
            return Err(refuse(format!(
                "its SKILL.md gives the name {written}, not `{name}` (loaded under its folder name)"
            )));
        }
        None => return Err(refuse("its SKILL.md has no `name`".to_owned())),
    }
    let description = match fields.remove("description") {
        Some(Value::String(text)) if !text.trim().is_empty() => text,
        _ => return Err(refuse("its SKILL.md has no description".to_owned())),
    };
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(refuse(format!(
            "its description is {chars} characters, over the limit of {MAX_DESCRIPTION_CHARS}"
        )));
    }
    let mut frontmatter = SkillFrontmatter::new(name, description);
    for (key, value) in fields {
        frontmatter = frontmatter.with_field(key, value);
    }
    Ok(frontmatter)
}

/// Whether the file `path` of the skill at `at` is what its URI serves. A
/// URI inside a nested skill serves that skill's file: the enclosing skill
/// lists it only when the bytes agree (they always do for a skill nested in
/// the folder; two roots can disagree).
async fn served_as_listed(
    provider: &dyn SkillProvider,
    index: &SkillIndex,
    at: &Entry,
    path: &str,
    bytes: &[u8],
) -> bool {
    let uri = SkillUri {
        path: format!("{}/{path}", at.path),
    };
    let Some((owner, inner)) = index.resolve(&uri) else {
        return true;
    };
    if owner.name == at.name {
        return true;
    }
    let same = match provider.read_resource_bytes(&owner.name, inner).await {
        Ok(file) => file.bytes.as_ref() == bytes,
        Err(_) => false,
    };
    if !same {
        tracing::warn!(
            skill = %at.name,
            path,
            nested = %owner.name,
            "a file left out of the manifest: its URI serves the nested skill's file, which differs"
        );
    }
    same
}
