//! Hostile and malformed input at the core level: size, alias bombs, nesting,
//! encodings, duplicate keys, tabs and NUL bytes.

use skills_core::DEFAULT_MAX_FRONTMATTER_BYTES;
use skills_core::{Mode, Origin, ValidationOptions, parse_skill_md, parse_skill_md_bytes};

use super::support::{codes, parse_in_dir};

fn both_modes() -> [ValidationOptions; 2] {
    [ValidationOptions::strict(), ValidationOptions::lenient()]
}

/// Runs one hostile case. No time limit is asserted (speed is measured by the
/// criterion benches); the point is that it returns, with a diagnostic.
fn case<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let _ = what;
    f()
}

#[test]
fn ten_megabyte_frontmatter_is_refused() {
    let big_line = format!(
        "---\nname: big\ndescription: {}\n---\nbody\n",
        "x".repeat(10 * 1024 * 1024)
    );
    let many_lines = format!(
        "---\nname: big\n{}description: d\n---\nbody\n",
        "k: v\n".repeat(2 * 1024 * 1024)
    );
    let crlf = many_lines.replace('\n', "\r\n");
    for (label, src) in [
        ("one line", &big_line),
        ("many lines", &many_lines),
        ("crlf", &crlf),
    ] {
        assert!(src.len() >= 10 * 1024 * 1024, "{label}");
        for options in both_modes() {
            let outcome = case(label, || parse_in_dir(src, "big", &options));
            assert_eq!(codes(&outcome), vec!["frontmatter-too-large"], "{label}");
            assert!(outcome.document.is_none());
            let d = &outcome.diagnostics[0];
            assert_eq!(d.line, Some(2));
            assert!(
                d.message.contains(&format!(
                    "the limit is {DEFAULT_MAX_FRONTMATTER_BYTES} bytes"
                )),
                "{}",
                d.message
            );
        }
    }
}

#[test]
fn a_big_body_is_fine() {
    let src = format!(
        "---\nname: big-body\ndescription: d\n---\n{}",
        "Some text.\n".repeat(1024 * 1024)
    );
    let outcome = case("big body", || {
        parse_in_dir(&src, "big-body", &ValidationOptions::strict())
    });
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
    assert!(outcome.document.is_some());
}

/// Ten levels of ten aliases each: 10^10 nodes if expanded.
fn billion_laughs() -> String {
    let mut src = String::from(
        "---\nname: lol\ndescription: laughs\nmetadata:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        let items = [prev.as_str(); 10].join(", ");
        src.push_str(&format!("  a{i}: &a{i} [{items}]\n"));
    }
    src.push_str("---\nbody\n");
    src
}

#[test]
fn alias_bomb_strict_is_an_anchor_error() {
    let src = billion_laughs();
    let outcome = case("strict bomb", || {
        parse_in_dir(&src, "lol", &ValidationOptions::strict())
    });
    assert_eq!(codes(&outcome), vec!["yaml-anchor"]);
    assert_eq!(outcome.diagnostics[0].line, Some(5));
    assert!(outcome.document.is_none());
}

#[test]
fn alias_bomb_lenient_hits_the_node_budget() {
    let src = billion_laughs();
    let outcome = case("lenient bomb", || {
        parse_in_dir(&src, "lol", &ValidationOptions::lenient())
    });
    assert_eq!(codes(&outcome), vec!["yaml-alias-budget"]);
    assert!(outcome.document.is_none());
}

#[test]
fn block_style_alias_bomb_hits_the_node_budget() {
    // The same bomb in block style (no flow collections).
    let mut src = String::from("---\nname: lol\ndescription: laughs\na0: &a0\n");
    src.push_str(&"  - lol\n".repeat(10));
    for i in 1..12 {
        src.push_str(&format!("a{i}: &a{i}\n"));
        src.push_str(&format!("  - *a{}\n", i - 1).repeat(10));
    }
    src.push_str("---\n");
    let outcome = case("block bomb", || {
        parse_in_dir(&src, "lol", &ValidationOptions::lenient())
    });
    assert_eq!(codes(&outcome), vec!["yaml-alias-budget"]);
}

#[test]
fn small_aliases_are_fine_in_lenient_mode() {
    let src = "---\nname: alias\ndescription: &d Shared text.\nwhen_to_use: *d\n---\n";
    let outcome = parse_in_dir(src, "alias", &ValidationOptions::lenient());
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
    let meta = outcome.document.expect("loads").metadata;
    assert_eq!(meta.extensions.when_to_use.as_deref(), Some("Shared text."));
}

#[test]
fn deeply_nested_yaml_is_refused() {
    let flow = format!(
        "---\nname: deep\ndescription: d\nx: {}{}\n---\n",
        "[".repeat(30_000),
        "]".repeat(30_000)
    );
    let mut block = String::from("---\nname: deep\ndescription: d\n");
    for depth in 0..200 {
        block.push_str(&"  ".repeat(depth));
        block.push_str("k:\n");
    }
    block.push_str("---\n");
    let mut seqs = String::from("---\nname: deep\ndescription: d\nx:\n");
    for depth in 1..200 {
        seqs.push_str(&"  ".repeat(depth));
        seqs.push_str("-\n");
    }
    seqs.push_str("---\n");
    let cases = [
        // The scanner's own flow-depth limit may fire before ours.
        (
            "flow",
            &flow,
            &["yaml-flow-style", "yaml-too-deep", "yaml-invalid"][..],
        ),
        ("block mappings", &block, &["yaml-too-deep"][..]),
        ("block sequences", &seqs, &["yaml-too-deep"][..]),
    ];
    for (label, src, allowed) in cases {
        for options in both_modes() {
            let outcome = case(label, || parse_in_dir(src, "deep", &options));
            assert!(outcome.document.is_none(), "{label}");
            assert_eq!(
                outcome.diagnostics.len(),
                1,
                "{label}: {:?}",
                outcome.diagnostics
            );
            let code = outcome.diagnostics[0].code.as_str();
            assert!(
                allowed.contains(&code),
                "{label} {:?}: {code}",
                options.mode
            );
            if options.mode == Mode::Strict && label == "flow" {
                assert_eq!(code, "yaml-flow-style");
            }
        }
    }
}

#[test]
fn nesting_just_under_the_limit_loads() {
    // Depth 32 counts the root mapping and `metadata`-like containers.
    let mut src = String::from("---\nname: nest\ndescription: d\nx:\n");
    for depth in 1..31 {
        src.push_str(&"  ".repeat(depth));
        src.push_str("k:\n");
    }
    src.push_str(&"  ".repeat(31));
    src.push_str("k: v\n---\n");
    let outcome = parse_in_dir(&src, "nest", &ValidationOptions::lenient());
    assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
}

#[test]
fn non_utf8_is_located() {
    let src = b"---\nname: bytes\ndescription: caf\xe9 au lait\n---\n";
    for options in both_modes() {
        let outcome = parse_skill_md_bytes(
            src,
            Origin::new(Some("bytes/SKILL.md"), Some("bytes")),
            &options,
        );
        assert!(outcome.document.is_none());
        assert_eq!(
            outcome
                .diagnostics
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            vec![
                "bytes/SKILL.md:3: error[not-utf8]: SKILL.md is not valid UTF-8 (invalid byte at offset 32); save it as UTF-8"
            ]
        );
    }
    // A lone continuation byte on line 1 and a truncated sequence at the end.
    for (bytes, line) in [(&b"\x80---\n"[..], 1), (&b"---\nname: a\n\xe2\x82"[..], 3)] {
        let outcome = parse_skill_md_bytes(bytes, Origin::default(), &ValidationOptions::lenient());
        assert_eq!(codes(&outcome), vec!["not-utf8"]);
        assert_eq!(outcome.diagnostics[0].line, Some(line));
    }
    // Latin-1 bytes are not silently decoded; a UTF-16 BOM is not UTF-8 either.
    let outcome = parse_skill_md_bytes(
        b"\xff\xfe-\0-\0-\0",
        Origin::default(),
        &ValidationOptions::lenient(),
    );
    assert_eq!(codes(&outcome), vec!["not-utf8"]);
}

#[test]
fn empty_and_fence_only_files() {
    let cases: &[(&str, &[&str])] = &[
        ("", &["frontmatter-missing"]),
        ("\n", &["frontmatter-missing"]),
        ("   \n", &["frontmatter-missing"]),
        ("\u{feff}", &["frontmatter-missing"]),
        ("---", &["frontmatter-unclosed"]),
        ("---\n", &["frontmatter-unclosed"]),
        ("---\r\n", &["frontmatter-unclosed"]),
        ("---\njust text\n---\n", &["frontmatter-not-mapping"]),
        ("----\nname: a\n----\n", &["frontmatter-missing"]),
        (" ---\nname: a\n---\n", &["frontmatter-missing"]),
    ];
    for (src, expected) in cases {
        for options in both_modes() {
            let outcome = parse_skill_md(src, Origin::default(), &options);
            assert_eq!(&codes(&outcome), expected, "{src:?} {:?}", options.mode);
            assert!(outcome.document.is_none());
            assert_eq!(outcome.diagnostics[0].line.map(|l| l <= 2), Some(true));
        }
    }
    // An empty frontmatter is not a mapping in strict mode; lenient mode reads it
    // as one without fields, so the missing name and description are what stop
    // a skill that has no folder and no body to take them from.
    for src in [
        "---\n---",
        "---\n---\n",
        "---\n\n---\n",
        "---\n# only a comment\n---\n",
    ] {
        let strict = parse_skill_md(src, Origin::default(), &ValidationOptions::strict());
        assert_eq!(codes(&strict), vec!["frontmatter-not-mapping"], "{src:?}");
        let lenient = parse_skill_md(src, Origin::default(), &ValidationOptions::lenient());
        assert_eq!(
            codes(&lenient),
            vec!["name-missing", "description-missing"],
            "{src:?}"
        );
        assert!(lenient.document.is_none());
        assert!(lenient.diagnostics.iter().all(|d| d.line == Some(1)));
    }
    let outcome = parse_skill_md_bytes(b"", Origin::default(), &ValidationOptions::strict());
    assert_eq!(codes(&outcome), vec!["frontmatter-missing"]);
    assert_eq!(outcome.diagnostics[0].line, Some(1));
}

#[test]
fn bom_and_crlf_are_accepted() {
    let src = "\u{feff}---\r\nname: crlf\r\ndescription: >-\r\n  Two\r\n  lines.\r\nmetadata:\r\n  k: v\r\n---\r\n# Body\r\n\r\nTools:\r\n- t1\r\n";
    for options in both_modes() {
        let outcome = parse_in_dir(src, "crlf", &options);
        assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
        let doc = outcome.document.expect("loads");
        assert_eq!(doc.metadata.description, "Two lines.");
        assert_eq!(doc.metadata.declared_tools, vec!["t1"]);
        assert_eq!(doc.body, "# Body\n\nTools:\n- t1");
        assert!(!doc.metadata.raw_frontmatter.contains('\r'));
        assert!(!doc.metadata.raw_frontmatter.starts_with('\u{feff}'));
    }
    // Old Mac line endings too; and the BOM is only stripped once.
    let cr = "---\rname: cr\rdescription: d\r---\rbody\r";
    assert!(parse_in_dir(cr, "cr", &ValidationOptions::strict()).is_valid());
    let two_boms = "\u{feff}\u{feff}---\nname: a\ndescription: d\n---\n";
    assert_eq!(
        codes(&parse_skill_md(
            two_boms,
            Origin::default(),
            &ValidationOptions::lenient()
        )),
        vec!["frontmatter-missing"]
    );
}

#[test]
fn duplicate_keys_strict_error_lenient_last_wins() {
    let src = "---\nname: dup\ndescription: first\nlicense: MIT\ndescription: second\n---\n";
    let strict = parse_in_dir(src, "dup", &ValidationOptions::strict());
    assert_eq!(codes(&strict), vec!["yaml-duplicate-key"]);
    assert!(strict.diagnostics[0].is_error());
    assert_eq!(strict.diagnostics[0].line, Some(5));
    assert!(strict.document.is_none());

    let lenient = parse_in_dir(src, "dup", &ValidationOptions::lenient());
    assert_eq!(codes(&lenient), vec!["yaml-duplicate-key"]);
    assert!(!lenient.diagnostics[0].is_error());
    assert_eq!(lenient.diagnostics[0].line, Some(5));
    let meta = lenient.document.expect("loads").metadata;
    assert_eq!(meta.description, "second");
    assert_eq!(meta.license.as_deref(), Some("MIT"));

    // Duplicates inside `metadata` too.
    let nested = "---\nname: dup\ndescription: d\nmetadata:\n  k: one\n  k: two\n---\n";
    assert_eq!(
        codes(&parse_in_dir(nested, "dup", &ValidationOptions::strict())),
        vec!["yaml-duplicate-key"]
    );
    let lenient = parse_in_dir(nested, "dup", &ValidationOptions::lenient());
    assert_eq!(codes(&lenient), vec!["yaml-duplicate-key"]);
    assert_eq!(lenient.diagnostics[0].line, Some(6));
    let meta = lenient.document.expect("loads").metadata;
    assert_eq!(meta.metadata.get("k").map(String::as_str), Some("two"));
}

#[test]
fn tabs() {
    // A tab inside a value or after a fence is fine.
    let ok = "---\t\nname: tabs\ndescription: one\ttwo\n---\t \nbody\n";
    for options in both_modes() {
        let outcome = parse_in_dir(ok, "tabs", &options);
        assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
        assert_eq!(
            outcome.document.expect("loads").metadata.description,
            "one\ttwo"
        );
    }
    // A tab after `key:` is separation whitespace in YAML 1.2, but saphyr-parser
    // 0.3.4 refuses it. Either way: no panic, and one located diagnostic if refused.
    let after_colon = "---\nname:\ttabs\ndescription:\td\n---\n";
    for options in both_modes() {
        let outcome = parse_in_dir(after_colon, "tabs", &options);
        match &outcome.document {
            Some(doc) => assert_eq!(doc.metadata.name.as_str(), "tabs"),
            None => {
                assert_eq!(codes(&outcome), vec!["yaml-invalid"]);
                assert_eq!(outcome.diagnostics[0].line, Some(2));
            }
        }
    }
    // A tab used for indentation is invalid YAML, reported on its line.
    let indented = "---\nname: tabs\ndescription: d\nmetadata:\n\tk: v\n---\n";
    for options in both_modes() {
        let outcome = parse_in_dir(indented, "tabs", &options);
        assert_eq!(codes(&outcome), vec!["yaml-invalid"], "{:?}", options.mode);
        assert_eq!(outcome.diagnostics[0].line, Some(5));
        assert!(outcome.document.is_none());
    }
}

#[test]
fn nul_bytes_inside_yaml() {
    for src in [
        "---\nname: nul\ndescription: a\0b\n---\n",
        "---\nname: nu\0l\ndescription: d\n---\n",
        "---\nname: nul\ndescription: \"a\0b\"\n---\n",
        "---\nname: nul\n\0: d\n---\n",
        "---\0\nname: nul\ndescription: d\n---\n",
    ] {
        for options in both_modes() {
            let outcome = parse_in_dir(src, "nul", &options);
            assert_eq!(
                outcome.document.is_some(),
                outcome.is_valid(),
                "{src:?}: {:?}",
                outcome.diagnostics
            );
            // Wherever the NUL is, it must not end up in a loaded skill's name or
            // description.
            if let Some(doc) = &outcome.document {
                assert!(
                    !doc.metadata.name.as_str().contains('\0')
                        && !doc.metadata.description.contains('\0'),
                    "{src:?}: {:?}",
                    doc.metadata
                );
            }
        }
    }
}

#[test]
fn control_characters_in_names_are_refused() {
    // Raw control characters are not printable YAML: strict refuses the YAML,
    // lenient warns and then refuses the name.
    for name in ["a\u{7}b", "a\u{1b}[31mb"] {
        let src = format!("---\nname: \"{name}\"\ndescription: d\n---\n");
        let strict = parse_skill_md(&src, Origin::default(), &ValidationOptions::strict());
        assert_eq!(codes(&strict), vec!["yaml-invalid"], "{name:?}");
        assert_eq!(strict.diagnostics[0].line, Some(2));
        let lenient = parse_skill_md(&src, Origin::default(), &ValidationOptions::lenient());
        assert_eq!(
            codes(&lenient),
            vec!["yaml-invalid", "name-invalid-chars"],
            "{name:?}"
        );
        assert!(!lenient.diagnostics[0].is_error());
        assert!(lenient.document.is_none());
    }
    // A zero-width space is printable YAML but not a letter or digit.
    let src = "---\nname: \"a\u{200b}b\"\ndescription: d\n---\n";
    for options in both_modes() {
        let outcome = parse_skill_md(src, Origin::default(), &options);
        assert_eq!(codes(&outcome), vec!["name-invalid-chars"]);
    }
}

#[test]
fn raw_nul_is_invalid_yaml() {
    let src = "---\nname: nul\ndescription: a\0b\n---\n";
    let strict = parse_in_dir(src, "nul", &ValidationOptions::strict());
    assert_eq!(
        strict
            .diagnostics
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec![
            "skills/nul/SKILL.md:3:15: error[yaml-invalid]: the frontmatter contains the non-printable character U+0000, which YAML does not allow\n   3 | description: a\u{fffd}b\n     |               ^"
        ]
    );
    // Lenient warns about the character, then the YAML parser refuses it.
    let lenient = parse_in_dir(src, "nul", &ValidationOptions::lenient());
    assert_eq!(codes(&lenient), vec!["yaml-invalid", "yaml-invalid"]);
    assert!(!lenient.diagnostics[0].is_error() && lenient.diagnostics[1].is_error());
    assert!(lenient.diagnostics.iter().all(|d| d.line == Some(3)));
    assert!(lenient.document.is_none());
}

/// YAML escapes (`"\0"`, `"\u001b"`) can put control characters into a
/// description. They are neither refused by validation nor dropped by the catalog,
/// so the XML catalog is not well-formed XML 1.0 and terminal escapes reach
/// whoever prints it.
#[test]
fn escaped_control_characters_do_not_reach_the_catalog() {
    let src = "---\nname: ctl\ndescription: \"a\\0b\\u0007c\\u001b[31md\"\n---\n";
    let outcome = parse_in_dir(src, "ctl", &ValidationOptions::lenient());
    let Some(doc) = outcome.document else {
        // Refusing the skill is an acceptable fix too, but not silently.
        assert!(
            outcome
                .diagnostics
                .iter()
                .any(|d| d.severity == skills_core::Severity::Error),
            "the skill was dropped without an error: {:?}",
            outcome.diagnostics
        );
        return;
    };
    let catalog = skills_core::Catalog::new([doc.metadata]);
    for format in [
        skills_core::CatalogFormat::Xml,
        skills_core::CatalogFormat::Markdown,
    ] {
        let out = catalog.render(&skills_core::RenderOptions::default().with_format(format));
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n'),
            "{format:?}: {out:?}"
        );
    }
}
