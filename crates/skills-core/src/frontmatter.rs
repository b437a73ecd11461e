//! Splitting a `SKILL.md` into frontmatter and body, and parsing the frontmatter YAML.
//!
//! This is the only module that touches the YAML parser. Keeping it here means the
//! parser can be swapped, and every hardening rule lives in one place:
//!
//! * the frontmatter is capped in size before the parser sees it;
//! * the tree is built iteratively from parser *events* with a depth limit, so
//!   deeply nested input cannot overflow the stack;
//! * aliases are never expanded by the parser: strict mode rejects anchors and aliases
//!   outright (like the reference validator), lenient mode copies aliased nodes under a
//!   node budget so an "alias bomb" ends in a diagnostic instead of exhausting memory;
//! * duplicate keys, flow collections and tags are reported (errors in strict mode).
//!
//! We use `saphyr-parser` at the event level rather than a serde deserializer because
//! exact parity with the reference validator (which uses StrictYAML) needs the scalar
//! style, anchors, tags and the block/flow distinction, none of which serde exposes.

use std::borrow::Cow;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use crate::diagnostic::{Code, Diagnostic};

/// Default cap on the frontmatter size in bytes (64 KiB).
pub const DEFAULT_MAX_FRONTMATTER_BYTES: usize = 64 * 1024;
/// Maximum nesting depth of the frontmatter YAML.
pub const MAX_YAML_DEPTH: usize = 32;
/// Maximum number of YAML nodes built for one frontmatter, aliases included.
pub const MAX_YAML_NODES: usize = 10_000;

/// A parsed YAML value from the frontmatter.
///
/// Scalars are kept as text with their style, as StrictYAML does: `true` is the text
/// `"true"` until a typed accessor interprets it. [`YamlValue::to_json`] applies the
/// YAML 1.2 core schema to plain scalars for callers that want typed data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlValue {
    /// A scalar: its text, and whether it was written plain (unquoted, not a block).
    Scalar {
        /// The scalar text after YAML unescaping/folding.
        text: String,
        /// `true` for plain scalars (core-schema resolution applies to them).
        plain: bool,
    },
    /// A sequence of values.
    Sequence(Vec<YamlNode>),
    /// A mapping with keys in document order (keys are scalar texts).
    Mapping(Vec<(String, YamlNode)>),
}

/// A YAML value with the 1-based line (in the `SKILL.md` file) where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlNode {
    /// The value.
    pub value: YamlValue,
    /// 1-based line in the `SKILL.md` file.
    pub line: u32,
}

impl YamlValue {
    /// The scalar text, if this is a scalar.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            YamlValue::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// A short name of the value's kind, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            YamlValue::Scalar { .. } => "a string",
            YamlValue::Sequence(_) => "a list",
            YamlValue::Mapping(_) => "a mapping",
        }
    }

    /// Converts to JSON, resolving plain scalars with the YAML 1.2 core schema
    /// (`null`/`~`/empty, `true`/`false`, integers, floats); quoted and block
    /// scalars stay strings.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            YamlValue::Scalar { text, plain } => {
                if *plain {
                    resolve_plain(text)
                } else {
                    serde_json::Value::String(text.clone())
                }
            }
            YamlValue::Sequence(items) => {
                serde_json::Value::Array(items.iter().map(|n| n.value.to_json()).collect())
            }
            YamlValue::Mapping(entries) => serde_json::Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.value.to_json()))
                    .collect(),
            ),
        }
    }
}

fn resolve_plain(text: &str) -> serde_json::Value {
    use serde_json::Value;
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(i) = text.parse::<i64>()
    {
        return Value::from(i);
    }
    if text.bytes().any(|b| b.is_ascii_digit())
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
        && let Ok(f) = text.parse::<f64>()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Value::Number(n);
    }
    Value::String(text.to_owned())
}

/// How strictly the YAML rules are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct YamlRules {
    /// Reject flow collections, anchors, aliases, tags and duplicate keys
    /// (StrictYAML rules) as errors; otherwise they are allowed (duplicates warn).
    pub(crate) strict: bool,
}

/// A `SKILL.md` split at its fences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split<'a> {
    /// The frontmatter text between the fences (lines joined with `\n`).
    pub(crate) frontmatter: &'a str,
    /// 1-based line of the first frontmatter line.
    pub(crate) frontmatter_first_line: u32,
    /// The body after the closing fence, trimmed.
    pub(crate) body: &'a str,
}

/// Why a document could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SplitError {
    /// The first line is not a `---` fence.
    Missing,
    /// No closing `---` line.
    Unclosed,
}

/// Normalizes line endings to `\n` and strips one leading UTF-8 BOM.
pub(crate) fn normalize(source: &str) -> Cow<'_, str> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    if !source.contains('\r') {
        return Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
            out.push('\n');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn is_fence(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.bytes().all(|b| b == b' ' || b == b'\t'))
}

/// Splits normalized text at the opening and closing `---` fence lines.
///
/// The fences must be whole lines (trailing spaces and tabs allowed); a `---`
/// substring inside a line never closes the frontmatter.
pub(crate) fn split(text: &str) -> Result<Split<'_>, SplitError> {
    let (first, mut rest) = match text.find('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    };
    if !is_fence(first) {
        return Err(SplitError::Missing);
    }
    let fm_start = text.len() - rest.len();
    let mut offset = fm_start;
    loop {
        if rest.is_empty() {
            return Err(SplitError::Unclosed);
        }
        let (line, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        if is_fence(line) {
            let frontmatter = &text[fm_start..offset];
            let body = text[text.len() - next.len()..].trim();
            return Ok(Split {
                frontmatter,
                frontmatter_first_line: 2,
                body,
            });
        }
        offset += line.len() + 1;
        rest = next;
    }
}

/// The result of parsing frontmatter YAML: a tree (if one could be built) and the
/// problems found on the way.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub(crate) root: Option<YamlNode>,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

enum Frame {
    Seq {
        items: Vec<YamlNode>,
        line: u32,
        anchor: usize,
    },
    Map {
        entries: Vec<(String, YamlNode)>,
        pending_key: Option<(String, u32)>,
        line: u32,
        anchor: usize,
    },
}

/// Parses frontmatter YAML into a tree.
///
/// `first_line` is the 1-based file line of the frontmatter's first line; all
/// diagnostics carry file lines.
pub(crate) fn parse_yaml(text: &str, first_line: u32, rules: YamlRules) -> Parsed {
    let mut diagnostics = Vec::new();
    if let Some((line, c)) = first_non_printable(text) {
        let line = first_line + line;
        let message = format!(
            "the frontmatter contains the non-printable character U+{:04X}, which YAML does not allow",
            u32::from(c)
        );
        if rules.strict {
            diagnostics.push(Diagnostic::error(Code::YamlInvalid, message).at_line(line));
            return Parsed {
                root: None,
                diagnostics,
            };
        }
        diagnostics.push(Diagnostic::warning(Code::YamlInvalid, message).at_line(line));
    }
    let line_of = |span: &Span| first_line + span.start.line().saturating_sub(1) as u32;
    let char_at = CharIndex::new(text);

    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: Vec<(usize, YamlNode)> = Vec::new();
    let mut root: Option<YamlNode> = None;
    let mut nodes = 0usize;
    let mut documents = 0usize;

    let fail = |diagnostics: &mut Vec<Diagnostic>, code: Code, line: u32, msg: String| {
        diagnostics.push(Diagnostic::error(code, msg).at_line(line));
    };

    let mut parser = Parser::new_from_str(text);
    loop {
        let (event, span) = match parser.next_event() {
            None => break,
            Some(Ok(pair)) => pair,
            Some(Err(err)) => {
                let line = first_line + err.marker().line().saturating_sub(1) as u32;
                fail(
                    &mut diagnostics,
                    Code::YamlInvalid,
                    line,
                    format!("invalid YAML in frontmatter: {}", err.info()),
                );
                return Parsed {
                    root: None,
                    diagnostics,
                };
            }
        };
        let line = line_of(&span);
        let (value, anchor) = match event {
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    fail(
                        &mut diagnostics,
                        Code::YamlInvalid,
                        line,
                        "invalid YAML in frontmatter: expected a single document".into(),
                    );
                    return Parsed {
                        root: None,
                        diagnostics,
                    };
                }
                continue;
            }
            Event::Alias(id) => {
                if rules.strict {
                    fail(
                        &mut diagnostics,
                        Code::YamlAnchor,
                        line,
                        "YAML aliases (`*name`) are not allowed in frontmatter".into(),
                    );
                    return Parsed {
                        root: None,
                        diagnostics,
                    };
                }
                let Some(node) = anchors.iter().rev().find(|(a, _)| *a == id).map(|(_, n)| n)
                else {
                    fail(
                        &mut diagnostics,
                        Code::YamlInvalid,
                        line,
                        "invalid YAML in frontmatter: unknown alias".into(),
                    );
                    return Parsed {
                        root: None,
                        diagnostics,
                    };
                };
                let size = node_count(node);
                nodes = nodes.saturating_add(size);
                if nodes > MAX_YAML_NODES {
                    fail(
                        &mut diagnostics,
                        Code::YamlAliasBudget,
                        line,
                        format!(
                            "frontmatter expands to more than {MAX_YAML_NODES} YAML nodes through aliases"
                        ),
                    );
                    return Parsed {
                        root: None,
                        diagnostics,
                    };
                }
                (node.clone(), 0)
            }
            Event::Scalar(text, style, anchor, tag) => {
                if check_anchor_tag(&mut diagnostics, rules, line, anchor, tag.is_some()) {
                    return Parsed {
                        root: None,
                        diagnostics,
                    };
                }
                nodes += 1;
                (
                    YamlNode {
                        value: YamlValue::Scalar {
                            text: text.into_owned(),
                            plain: style == ScalarStyle::Plain,
                        },
                        line,
                    },
                    anchor,
                )
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                let is_map = matches!(event, Event::MappingStart(..));
                if check_anchor_tag(&mut diagnostics, rules, line, anchor, tag.is_some()) {
                    return Parsed {
                        root: None,
                        diagnostics,
                    };
                }
                if rules.strict && matches!(char_at.get(span.start.index()), Some('{' | '[')) {
                    fail(
                        &mut diagnostics,
                        Code::YamlFlowStyle,
                        line,
                        "flow-style collections (`{...}` or `[...]`) are not allowed in frontmatter; use block style".into(),
                    );
                    return Parsed {
                        root: None,
                        diagnostics,
                    };
                }
                if stack.len() >= MAX_YAML_DEPTH {
                    fail(
                        &mut diagnostics,
                        Code::YamlTooDeep,
                        line,
                        format!("frontmatter YAML is nested deeper than {MAX_YAML_DEPTH} levels"),
                    );
                    return Parsed {
                        root: None,
                        diagnostics,
                    };
                }
                nodes += 1;
                stack.push(if is_map {
                    Frame::Map {
                        entries: Vec::new(),
                        pending_key: None,
                        line,
                        anchor,
                    }
                } else {
                    Frame::Seq {
                        items: Vec::new(),
                        line,
                        anchor,
                    }
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq {
                    items,
                    line,
                    anchor,
                }) => (
                    YamlNode {
                        value: YamlValue::Sequence(items),
                        line,
                    },
                    anchor,
                ),
                Some(Frame::Map {
                    entries,
                    line,
                    anchor,
                    ..
                }) => (
                    YamlNode {
                        value: YamlValue::Mapping(entries),
                        line,
                    },
                    anchor,
                ),
                None => continue,
            },
        };
        if nodes > MAX_YAML_NODES {
            fail(
                &mut diagnostics,
                Code::YamlAliasBudget,
                line,
                format!("frontmatter has more than {MAX_YAML_NODES} YAML nodes"),
            );
            return Parsed {
                root: None,
                diagnostics,
            };
        }
        if anchor != 0 {
            anchors.push((anchor, value.clone()));
        }
        // Attach the finished value to its parent.
        match stack.last_mut() {
            None => root = Some(value),
            Some(Frame::Seq { items, .. }) => items.push(value),
            Some(Frame::Map {
                entries,
                pending_key,
                ..
            }) => match pending_key.take() {
                None => match value.value {
                    YamlValue::Scalar { text, .. } => *pending_key = Some((text, value.line)),
                    other => {
                        fail(
                            &mut diagnostics,
                            Code::YamlInvalid,
                            value.line,
                            format!(
                                "invalid YAML in frontmatter: a mapping key must be a string, found {}",
                                other.kind_name()
                            ),
                        );
                        return Parsed {
                            root: None,
                            diagnostics,
                        };
                    }
                },
                Some((key, key_line)) => {
                    // Locate a field by its key line: block scalars start below it.
                    let value = YamlNode {
                        line: key_line,
                        ..value
                    };
                    if let Some(pos) = entries.iter().position(|(k, _)| *k == key) {
                        if rules.strict {
                            fail(
                                &mut diagnostics,
                                Code::YamlDuplicateKey,
                                key_line,
                                format!("duplicate key `{key}` in frontmatter"),
                            );
                            return Parsed {
                                root: None,
                                diagnostics,
                            };
                        }
                        diagnostics.push(
                            Diagnostic::warning(
                                Code::YamlDuplicateKey,
                                format!(
                                    "duplicate key `{key}` in frontmatter; the last value wins"
                                ),
                            )
                            .at_line(key_line),
                        );
                        entries.remove(pos);
                    }
                    entries.push((key, value));
                }
            },
        }
    }
    Parsed { root, diagnostics }
}

/// The first character outside YAML's printable set (tab, LF, CR, U+0020–U+007E,
/// U+0085, U+00A0–U+D7FF, U+E000–U+FFFD, U+10000 and up), with its 0-based line.
fn first_non_printable(text: &str) -> Option<(u32, char)> {
    let printable = |c: char| matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..);
    if text
        .bytes()
        .all(|b| matches!(b, b'\t' | b'\n' | b'\r' | b' '..=b'~'))
    {
        return None;
    }
    let (offset, c) = text.char_indices().find(|&(_, c)| !printable(c))?;
    let line = text[..offset].bytes().filter(|&b| b == b'\n').count() as u32;
    Some((line, c))
}

/// Reports anchors and tags; returns `true` when parsing must stop.
fn check_anchor_tag(
    diagnostics: &mut Vec<Diagnostic>,
    rules: YamlRules,
    line: u32,
    anchor: usize,
    tagged: bool,
) -> bool {
    if !rules.strict {
        return false;
    }
    if anchor != 0 {
        diagnostics.push(
            Diagnostic::error(
                Code::YamlAnchor,
                "YAML anchors (`&name`) are not allowed in frontmatter",
            )
            .at_line(line),
        );
        return true;
    }
    if tagged {
        diagnostics.push(
            Diagnostic::error(
                Code::YamlTag,
                "YAML tags (`!tag`) are not allowed in frontmatter",
            )
            .at_line(line),
        );
        return true;
    }
    false
}

fn node_count(node: &YamlNode) -> usize {
    let mut count = 0usize;
    let mut pending = vec![node];
    while let Some(n) = pending.pop() {
        count += 1;
        match &n.value {
            YamlValue::Scalar { .. } => {}
            YamlValue::Sequence(items) => pending.extend(items.iter()),
            YamlValue::Mapping(entries) => pending.extend(entries.iter().map(|(_, v)| v)),
        }
    }
    count
}

/// Maps the parser's character indices to characters (ASCII fast path).
struct CharIndex<'a> {
    text: &'a str,
    ascii: bool,
    offsets: Vec<usize>,
}

impl<'a> CharIndex<'a> {
    fn new(text: &'a str) -> Self {
        let ascii = text.is_ascii();
        let offsets = if ascii {
            Vec::new()
        } else {
            text.char_indices().map(|(i, _)| i).collect()
        };
        Self {
            text,
            ascii,
            offsets,
        }
    }

    fn get(&self, char_index: usize) -> Option<char> {
        if self.ascii {
            return self.text.as_bytes().get(char_index).map(|&b| b as char);
        }
        let offset = *self.offsets.get(char_index)?;
        self.text[offset..].chars().next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, strict: bool) -> Parsed {
        parse_yaml(text, 2, YamlRules { strict })
    }

    #[test]
    fn split_requires_line_fences() {
        let s = split("---\nname: a\n---\nbody\n").expect("split");
        assert_eq!(s.frontmatter, "name: a\n");
        assert_eq!(s.body, "body");
        assert_eq!(
            split("---\ndescription: a---b\n"),
            Err(SplitError::Unclosed)
        );
        assert_eq!(
            split("--- \nx: y\n---\t\n"),
            Ok(Split {
                frontmatter: "x: y\n",
                frontmatter_first_line: 2,
                body: ""
            })
        );
        assert_eq!(split("----\nx: y\n---\n"), Err(SplitError::Missing));
        assert_eq!(split(""), Err(SplitError::Missing));
        assert_eq!(split("---"), Err(SplitError::Unclosed));
        assert_eq!(split("---\n---").map(|s| s.frontmatter), Ok(""));
    }

    #[test]
    fn normalize_bom_and_crlf() {
        assert_eq!(normalize("\u{feff}---\r\na\rb\r\n"), "---\na\nb\n");
        assert!(matches!(normalize("plain\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn strict_rejects_flow_anchor_tag_duplicates() {
        for (src, code) in [
            ("a: {b: c}\n", Code::YamlFlowStyle),
            ("a: [b]\n", Code::YamlFlowStyle),
            ("a: &x 1\nb: *x\n", Code::YamlAnchor),
            ("a: !!str 1\n", Code::YamlTag),
            ("a: 1\na: 2\n", Code::YamlDuplicateKey),
        ] {
            let p = parse(src, true);
            assert!(p.root.is_none(), "{src}");
            assert_eq!(p.diagnostics[0].code, code, "{src}");
        }
    }

    #[test]
    fn lenient_allows_them_and_warns_on_duplicates() {
        let p = parse("a: {b: c}\nd: &x [1]\ne: *x\nf: 1\nf: 2\n", false);
        let root = p.root.expect("root");
        assert_eq!(
            root.value.to_json(),
            serde_json::json!({"a": {"b": "c"}, "d": [1], "e": [1], "f": 2})
        );
        assert_eq!(p.diagnostics.len(), 1);
        assert_eq!(p.diagnostics[0].code, Code::YamlDuplicateKey);
        assert_eq!(p.diagnostics[0].line, Some(6));
    }

    #[test]
    fn alias_bomb_hits_the_budget() {
        let mut src = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            src.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let p = parse(&src, false);
        assert!(p.root.is_none());
        assert_eq!(p.diagnostics[0].code, Code::YamlAliasBudget);
    }

    #[test]
    fn deep_nesting_is_refused() {
        let src = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
        let p = parse(&src, false);
        assert!(p.root.is_none());
        // The scanner's own flow-depth limit may fire before ours; either way the
        // input is refused with a diagnostic instead of overflowing the stack.
        assert!(
            matches!(p.diagnostics[0].code, Code::YamlTooDeep | Code::YamlInvalid),
            "{:?}",
            p.diagnostics
        );
        let mut block = String::new();
        for depth in 0..100 {
            block.push_str(&" ".repeat(depth));
            block.push_str("k:\n");
        }
        let p = parse(&block, false);
        assert_eq!(
            p.diagnostics[0].code,
            Code::YamlTooDeep,
            "{:?}",
            p.diagnostics
        );
    }

    #[test]
    fn scalars_keep_text_and_lines() {
        let p = parse("name: 123\ndescription: |\n  x\n  y\n", true);
        let Some(YamlNode {
            value: YamlValue::Mapping(entries),
            line,
        }) = p.root
        else {
            panic!("expected mapping");
        };
        assert_eq!(line, 2);
        assert_eq!(entries[0].1.value.as_str(), Some("123"));
        assert_eq!(entries[1].1.value.as_str(), Some("x\ny\n"));
        assert_eq!(entries[1].1.line, 3, "a field is located at its key");
    }

    #[test]
    fn invalid_yaml_is_located() {
        let p = parse("a: b\nc: d: e\n", true);
        assert_eq!(p.diagnostics[0].code, Code::YamlInvalid);
        assert_eq!(p.diagnostics[0].line, Some(3));
    }

    #[test]
    fn non_printable_characters() {
        for (src, line) in [
            ("a: x\nb: y\u{1}z\n", 3),
            ("a: \u{7f}\n", 2),
            ("# \u{1b}\n", 2),
            ("a: \"\u{b}\"\n", 2),
            ("a: \u{fffe}\n", 2),
        ] {
            let p = parse(src, true);
            assert!(p.root.is_none(), "{src:?}");
            assert_eq!(
                (p.diagnostics[0].code, p.diagnostics[0].line),
                (Code::YamlInvalid, Some(line)),
                "{src:?}"
            );
            let p = parse(src, false);
            assert!(
                p.diagnostics[0].severity == crate::diagnostic::Severity::Warning,
                "{src:?}"
            );
        }
        assert!(
            parse("a: caf\u{e9} \u{1f600}\tb\n", true)
                .diagnostics
                .is_empty()
        );
    }

    #[test]
    fn unicode_flow_detection() {
        let p = parse("é: ü\nb: [x]\n", true);
        assert_eq!(p.diagnostics[0].code, Code::YamlFlowStyle);
    }
}
