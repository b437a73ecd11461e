//! The contract of [`SkillProvider`] as a conformance suite any provider can
//! run (feature `provider`).
//!
//! The suite needs a provider holding exactly the two skills it knows:
//! [`library`] writes them to disk for a file-system provider, and
//! [`in_code_skills`] defines them in code. [`check_all`] runs every check;
//! each is also public, to run alone:
//!
//! ```
//! use skills_core::InCodeProvider;
//! use skills_testkit::provider;
//!
//! let skills = InCodeProvider::new(provider::in_code_skills())?;
//! pollster::block_on(provider::check_all(&skills));
//! # Ok::<(), skills_core::Error>(())
//! ```
//!
//! A provider over folders reads the skills of
//! `provider::library().write_temp()?` instead (skills-fs's tests do).
//!
//! The checks panic (they are test assertions) when the provider breaks the
//! contract.

// Test assertions: a failed check is a panic with the provider's error.
#![allow(clippy::unwrap_used)]

use skills_core::{ErrorKind, InCodeSkill, LineRange, SkillProvider, define_skill};

use crate::fixture::{Library, SkillDir};

/// The first skill: a body and one reference.
pub const ALPHA: &str = "alpha";
/// The description of [`ALPHA`].
pub const ALPHA_DESCRIPTION: &str = "Does the alpha things. Use it for alpha tasks.";
/// The body of [`ALPHA`], as a provider returns it (trimmed).
pub const ALPHA_BODY: &str = "# Alpha\n\nAlpha body.";
/// The path of [`ALPHA`]'s reference.
pub const GUIDE: &str = "references/guide.md";
/// The text of [`GUIDE`]: three lines.
pub const GUIDE_TEXT: &str = "one\ntwo\nthree\n";
/// The second skill: a body only.
pub const BETA: &str = "beta";
/// The description of [`BETA`].
pub const BETA_DESCRIPTION: &str = "Does the beta things. Use it for beta tasks.";
/// The body of [`BETA`].
pub const BETA_BODY: &str = "Beta body.";

/// The suite's skills as folders, for a provider that reads a skills root.
pub fn library() -> Library {
    Library::new()
        .skill(
            SkillDir::new(ALPHA, ALPHA_DESCRIPTION)
                .body(format!("{ALPHA_BODY}\n"))
                .file(GUIDE, GUIDE_TEXT),
        )
        .skill(SkillDir::new(BETA, BETA_DESCRIPTION).body(format!("{BETA_BODY}\n")))
}

/// The suite's skills defined in code, for in-code providers.
pub fn in_code_skills() -> Vec<InCodeSkill> {
    vec![
        define_skill(ALPHA, ALPHA_DESCRIPTION)
            .body(ALPHA_BODY)
            .resource(GUIDE, GUIDE_TEXT)
            .build()
            .unwrap(),
        define_skill(BETA, BETA_DESCRIPTION)
            .body(BETA_BODY)
            .build()
            .unwrap(),
    ]
}

/// Runs every check against `provider`, which must hold exactly the skills
/// of [`library`] / [`in_code_skills`].
pub async fn check_all(provider: &dyn SkillProvider) {
    lists_sorted(provider).await;
    gets_by_name(provider).await;
    unknown_names_are_skill_not_found(provider).await;
    reads_text_and_line_ranges(provider).await;
    missing_files_are_resource_not_found(provider).await;
    refuses_paths_outside_the_skill(provider).await;
    reads_raw_bytes(provider).await;
}

/// `list` gives both skills, sorted by name, with their descriptions.
pub async fn lists_sorted(provider: &dyn SkillProvider) {
    let catalog = provider.list().await.unwrap();
    assert_eq!(catalog.names().collect::<Vec<_>>(), [ALPHA, BETA]);
    assert_eq!(catalog.len(), 2);
    assert_eq!(catalog.get(ALPHA).unwrap().description, ALPHA_DESCRIPTION);
    assert_eq!(catalog.get(BETA).unwrap().description, BETA_DESCRIPTION);
}

/// `get` gives a skill's metadata, trimmed body and resource listing.
pub async fn gets_by_name(provider: &dyn SkillProvider) {
    let alpha = provider.get(ALPHA).await.unwrap();
    assert_eq!(alpha.metadata.name.to_string(), ALPHA);
    assert_eq!(alpha.body, ALPHA_BODY);
    let paths: Vec<&str> = alpha
        .resources
        .entries
        .iter()
        .map(|e| e.path.as_str())
        .collect();
    assert_eq!(paths, [GUIDE]);
    let beta = provider.get(BETA).await.unwrap();
    assert_eq!(beta.body, BETA_BODY);
    assert!(beta.resources.entries.is_empty());
}

/// A name the provider does not have is [`ErrorKind::SkillNotFound`], for
/// `get` and for reads.
pub async fn unknown_names_are_skill_not_found(provider: &dyn SkillProvider) {
    let err = provider.get("gamma").await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SkillNotFound, "{err}");
    let err = provider
        .read_resource("gamma", GUIDE, None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::SkillNotFound, "{err}");
}

/// A text file reads whole, or a line range of it.
pub async fn reads_text_and_line_ranges(provider: &dyn SkillProvider) {
    let whole = provider.read_resource(ALPHA, GUIDE, None).await.unwrap();
    assert_eq!(whole.text, GUIDE_TEXT);
    assert_eq!(whole.path.as_str(), GUIDE);
    assert_eq!(
        (whole.total_lines, whole.first_line, whole.last_line),
        (3, 1, 3)
    );
    assert!(!whole.truncated);
    let range = LineRange::new(2, Some(3)).unwrap();
    let part = provider
        .read_resource(ALPHA, GUIDE, Some(range))
        .await
        .unwrap();
    assert_eq!((part.first_line, part.last_line), (2, 3));
    assert!(part.text.contains("two") && part.text.contains("three"));
    assert!(!part.text.contains("one"), "{:?}", part.text);
}

/// A file the skill does not have is [`ErrorKind::ResourceNotFound`].
pub async fn missing_files_are_resource_not_found(provider: &dyn SkillProvider) {
    let err = provider
        .read_resource(ALPHA, "references/none.md", None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ResourceNotFound, "{err}");
}

/// Paths that leave the skill (traversal, absolute, backslash) are
/// [`ErrorKind::InvalidPath`], for text and byte reads.
pub async fn refuses_paths_outside_the_skill(provider: &dyn SkillProvider) {
    for path in [
        "../beta/SKILL.md",
        "references/../../beta/SKILL.md",
        "/etc/passwd",
        "references\\guide.md",
    ] {
        let err = provider.read_resource(ALPHA, path, None).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPath, "{path}: {err}");
        let err = provider.read_resource_bytes(ALPHA, path).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidPath, "{path}: {err}");
    }
}

/// `read_resource_bytes` gives a file's exact bytes.
pub async fn reads_raw_bytes(provider: &dyn SkillProvider) {
    let raw = provider.read_resource_bytes(ALPHA, GUIDE).await.unwrap();
    assert_eq!(&raw.bytes[..], GUIDE_TEXT.as_bytes());
    assert_eq!(raw.path.as_str(), GUIDE);
}
