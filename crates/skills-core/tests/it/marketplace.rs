//! Lenient mode loads every skill of a marketplace-shaped library (F-FMT-3):
//! titles as names in folders over 64 characters, folders that are not names,
//! missing names, empty and missing descriptions, bodies without a paragraph.
//! Strict mode still refuses all of them.

use std::collections::BTreeSet;

use skills_core::{Code, MAX_DESCRIPTION_CHARS, Mode, ValidationOptions, is_portable};
use skills_testkit::marketplace::{MarketSkill, generate};

use super::support::parse_in_dir;

/// The codes lenient mode may give a marketplace skill: each says what was
/// taken from elsewhere, and none stops the skill from loading.
const EXPECTED_WARNINGS: &[Code] = &[
    Code::PortabilityTitleAsName,
    Code::PortabilityExtensionField,
    Code::NameTooLong,
    Code::NameMissing,
    Code::DescriptionEmpty,
    Code::DescriptionMissing,
];

fn lenient() -> ValidationOptions {
    ValidationOptions::lenient().with_portability_warnings(true)
}

#[test]
fn every_generated_skill_loads_in_lenient_mode() {
    let skills = generate(2026, 2_900);
    let count = |f: fn(&MarketSkill) -> bool| skills.iter().filter(|s| f(s)).count();
    // The library has every shape this test is about.
    assert!(count(|s| s.long_folder) > 400);
    assert!(count(|s| s.long_folder && !s.missing_name) > 400);
    assert!(count(|s| s.odd_folder) > 5);
    assert!(count(|s| s.missing_name) > 3);
    assert!(count(|s| s.empty_description && !s.missing_description) > 40);
    assert!(count(|s| s.missing_description) > 10);
    assert!(count(|s| s.paragraphless_body) > 5);

    let mut names = BTreeSet::new();
    for skill in &skills {
        let out = parse_in_dir(&skill.skill_md, &skill.folder, &lenient());
        let Some(doc) = out.document.as_ref() else {
            panic!("{} does not load: {:?}", skill.folder, out.diagnostics);
        };
        let meta = &doc.metadata;
        assert_eq!(meta.name.as_str(), skill.name, "{}", skill.folder);
        assert!(names.insert(skill.name.clone()), "{} twice", skill.name);
        assert!(!is_portable(&out.diagnostics));
        for d in &out.diagnostics {
            assert!(EXPECTED_WARNINGS.contains(&d.code), "{}: {d}", skill.folder);
        }
        let has = |code: Code| out.diagnostics.iter().any(|d| d.code == code);
        assert_eq!(
            has(Code::NameTooLong),
            skill.long_folder,
            "{}",
            skill.folder
        );
        assert_eq!(has(Code::NameMissing), skill.missing_name);
        assert_eq!(has(Code::PortabilityTitleAsName), !skill.missing_name);
        assert_eq!(
            meta.title.as_deref(),
            (!skill.missing_name).then_some(skill.title.as_str())
        );

        // The description: as written, else the body's first paragraph (the
        // title, which every generated body starts with as a heading), else the
        // title or the name.
        assert!(!meta.description.is_empty());
        assert!(meta.description.chars().count() <= MAX_DESCRIPTION_CHARS);
        assert_eq!(
            has(Code::DescriptionEmpty),
            skill.empty_description && !skill.missing_description
        );
        assert_eq!(has(Code::DescriptionMissing), skill.missing_description);
        if skill.empty_description {
            let expected = if skill.paragraphless_body && skill.missing_name {
                skill.name.as_str()
            } else {
                skill.title.as_str()
            };
            assert_eq!(meta.description, expected, "{}", skill.folder);
        } else {
            assert!(
                meta.description
                    .starts_with(&format!("{} helps with", skill.title)),
                "{}",
                meta.description
            );
        }
    }
    assert_eq!(names.len(), skills.len());
}

#[test]
fn strict_mode_still_refuses_them() {
    let strict = ValidationOptions::default().with_mode(Mode::Strict);
    for skill in generate(2026, 600) {
        let out = parse_in_dir(&skill.skill_md, &skill.folder, &strict);
        assert!(out.document.is_none(), "{}", skill.folder);
        if skill.empty_description {
            let code = if skill.missing_description {
                Code::DescriptionMissing
            } else {
                Code::DescriptionEmpty
            };
            assert!(
                out.diagnostics
                    .iter()
                    .any(|d| d.code == code && d.is_error()),
                "{}: {:?}",
                skill.folder,
                out.diagnostics
            );
        }
    }
}
