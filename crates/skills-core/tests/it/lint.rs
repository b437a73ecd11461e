//! Lint rules (F-FMT-6) on realistic skills: each rule fires where it should and
//! stays quiet on the look-alikes that are not problems.

use skills_core::{Code, Diagnostic, SkillDocument, ValidationOptions};
use skills_core::{
    MAX_BODY_LINES, ResourceFact, lint_skill, mentioned_paths, narrates_workflow, says_when,
};

use super::support::parse_in_dir;

fn doc(dir: &str, src: &str) -> SkillDocument {
    parse_in_dir(src, dir, &ValidationOptions::lenient())
        .document
        .expect("the skill parses")
}

fn codes(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags.iter().map(|d| d.code.as_str()).collect()
}

fn md(path: &str) -> ResourceFact {
    ResourceFact::new(path, 100)
}

/// A PDF skill as published: the body names `FORMS.md` and `REFERENCE.md`, the
/// files are `forms.md` and `reference.md`.
const PDF: &str = "---\nname: pdf\ndescription: Comprehensive PDF manipulation toolkit for extracting text and tables, creating new PDFs, merging/splitting documents, and handling forms. When Claude needs to fill in a PDF form or programmatically process, generate, or analyze PDF documents at scale.\nlicense: Proprietary. LICENSE.txt has complete terms\n---\n\n# PDF Processing Guide\n\n## Overview\n\nThis guide covers essential PDF processing operations using Python libraries and command-line tools. For advanced features, JavaScript libraries, and detailed examples, see REFERENCE.md. If you need to fill out a PDF form, read FORMS.md and follow its instructions.\n\n## Quick Start\n\n```python\nfrom pypdf import PdfReader, PdfWriter\nreader = PdfReader(\"document.pdf\")\n```\n\n### Command-line\n\n```bash\nqpdf --empty --pages file1.pdf file2.pdf -- merged.pdf\npython scripts/check_bounding_boxes.py fields.json\n```\n\nSee https://pypdf.readthedocs.io/en/stable/ for the API, e.g. `PdfReader`.\nSave the result as `output.pdf`.\n";

#[test]
fn case_only_mismatch_says_did_you_mean() {
    let d = doc("pdf", PDF);
    let facts = [
        md("LICENSE.txt"),
        md("SKILL.md"),
        md("forms.md"),
        md("reference.md"),
    ];
    let lint = lint_skill(&d, &facts);
    assert_eq!(
        codes(&lint),
        vec!["lint-file-case", "lint-file-case"],
        "{lint:#?}"
    );
    assert_eq!(
        lint[0].message,
        "the body names `REFERENCE.md` but the file is `reference.md`: did you mean `reference.md`? (on a case-sensitive file system the name does not match)"
    );
    assert!(lint[1].message.contains("did you mean `forms.md`?"));
    // Both on the Overview paragraph: line 11 of SKILL.md.
    assert_eq!(lint[0].line, Some(11));
    assert!(lint.iter().all(|d| !d.is_error() && d.file.is_none()));
    // Named exactly, the skill is clean: the code blocks, the URL, `e.g.`
    // and the output file name are not file references.
    let facts = [
        md("FORMS.md"),
        md("LICENSE.txt"),
        md("REFERENCE.md"),
        md("SKILL.md"),
    ];
    assert!(lint_skill(&d, &facts).is_empty());
}

#[test]
fn missing_files_in_links_paths_and_read_instructions() {
    let src = "---\nname: api-docs-review\ndescription: Reviews API docs. Use when the user asks for a review.\n---\n# Review\n\n1. Walk through `references/checklist.md`.\n2. Compare with [the style guide](references/style.md#naming \"Style\").\n3. Read GLOSSARY.md for terms.\n4. Run `scripts/lint_openapi.sh` on the spec.\n\n[template]: ./assets/report.md\n";
    let d = doc("api-docs-review", src);
    let lint = lint_skill(&d, &[md("references/checklist.md")]);
    let got: Vec<(&str, Option<u32>)> = lint.iter().map(|d| (d.code.as_str(), d.line)).collect();
    assert_eq!(
        got,
        vec![
            ("lint-missing-file", Some(8)),
            ("lint-missing-file", Some(9)),
            ("lint-missing-file", Some(10)),
            ("lint-missing-file", Some(12)),
        ],
        "{lint:#?}"
    );
    assert!(lint[0].message.contains("`references/style.md`"));
    assert!(lint[1].message.contains("`GLOSSARY.md`"));
    assert!(lint[2].message.contains("`scripts/lint_openapi.sh`"));
    assert!(lint[3].message.contains("`assets/report.md`"));
}

#[test]
fn no_false_positives_on_look_alikes() {
    let src = "---\nname: code-review\ndescription: Reviews a pull request. Use when the user asks for a code review.\n---\n# Code review\n\nOpen the diff (e.g. `src/main.rs` or `lib/utils.py`) and check `Cargo.toml`.\nSee https://example.com/guide.md and [the spec](https://spec.example/SKILL.md).\nJump to [the checklist](#checklist) or [home](/docs/index.md) or [up](../other/SKILL.md).\nWrite the summary to `review.md`, i.e. a short file; mention v1.2 and Node.js.\nUse `~/notes.md`, `$HOME/x.md`, `/tmp/out.json`, `*.md` and `{name}.md`.\nSee `package.json` in the project; | cell.md | table |\n\n```sh\ncat references/absent.md && python scripts/absent.py\n```\n\n~~~\nassets/absent.png\n~~~\n\n## Checklist\n\nSee the [mail](mailto:team@example.com) list.\n";
    let d = doc("code-review", src);
    let lint = lint_skill(&d, &[md("SKILL.md")]);
    assert!(lint.is_empty(), "{lint:#?}");
    assert_eq!(
        mentioned_paths(&d.body),
        vec![
            "src/main.rs",
            "lib/utils.py",
            "Cargo.toml",
            "review.md",
            "Node.js",
            "package.json",
            "cell.md"
        ]
    );
}

#[test]
fn links_to_folders_and_skill_md_are_fine() {
    let src = "---\nname: csv-insights\ndescription: Profiles CSV files. Use when the user shares a CSV.\n---\nSee [the scripts](scripts/) and [this file](SKILL.md) and [refs](./references).\n";
    let d = doc("csv-insights", src);
    let facts = [
        md("references/a.md"),
        md("scripts/profile.py")
            .with_first_line("#!/usr/bin/env python3")
            .with_executable(true),
    ];
    assert!(lint_skill(&d, &facts).is_empty());
}

#[test]
fn nested_references_are_reported_once_at_the_linking_file() {
    let src = "---\nname: finance\ndescription: Answers finance questions. Use when asked about revenue.\n---\nRead [the overview](references/overview.md) and [the glossary](references/glossary.md).\n";
    let d = doc("finance", src);
    let facts = [
        md("references/overview.md").with_links(vec![
            "details.md".to_owned(),
            "glossary.md".to_owned(),
            "../SKILL.md".to_owned(),
            "missing.md".to_owned(),
        ]),
        md("references/glossary.md"),
        md("references/details.md").with_links(vec!["references/deeper.md".to_owned()]),
        md("references/deeper.md"),
    ];
    let lint = lint_skill(&d, &facts);
    assert_eq!(codes(&lint), vec!["lint-nested-reference"], "{lint:#?}");
    assert_eq!(lint[0].file.as_deref(), Some("references/overview.md"));
    assert!(lint[0].message.contains("`references/details.md`"));
    assert!(
        lint[0]
            .message
            .contains("link `references/details.md` from SKILL.md directly")
    );
}

#[test]
fn long_bodies() {
    let long_lines = "line\n".repeat(MAX_BODY_LINES + 1);
    let src = format!("---\nname: big\ndescription: Big. Use when needed.\n---\n{long_lines}");
    let lint = lint_skill(&doc("big", &src), &[]);
    assert_eq!(codes(&lint), vec!["lint-body-too-long"]);
    assert_eq!(lint[0].line, Some(5));
    assert!(lint[0].message.contains("501 lines"));
    // About 5 000 tokens in few lines.
    let wide = "word ".repeat(4_100);
    let src = format!("---\nname: big\ndescription: Big. Use when needed.\n---\n{wide}\n");
    assert_eq!(
        codes(&lint_skill(&doc("big", &src), &[])),
        vec!["lint-body-too-long"]
    );
    // Exactly at the limits: fine.
    let at = "line\n".repeat(MAX_BODY_LINES);
    let src = format!("---\nname: big\ndescription: Big. Use when needed.\n---\n{at}");
    assert!(lint_skill(&doc("big", &src), &[]).is_empty());
}

#[test]
fn descriptions_that_do_not_say_when() {
    let src =
        "---\nname: mapper\ndescription: Maps citation networks of academic papers.\n---\nBody.\n";
    let lint = lint_skill(&doc("mapper", src), &[]);
    assert_eq!(codes(&lint), vec!["lint-description-no-trigger"]);
    assert_eq!(lint[0].line, Some(3));
    // `when_to_use` says it instead.
    let src = "---\nname: mapper\ndescription: Maps citation networks.\nwhen_to_use: a user shares papers\n---\nBody.\n";
    assert!(lint_skill(&doc("mapper", src), &[]).is_empty());
    for ok in [
        "Drafts release notes. Use when preparing a release.",
        "Writes postmortems. Use after an outage is resolved.",
        "Invoke for any spreadsheet question.",
        "Fills forms if the user shares a PDF.",
        "Use this skill for Kubernetes manifests.",
    ] {
        assert!(says_when(ok), "{ok}");
    }
    for bad in [
        "Helps users.",
        "A useful tool for whenceforth data.",
        "Uses the API to list users.",
    ] {
        assert!(!says_when(bad), "{bad}");
    }
}

#[test]
fn descriptions_that_narrate_the_workflow() {
    let src = "---\nname: forms\ndescription: Extracts the fields of a PDF, then merges them with the \
               CRM record, then fills the form. Use when a user shares a PDF form.\n---\nBody.\n";
    let lint = lint_skill(&doc("forms", src), &[]);
    assert_eq!(codes(&lint), vec!["lint-description-workflow"]);
    assert_eq!(lint[0].line, Some(3));
    assert!(
        lint[0].message.contains("`then`, `then`"),
        "{}",
        lint[0].message
    );
    assert!(lint[0].message.contains("keep the steps in the body"));
    for narrated in [
        "First checks the repository, then opens a pull request. Use for releases.",
        "Collects news -> analyses it -> writes the report. Use every morning.",
        "每日报告：新闻采集→分析→飞书文档报告。",
        "Builds the image, followed by a push, and finally a deploy. Use when shipping.",
        "Lints the code. After that it formats it and then commits. Use before a commit.",
    ] {
        assert!(narrates_workflow(narrated).is_some(), "{narrated}");
    }
    for fine in [
        "Fills PDF forms. Use when a user shares a PDF form.",
        "Splits large files. If a file is over 1 GB, then split it first. Use for uploads.",
        "Converts CSV → JSON. Use when a user shares a spreadsheet.",
        "Not for shopping → use personal-shopper. - Not for news → answer directly.",
        "Use to open investigation issues with concrete next steps.",
        "Architecture-first design: plans the layout, then checks it. Use when building a UI.",
    ] {
        assert_eq!(narrates_workflow(fine), None, "{fine}");
    }
}

#[test]
fn scripts_need_a_shebang_and_the_execute_bit() {
    let src = "---\nname: tools\ndescription: Tools. Use when asked.\n---\nRun `scripts/a.py`.\n";
    let d = doc("tools", src);
    let facts = [
        ResourceFact::new("scripts/a.py", 10).with_first_line("import sys"),
        ResourceFact::new("scripts/b.sh", 10).with_first_line("#!/bin/sh"),
        ResourceFact::new("scripts/c", 10)
            .with_first_line("#!/usr/bin/env bash")
            .with_executable(true),
        // Not scripts that run directly: modules, data, Windows, empty files.
        ResourceFact::new("scripts/__init__.py", 10).with_first_line(""),
        ResourceFact::new("scripts/lib/helpers.py", 10).with_first_line("import os"),
        ResourceFact::new("scripts/config.json", 10).with_first_line("{"),
        ResourceFact::new("scripts/run.ps1", 10).with_first_line("param()"),
        ResourceFact::new("scripts/empty.sh", 0),
        ResourceFact::new("references/example.py", 10).with_first_line("import x"),
    ];
    let lint = lint_skill(&d, &facts);
    let got: Vec<(&str, Option<&str>)> = lint
        .iter()
        .map(|d| (d.code.as_str(), d.file.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("lint-script-no-shebang", Some("scripts/a.py")),
            ("lint-script-not-executable", Some("scripts/b.sh")),
        ],
        "{lint:#?}"
    );
    assert!(lint[0].message.contains("#!/usr/bin/env python3"));
    assert!(lint[1].message.contains("chmod +x scripts/b.sh"));
    assert!(lint.iter().all(|d| d.code != Code::LintMissingFile));
}
