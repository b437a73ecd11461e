//! A skill's documents (F-PRV-10): the `.md` and `.txt` files a model may read by
//! name.
//!
//! A *document* is a resource whose path ends in `.md` or `.txt` (ASCII case
//! insensitive) and that either sits beside `SKILL.md` (no `/` in its path;
//! `SKILL.md` itself is never a document) or lives under `references/`, at any
//! depth the resource listing reaches. Scripts, assets and other files are not
//! documents, even when they are Markdown: they stay reachable through
//! [`SkillProvider::read_resource`].
//!
//! A document's name is its relative path (e.g. `references/api.md`). Document
//! lists are sorted by that path in byte order, so they are the same on every
//! machine.
//!
//! Everything here except [`read_doc`] is pure: it works on a [`Skill`] or a
//! [`ResourceListing`] already in hand. [`read_doc`] checks the name against the
//! skill's documents first and only then asks the provider for the file, so a
//! model cannot use it to read anything that is not a document.
//!
//! ```
//! use skills_core::{define_skill, find_doc, list_docs, read_doc, InCodeProvider, ErrorKind};
//! let skill = define_skill("pdf", "Reads PDFs. Use for PDF files.")
//!     .resource("references/forms.md", "# Forms\n")
//!     .resource("notes.txt", "Notes.\n")
//!     .resource("scripts/run.py", "print()\n")
//!     .build()
//!     .expect("valid");
//! let provider = InCodeProvider::new([skill]).expect("provider");
//! pollster::block_on(async {
//!     let text = read_doc(&provider, "pdf", "references/forms.md").await.expect("doc");
//!     assert_eq!(text.text, "# Forms\n");
//!     let err = read_doc(&provider, "pdf", "forms.md").await.expect_err("unknown");
//!     assert_eq!(err.kind(), ErrorKind::ResourceNotFound);
//!     assert_eq!(err.available(), ["notes.txt", "references/forms.md"]);
//! });
//! ```

use crate::error::{Error, ErrorKind, Result};
use crate::provider::{Skill, SkillProvider};
use crate::resource::{LineRange, ResourceContent, ResourceListing, ResourcePath};

/// File extensions (without the dot, compared ASCII case-insensitively) that make
/// a file a document.
pub const DOC_EXTENSIONS: &[&str] = &["md", "txt"];

/// The folder whose `.md`/`.txt` files (at any depth) are documents.
pub const REFERENCES_DIR: &str = "references";

/// `true` when `path` names a document: a `.md` or `.txt` file beside `SKILL.md`
/// (other than `SKILL.md` itself) or under `references/`.
pub fn is_doc(path: &ResourcePath) -> bool {
    let text = path.as_str();
    let Some((_, ext)) = text.rsplit_once('.') else {
        return false;
    };
    if ext.contains('/') || !DOC_EXTENSIONS.iter().any(|e| e.eq_ignore_ascii_case(ext)) {
        return false;
    }
    match text.split_once('/') {
        None => !text.eq_ignore_ascii_case("SKILL.md"),
        Some((first, _)) => first == REFERENCES_DIR,
    }
}

/// The documents in a resource listing, sorted by path (byte order).
pub fn docs_in(listing: &ResourceListing) -> Vec<ResourcePath> {
    let mut docs: Vec<ResourcePath> = listing
        .entries
        .iter()
        .map(|e| &e.path)
        .filter(|p| is_doc(p))
        .cloned()
        .collect();
    docs.sort();
    docs.dedup();
    docs
}

/// The documents of `skill`, sorted by path (byte order). Each one's name is its
/// relative path.
pub fn list_docs(skill: &Skill) -> Vec<ResourcePath> {
    docs_in(&skill.resources)
}

/// Looks `doc` up among the documents of `skill`.
///
/// When the skill's listing is not complete (files omitted at its cap, or its
/// walk cut short), a name that has
/// the shape of a document is accepted even if it is not listed: the provider's
/// read then decides whether the file exists.
///
/// # Errors
/// [`ErrorKind::ResourceNotFound`] when `doc` is not one of the skill's documents
/// (including names that are not valid paths, and files that exist but are not
/// documents); the message names `doc` and [`Error::available`] lists the
/// skill's document names.
pub fn find_doc(skill: &Skill, doc: &str) -> Result<ResourcePath> {
    let docs = list_docs(skill);
    if let Some(found) = docs.iter().find(|d| d.as_str() == doc) {
        return Ok(found.clone());
    }
    let parsed = ResourcePath::parse(doc).ok();
    if let Some(path) = &parsed
        && is_doc(path)
        && !skill.resources.is_complete()
    {
        return Ok(path.clone());
    }
    let shown = doc.escape_debug();
    let name = skill.name();
    let why = match &parsed {
        Some(path) if !is_doc(path) => format!(
            "skill `{name}` has no document `{shown}`: documents are the .md and .txt files beside SKILL.md and under references/"
        ),
        _ => format!("skill `{name}` has no document `{shown}`"),
    };
    let available = docs.iter().map(|d| d.as_str().to_owned()).collect();
    Err(Error::new(ErrorKind::ResourceNotFound, why).with_available(available))
}

/// Reads the document `doc` of the skill named `skill` through `provider`.
///
/// The name is checked against the skill's documents ([`find_doc`]) before the
/// provider's [`read_resource`](SkillProvider::read_resource) runs, so the
/// provider's own path checks (containment, size, binary) still apply on top.
///
/// # Errors
/// Whatever [`SkillProvider::get`] returns (e.g. [`ErrorKind::SkillNotFound`]),
/// [`ErrorKind::ResourceNotFound`] listing the documents for an unknown `doc`,
/// then the errors of [`SkillProvider::read_resource`].
pub async fn read_doc<P>(provider: &P, skill: &str, doc: &str) -> Result<ResourceContent>
where
    P: SkillProvider + ?Sized,
{
    read_doc_range(provider, skill, doc, None).await
}

/// [`read_doc`] with an optional line range.
///
/// # Errors
/// As for [`read_doc`], plus [`ErrorKind::InvalidRange`] for a range outside the
/// document.
pub async fn read_doc_range<P>(
    provider: &P,
    skill: &str,
    doc: &str,
    range: Option<LineRange>,
) -> Result<ResourceContent>
where
    P: SkillProvider + ?Sized,
{
    let loaded = provider.get(skill).await?;
    let path = find_doc(&loaded, doc)?;
    provider.read_resource(skill, path.as_str(), range).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> ResourcePath {
        ResourcePath::parse(p).expect("valid path")
    }

    #[test]
    fn what_is_a_doc() {
        for yes in [
            "notes.md",
            "README.TXT",
            "Guide.Md",
            "references/a.md",
            "references/deep/er/b.txt",
        ] {
            assert!(is_doc(&path(yes)), "{yes}");
        }
        for no in [
            "SKILL.md",
            "skill.md",
            "script.py",
            "md",
            ".md.py",
            "scripts/a.md",
            "assets/readme.txt",
            "other/x.md",
            "references/image.png",
            "references.md/x.py",
            "referencesx/a.md",
        ] {
            assert!(!is_doc(&path(no)), "{no}");
        }
    }
}
