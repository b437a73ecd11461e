//! Real skill libraries load (a marketplace-shaped library), and the lint facts
//! gathered from a real skill folder give the right warnings.

use std::fs;
use std::path::Path;

use skills_core::{Code, Mode, SkillProvider, ValidationOptions};
use skills_fs::{FsOptions, FsProvider, SkillFs, lint_skill_dir, resource_facts};
use skills_testkit::fixture::SkillDir;
use skills_testkit::marketplace::MarketSkill;

use super::support::{block_on, write_file};

#[test]
fn every_marketplace_skill_loads() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let stats = skills_testkit::marketplace::write(tmp.path(), 2026, 2_900).expect("write");
    assert_eq!(stats.skills, 2_900);
    let empty = stats.skills - stats.with_description;
    assert!(
        (60..=180).contains(&empty),
        "about 4 % empty or missing: {empty}"
    );
    assert!(stats.missing_description > 10);
    assert!(stats.paragraphless_bodies > 5);
    assert!(stats.long_folders > 400, "{}", stats.long_folders);
    assert!(stats.odd_folders > 5);
    assert!(stats.missing_name > 3);
    assert!(stats.with_extension_fields > stats.skills / 2);

    // Every folder loads (F-FMT-3): a title in a folder over 64 characters, a
    // folder that is not a name, a missing name or description.
    let provider = FsProvider::new([tmp.path()], FsOptions::default());
    let catalog = block_on(provider.list()).expect("list");
    assert_eq!(catalog.len(), stats.skills);
    let diagnostics = block_on(provider.diagnostics());
    let errors: Vec<_> = diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(
        !diagnostics.iter().any(|d| d.code == Code::SkillDuplicate),
        "no two generated skills share a name"
    );

    // Loaded under the folder name (or the name derived from it), with the
    // title kept and a description from the body when it has none.
    let generated = skills_testkit::marketplace::generate(2026, 2_900);
    for pick in [
        |s: &&MarketSkill| !s.empty_description && !s.long_folder,
        |s: &&MarketSkill| s.long_folder && !s.missing_name,
        |s: &&MarketSkill| s.odd_folder,
        |s: &&MarketSkill| s.empty_description && !s.missing_name,
    ] {
        let skill = generated.iter().find(pick).expect("one of each shape");
        let loaded = block_on(provider.get(&skill.name)).expect("get");
        assert_eq!(loaded.metadata.name.as_str(), skill.name);
        if !skill.missing_name {
            assert_eq!(loaded.metadata.title.as_deref(), Some(skill.title.as_str()));
        }
        if skill.empty_description {
            assert_eq!(loaded.metadata.description, skill.title);
        }
    }

    // Strict mode still refuses every one of them (the titles are not names).
    let strict = FsOptions::default().with_validation(ValidationOptions::strict());
    let found = SkillFs::new(strict.clone()).discover(&[tmp.path().to_path_buf()]);
    assert_eq!(found.skills.iter().filter(|s| s.is_valid()).count(), 0);
    assert_eq!(strict.validation.mode, Mode::Strict);
}

/// A name derived from a folder that is not a valid name can equal another
/// skill's name: the providers' collision rule applies, with a warning naming
/// both folders, never silently.
#[test]
fn a_derived_name_that_collides_is_reported() {
    let tmp = tempfile::tempdir().expect("tempdir");
    write_file(
        &tmp.path().join("PDF_Tools/SKILL.md"),
        "---\nname: PDF Tools\ndescription: Derived.\n---\nBody\n",
    );
    write_file(
        &tmp.path().join("pdf-tools/SKILL.md"),
        "---\nname: pdf-tools\ndescription: Written.\n---\nBody\n",
    );
    let provider = FsProvider::new([tmp.path()], FsOptions::default());
    let catalog = block_on(provider.list()).expect("list");
    assert_eq!(catalog.len(), 1);
    let duplicates: Vec<_> = block_on(provider.diagnostics())
        .into_iter()
        .filter(|d| d.code == Code::SkillDuplicate)
        .collect();
    assert_eq!(duplicates.len(), 1, "{duplicates:?}");
    assert!(
        duplicates[0].message.contains("PDF_Tools") && duplicates[0].message.contains("pdf-tools"),
        "{}",
        duplicates[0].message
    );
}

/// A skill shaped like a well-known PDF skill, whose body names `FORMS.md` and
/// `REFERENCE.md` while the files are `forms.md` and `reference.md`.
fn pdf_skill(root: &Path) -> std::path::PathBuf {
    SkillDir::new(
        "pdf",
        "Comprehensive PDF manipulation toolkit for extracting text and tables, creating new PDFs, merging and splitting documents, and handling forms.",
    )
    .frontmatter_line("license: Proprietary")
    .body("\n# PDF Processing Guide\n\n## Overview\n\nFor advanced features, JavaScript libraries, and detailed examples, see REFERENCE.md.\nIf you need to fill out a PDF form, read FORMS.md and follow its instructions.\n\nCheck fields with `scripts/check_fillable_fields.py`, then [fill them](scripts/fill_form.py).\nSee https://pypi.org/project/pypdf/ and [the top](#overview), e.g. for `output.pdf`.\n\n```bash\npython scripts/not_a_file.py input.pdf\n```\n\nThe schema is in `references/schema.md`.\n")
    .file("forms.md", "# Forms\n\nUse `scripts/fill_form.py`.\n")
    .file(
        "reference.md",
        "# Reference\n\nThe details are in [details](references/details.md).\n",
    )
    .file("references/details.md", "# Details\n")
    .file("scripts/check_fillable_fields.py", "import sys\n")
    .file("scripts/fill_form.py", "#!/usr/bin/env python3\nimport sys\n")
    .write_in(root)
    .expect("write the pdf skill")
}

#[test]
fn facts_describe_every_file_reading_only_the_first_line_of_scripts() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = pdf_skill(tmp.path());
    write_file(&dir.join(".git/config"), "x");
    write_file(
        &dir.join("scripts/big.sh"),
        format!("#!/bin/sh\n{}", "x".repeat(100_000)),
    );
    let facts = resource_facts(&dir).expect("facts");
    let paths: Vec<&str> = facts.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "SKILL.md",
            "forms.md",
            "reference.md",
            "references/details.md",
            "scripts/big.sh",
            "scripts/check_fillable_fields.py",
            "scripts/fill_form.py"
        ]
    );
    let big = &facts[4];
    assert_eq!(big.first_line.as_deref(), Some("#!/bin/sh"));
    assert_eq!(big.size, 100_010);
    assert_eq!(facts[2].links, vec!["references/details.md"]);
    assert!(resource_facts(&tmp.path().join("absent")).is_err());
}

#[cfg(unix)]
#[test]
fn lint_of_a_pdf_skill_on_disk() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = pdf_skill(tmp.path());
    let fill = dir.join("scripts/fill_form.py");
    fs::set_permissions(&fill, fs::Permissions::from_mode(0o644)).expect("chmod");
    let found = SkillFs::new(FsOptions::default()).discover(&[tmp.path().to_path_buf()]);
    let skill = &found.skills[0];
    let doc = skill.document.as_ref().expect("parses");
    let md = skill.skill_md.as_ref().expect("md");
    let lint = lint_skill_dir(&skill.dir, md, doc);
    let got: Vec<(String, &str, Option<u32>)> = lint
        .iter()
        .map(|d| {
            let file = d.file.clone().unwrap_or_default();
            let rel = Path::new(&file)
                .strip_prefix(&dir)
                .map(|p| p.display().to_string())
                .unwrap_or(file);
            (rel, d.code.as_str(), d.line)
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("SKILL.md".to_owned(), "lint-file-case", Some(11)),
            ("SKILL.md".to_owned(), "lint-file-case", Some(12)),
            ("SKILL.md".to_owned(), "lint-missing-file", Some(21)),
            ("reference.md".to_owned(), "lint-nested-reference", None),
            (
                "SKILL.md".to_owned(),
                "lint-description-no-trigger",
                Some(3)
            ),
            (
                "scripts/check_fillable_fields.py".to_owned(),
                "lint-script-no-shebang",
                Some(1)
            ),
            (
                "scripts/fill_form.py".to_owned(),
                "lint-script-not-executable",
                None
            ),
        ],
        "{lint:#?}"
    );
    assert!(lint[0].message.contains("did you mean `reference.md`?"));
    assert!(lint.iter().all(|d| !d.is_error()));

    // Fixed, the skill is clean.
    fs::set_permissions(&fill, fs::Permissions::from_mode(0o755)).expect("chmod");
    let check = dir.join("scripts/check_fillable_fields.py");
    fs::write(&check, "#!/usr/bin/env python3\nimport sys\n").expect("write");
    fs::set_permissions(&check, fs::Permissions::from_mode(0o755)).expect("chmod");
    fs::rename(dir.join("forms.md"), dir.join("FORMS.md")).expect("mv");
    fs::rename(dir.join("reference.md"), dir.join("REFERENCE.md")).expect("mv");
    write_file(&dir.join("references/schema.md"), "# Schema\n");
    let text = fs::read_to_string(md).expect("read").replace(
        "handling forms.",
        "handling forms. Use when the user works with PDF files.",
    );
    let text = text.replace(
        "The schema is in",
        "The details are in [details](references/details.md); the schema is in",
    );
    fs::write(md, text).expect("write");
    let found = SkillFs::new(FsOptions::default()).discover(&[tmp.path().to_path_buf()]);
    let skill = &found.skills[0];
    let lint = lint_skill_dir(&skill.dir, md, skill.document.as_ref().expect("doc"));
    assert!(lint.is_empty(), "{lint:#?}");
}

#[cfg(unix)]
#[test]
fn facts_survive_symlink_loops_fifos_and_links_out() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("skill");
    write_file(
        &dir.join("SKILL.md"),
        "---\nname: skill\ndescription: d\n---\nBody.\n",
    );
    write_file(
        &tmp.path().join("outside.md"),
        "[secret](references/x.md)\n",
    );
    fs::create_dir_all(dir.join("references")).expect("mkdir");
    symlink(&dir, dir.join("references/loop")).expect("loop");
    symlink(tmp.path().join("outside.md"), dir.join("references/out.md")).expect("link");
    symlink("/dev/zero", dir.join("references/zero.md")).expect("device");
    let fifo = dir.join("scripts/pipe.sh");
    fs::create_dir_all(dir.join("scripts")).expect("mkdir");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let facts = resource_facts(&dir).expect("facts");
    let paths: Vec<&str> = facts.iter().map(|f| f.path.as_str()).collect();
    // The loop is not walked, the device and the FIFO are left out.
    assert_eq!(paths, vec!["SKILL.md", "references/out.md"]);
    assert!(facts[1].links.is_empty(), "a link out is not read");
    if made.is_ok_and(|s| s.success()) {
        assert!(fifo.exists());
    }
}
