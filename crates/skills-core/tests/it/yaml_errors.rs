//! YAML errors people can act on: a plain cause, the file line and column, and an
//! excerpt of the line with a caret, the same in both modes.

use skills_core::{Code, Diagnostic, ValidationOptions};

use super::support::{codes, parse_in_dir};

/// The one diagnostic for `src` in `skills/case/SKILL.md`, checked to be the same
/// in both modes.
#[track_caller]
fn only_diagnostic(src: &str) -> Diagnostic {
    let strict = parse_in_dir(src, "case", &ValidationOptions::strict());
    let lenient = parse_in_dir(src, "case", &ValidationOptions::lenient());
    assert_eq!(strict.diagnostics.len(), 1, "{:?}", codes(&strict));
    assert_eq!(strict.diagnostics, lenient.diagnostics);
    assert!(strict.document.is_none() && lenient.document.is_none());
    strict.diagnostics[0].clone()
}

#[test]
fn unterminated_double_quote() {
    let d =
        only_diagnostic("---\nname: case\ndescription: \"Reads PDFs\nlicense: MIT\n---\nbody\n");
    assert_eq!(
        d.to_string(),
        concat!(
            "skills/case/SKILL.md:3:14: error[yaml-invalid]: unterminated double-quoted string: add the closing `\"`\n",
            "   3 | description: \"Reads PDFs\n",
            "     |              ^",
        )
    );
    // At the end of the frontmatter, too.
    let d = only_diagnostic("---\nname: case\ndescription: \"Reads PDFs\n---\n");
    assert_eq!((d.line, d.column), (Some(3), Some(14)));
    assert!(
        d.message.starts_with("unterminated double-quoted string"),
        "{d}"
    );
}

#[test]
fn unterminated_single_quote() {
    let d = only_diagnostic("---\nname: case\ndescription: 'Reads PDFs\nlicense: MIT\n---\n");
    assert_eq!(d.code, Code::YamlInvalid);
    assert_eq!((d.line, d.column), (Some(3), Some(14)));
    assert_eq!(
        d.message,
        "unterminated single-quoted string: add the closing `'`"
    );
}

#[test]
fn quoted_string_closed_on_a_later_unindented_line() {
    let d = only_diagnostic("---\nname: case\ndescription: \"abc\nmore\"\n---\n");
    assert_eq!((d.line, d.column), (Some(3), Some(14)));
    assert!(d.message.contains("not closed on its line"), "{d}");
}

#[test]
fn tab_on_line_three_is_reported_on_line_three() {
    // The parser reports this tab at the start of the value on line 2.
    let d = only_diagnostic("---\nname: case\n\tdescription: d\n---\n");
    assert_eq!((d.line, d.column), (Some(3), Some(1)), "{d}");
    assert_eq!(
        d.message,
        "tab character used for indentation: YAML indents with spaces; replace the tab with spaces"
    );
    assert_eq!(
        d.to_string().lines().skip(1).collect::<Vec<_>>(),
        ["   3 |     description: d", "     | ^"]
    );
    // A tab indenting a value on the line below its key.
    let d = only_diagnostic("---\nname: case\ndescription:\n\td\n---\n");
    assert_eq!((d.line, d.column), (Some(4), Some(1)), "{d}");
    // A tab between a key and its value.
    let d = only_diagnostic("---\nname: case\nkey:\tvalue\n---\n");
    assert_eq!((d.line, d.column), (Some(3), Some(5)), "{d}");
    assert_eq!(
        d.to_string().lines().skip(1).collect::<Vec<_>>(),
        ["   3 | key:    value", "     |     ^"]
    );
}

#[test]
fn bad_indentation() {
    let d = only_diagnostic(
        "---\nname: case\ndescription: d\nmetadata:\n  author: me\n   version: 1\n---\n",
    );
    assert_eq!((d.line, d.column), (Some(6), Some(4)), "{d}");
    assert!(d.message.starts_with("unexpected indentation"), "{d}");
    // A line indented less than a list: the mapping expected a key.
    let d = only_diagnostic("---\nname: case\ndescription: |\n   a\n  b\n---\n");
    assert_eq!((d.line, d.column), (Some(5), Some(3)), "{d}");
    assert!(d.message.contains("indentation"), "{d}");
}

#[test]
fn a_colon_inside_a_plain_value() {
    let d = only_diagnostic("---\nname: case\ndescription: Use when: the user asks\n---\n");
    assert_eq!((d.line, d.column), (Some(3), Some(22)), "{d}");
    assert!(d.message.contains("put the whole value in quotes"), "{d}");
}

#[test]
fn duplicate_key() {
    let src = "---\nname: case\ndescription: d\nname: case\n---\n";
    let strict = parse_in_dir(src, "case", &ValidationOptions::strict());
    assert_eq!(
        strict.diagnostics[0].to_string(),
        concat!(
            "skills/case/SKILL.md:4:1: error[yaml-duplicate-key]: duplicate key `name` in frontmatter\n",
            "   4 | name: case\n",
            "     | ^",
        )
    );
    let lenient = parse_in_dir(src, "case", &ValidationOptions::lenient());
    assert!(lenient.is_valid());
    assert_eq!(
        (lenient.diagnostics[0].line, lenient.diagnostics[0].column),
        (Some(4), Some(1))
    );
    // A nested duplicate is located at its key's column.
    let src = "---\nname: case\ndescription: d\nmetadata:\n  a: 1\n  a: 2\n---\n";
    let d = &parse_in_dir(src, "case", &ValidationOptions::strict()).diagnostics[0];
    assert_eq!(
        (d.code, d.line, d.column),
        (Code::YamlDuplicateKey, Some(6), Some(3))
    );
}

#[test]
fn unknown_alias() {
    let d = only_diagnostic("---\nname: case\ndescription: *desc\n---\n");
    assert_eq!((d.line, d.column), (Some(3), Some(14)));
    assert_eq!(
        d.message,
        "unknown alias `*desc`: no anchor `&desc` is defined before it; if the `*` is text, put the value in quotes"
    );
}

#[test]
fn unclosed_flow_list_points_at_the_bracket() {
    let src = "---\nname: case\ndescription: [a, b\n---\n";
    let d = &parse_in_dir(src, "case", &ValidationOptions::lenient()).diagnostics[0];
    assert_eq!((d.line, d.column), (Some(3), Some(14)), "{d}");
    assert!(d.message.contains("`[...]` list is not closed"), "{d}");
}

#[test]
fn other_causes_are_plain() {
    for (src, line, column, words) in [
        (
            "---\nname: case\ndescription: 'it's'\n---\n",
            3,
            18,
            "write it twice",
        ),
        (
            "---\nname: case\ndescription: \"\\q\"\n---\n",
            3,
            15,
            "unknown escape",
        ),
        (
            "---\nname: case\ndescription: @x\n---\n",
            3,
            14,
            "cannot start with `@`",
        ),
        ("---\nname: case\n- a\n---\n", 3, 1, "list item"),
        (
            "---\nname: case\ndescription: d\nno colon here\n---\n",
            4,
            1,
            "no `:`",
        ),
    ] {
        let d = only_diagnostic(src);
        assert_eq!(
            (d.line, d.column),
            (Some(line), Some(column)),
            "{src:?}: {d}"
        );
        assert!(d.message.contains(words), "{src:?}: {d}");
        assert!(!d.message.contains("while parsing"), "{d}");
    }
}

#[test]
fn json_has_the_column_and_not_the_excerpt() {
    let d = only_diagnostic("---\nname: case\n\tdescription: d\n---\n");
    assert!(d.excerpt.is_some());
    let json = serde_json::to_value(&d).expect("serializes");
    let mut keys: Vec<&str> = json
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["code", "column", "file", "line", "message", "severity"]
    );
    assert_eq!(json["column"], 1);
    assert_eq!(json["line"], 3);
}

#[test]
fn hostile_excerpts_are_printable_and_short() {
    // An escape sequence and a bidi override on the error line are not printed raw.
    let src = "---\nname: case\ndescription: \"\u{202e}x\u{1b}[2J\n---\n";
    let lenient = parse_in_dir(src, "case", &ValidationOptions::lenient());
    let shown: String = lenient
        .diagnostics
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
        "{shown:?}"
    );
    // A very long line is shortened around the column.
    let src = format!(
        "---\nname: case\ndescription: [{}\"unterminated\n---\n",
        "item, ".repeat(1_000)
    );
    let lenient = parse_in_dir(&src, "case", &ValidationOptions::lenient());
    let d = &lenient.diagnostics[0];
    assert_eq!(d.column, Some(6_015), "{d}");
    assert!(d.message.starts_with("unterminated double-quoted"), "{d}");
    let shown = d.to_string();
    assert!(shown.len() < 500, "{}", shown.len());
    let excerpt = shown.lines().nth(1).expect("excerpt line");
    let caret = shown.lines().nth(2).expect("caret line");
    let at = caret.chars().count() - 1;
    assert_eq!(excerpt.chars().nth(at), Some('"'), "{shown}");
}
