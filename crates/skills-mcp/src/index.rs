//! Which skill a `skill://` URI names, for one catalog snapshot.
//!
//! Built once per catalog snapshot (a new one only when the provider's
//! catalog changes), so a request resolves its URI with a few hash lookups:
//! one per `/` of the URI at most, the longest skill path first.

use std::collections::HashMap;

use skills_core::Catalog;

use crate::uri::{SKILL_MD, SkillUri, skill_path, skill_uri};

/// One skill of the index.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The skill's name.
    pub(crate) name: String,
    /// Its path in URIs (see [`skill_path`]).
    pub(crate) path: String,
    /// The URI of its `SKILL.md`, the order of `skills/list`.
    pub(crate) uri: String,
}

/// The skills of one catalog by URI.
#[derive(Debug)]
pub(crate) struct SkillIndex {
    catalog: Catalog,
    /// Sorted by `uri`, as rmcp's folder catalog lists its skills.
    entries: Vec<Entry>,
    by_path: HashMap<String, usize>,
}

impl SkillIndex {
    pub(crate) fn new(catalog: Catalog) -> Self {
        let mut entries: Vec<Entry> = catalog
            .entries()
            .iter()
            .map(|metadata| {
                let path = skill_path(metadata);
                Entry {
                    name: metadata.name.as_str().to_owned(),
                    uri: skill_uri(&path, SKILL_MD),
                    path,
                }
            })
            .collect();
        entries.sort_by(|a, b| a.uri.cmp(&b.uri));
        let by_path = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.clone(), i))
            .collect();
        Self {
            catalog,
            entries,
            by_path,
        }
    }

    /// The catalog this index was built from.
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The skill `uri` points into and the file's path inside it (`""` for
    /// the skill folder): the skill with the longest path the URI starts with.
    pub(crate) fn resolve<'u>(&self, uri: &'u SkillUri) -> Option<(&Entry, &'u str)> {
        uri.splits()
            .find_map(|(skill, file)| Some((&self.entries[*self.by_path.get(skill)?], file)))
    }

    /// The skill whose `SKILL.md` is `uri`, exactly as listed.
    pub(crate) fn by_skill_md(&self, uri: &SkillUri) -> Option<&Entry> {
        let skill = uri.path.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
        self.by_path.get(skill).map(|&i| &self.entries[i])
    }

    /// At most `size` skills after the cursor `after` (the `SKILL.md` URI
    /// that ended the previous page), and the cursor of the next page.
    pub(crate) fn page(&self, after: Option<&str>, size: usize) -> (&[Entry], Option<String>) {
        let start = after.map_or(0, |after| {
            self.entries.partition_point(|e| e.uri.as_str() <= after)
        });
        let end = start.saturating_add(size).min(self.entries.len());
        let page = &self.entries[start..end];
        let next = (end < self.entries.len())
            .then(|| page.last().map(|e| e.uri.clone()))
            .flatten();
        (page, next)
    }
}

#[cfg(test)]
mod tests {
    use skills_core::{SkillMetadata, SkillName};

    use super::*;

    fn index() -> SkillIndex {
        let meta = |name: &str, path: &str| {
            SkillMetadata::new(SkillName::parse(name).expect("name"), "x").with_path(path)
        };
        SkillIndex::new(Catalog::new(vec![
            meta("billing", "acme/billing"),
            meta("refunds", "acme/billing/refunds"),
            meta("alpha", "alpha"),
            SkillMetadata::new(SkillName::parse("zeta").expect("name"), "x"),
        ]))
    }

    #[test]
    fn the_longest_skill_path_wins() {
        let index = index();
        let resolve = |uri: &str| {
            let uri = SkillUri::parse(uri).expect("parses");
            index
                .resolve(&uri)
                .map(|(e, file)| (e.name.clone(), file.to_owned()))
        };
        let pair = |name: &str, file: &str| Some((name.to_owned(), file.to_owned()));
        assert_eq!(
            resolve("skill://acme/billing/SKILL.md"),
            pair("billing", "SKILL.md")
        );
        assert_eq!(
            resolve("skill://acme/billing/refunds/SKILL.md"),
            pair("refunds", "SKILL.md")
        );
        assert_eq!(resolve("skill://acme/billing/refunds"), pair("refunds", ""));
        assert_eq!(
            resolve("skill://acme/billing/notes/a.md"),
            pair("billing", "notes/a.md")
        );
        assert_eq!(resolve("skill://zeta/SKILL.md"), pair("zeta", "SKILL.md"));
        assert_eq!(resolve("skill://acme/SKILL.md"), None);
        assert_eq!(resolve("skill://billing/SKILL.md"), None);
    }

    #[test]
    fn pages_follow_the_uris() {
        let index = index();
        let (page, next) = index.page(None, 2);
        let names: Vec<&str> = page.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["billing", "refunds"]);
        let (page, next) = index.page(next.as_deref(), 2);
        let names: Vec<&str> = page.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
        assert_eq!(next, None);
        assert_eq!(index.page(Some("skill://zz"), 2).0.len(), 0);
    }
}
