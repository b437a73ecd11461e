//! Splitting a `SKILL.md` into frontmatter and body, and parsing the frontmatter YAML.
//!
//! This is the only module that touches the YAML parser. Keeping it here means the
//! parser can be swapped, and every hardening rule lives in one place:
//!
//! * the frontmatter is capped in size before the parser sees it;
//! * the tree is built iteratively from parser *events* with a depth limit, so
//!   deeply nested input cannot overflow the stack;
//! * aliases are never expanded by the parser: strict mode rejects anchors and aliases
//!   outright (like the reference validator), lenient mode copies aliased nodes;
//! * in every mode the tree is built under two budgets, so an "alias bomb" ends in a
//!   `yaml-alias-budget` diagnostic instead of exhausting memory: at most
//!   [`MAX_YAML_NODES`] nodes (every alias copy counted), and at most
//!   [`MAX_YAML_EXPANDED_BYTES`] (1 MiB) or [`YAML_EXPANSION_FACTOR`] (16) times the
//!   frontmatter's size in bytes, whichever is larger (see [`max_expanded_bytes`]).
//!   The byte count is the tree's size: every scalar's and key's text plus
//!   [`NODE_COST_BYTES`] per node, counting every copy an alias makes and the copy of
//!   each anchored value kept for its aliases. Text without anchors never comes
//!   near it (at most 64 KiB of text and 10 000 nodes at 32 bytes: under 400 KiB);
//!   one 34 kB scalar referenced 10 000 times is refused after about 30 copies;
//! * duplicate keys, flow collections and tags are reported (errors in strict mode);
//! * parser errors are turned into a plain cause and a fix ("unterminated
//!   double-quoted string: add the closing `"`"), located at a line and column of
//!   the `SKILL.md` file, with an excerpt of the line.
//!
//! We use `saphyr-parser` at the event level rather than a serde deserializer because
//! exact parity with the reference validator (which uses StrictYAML) needs the scalar
//! style, anchors, tags and the block/flow distinction, none of which serde exposes.
//!
//! ## The fast path
//!
//! Almost every real frontmatter is flat and simple: `key: value` lines with
//! one-line plain or quoted values, perhaps a `metadata:` mapping one level deep or
//! a list of `- item` lines. Building the tree from parser events costs far more
//! than reading such lines, so [`parse_yaml`] first tries `fast::parse_fast`, a
//! hand-written line scanner for exactly that subset (the `fast` module lists it),
//! and falls back to the event path ([`parse_yaml_saphyr`]) for anything else.
//!
//! It is hand-written because the result must be the event path's, bit for bit:
//! the same scalar texts and styles, line numbers and (none) diagnostics. No YAML
//! crate parses a subset with `saphyr-parser`'s exact results, so the scanner
//! accepts only what it is sure of and declines the rest: comments, anchors,
//! aliases, tags, flow collections, block scalars, escapes, multi-line values,
//! `: ` or a trailing `:` in a plain value, values starting with an indicator,
//! trailing spaces, tabs, unusual characters, duplicate keys (which the event path
//! reports), deeper nesting, and texts over 16 KiB or 256 lines. Nothing it
//! accepts comes near the node, byte or depth budgets. A differential test
//! compares both paths, in strict and lenient mode, on fixed tricky inputs and on
//! generated near-flat YAML full of indicator characters, quotes and odd
//! characters, and checks that the fast path takes a real share of them.

use std::borrow::Cow;
use std::collections::BTreeMap;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError};

use crate::diagnostic::{Code, Diagnostic, Excerpt, Severity};

mod fast;

/// Default cap on the frontmatter size in bytes (64 KiB).
pub const DEFAULT_MAX_FRONTMATTER_BYTES: usize = 64 * 1024;
/// Maximum nesting depth of the frontmatter YAML.
pub const MAX_YAML_DEPTH: usize = 32;
/// Maximum number of YAML nodes built for one frontmatter, aliases included.
pub const MAX_YAML_NODES: usize = 10_000;
/// The least byte budget of the tree built for one frontmatter (1 MiB): aliases may
/// expand a frontmatter to this size, or to [`YAML_EXPANSION_FACTOR`] times its
/// text if that is larger. See [`max_expanded_bytes`].
pub const MAX_YAML_EXPANDED_BYTES: usize = 1024 * 1024;
/// How many times its own size a frontmatter may expand to, when that is more
/// than [`MAX_YAML_EXPANDED_BYTES`] (only with a frontmatter cap above 64 KiB).
pub const YAML_EXPANSION_FACTOR: usize = 16;
/// Bytes charged per node (scalar, list or mapping) against the byte budget, on top
/// of its text, so many small aliases are bounded like a few big ones.
pub const NODE_COST_BYTES: usize = 32;

// A frontmatter within the default size cap and the node limit never reaches the
// byte budget without anchors.
const _: () = assert!(
    DEFAULT_MAX_FRONTMATTER_BYTES + MAX_YAML_NODES * NODE_COST_BYTES < MAX_YAML_EXPANDED_BYTES
);

/// A parsed YAML value from the frontmatter.
///
/// Scalars are kept as text with their style, as StrictYAML does: `true` is the text
/// `"true"` until a typed accessor interprets it. [`YamlValue::to_json`] applies the
/// YAML 1.2 core schema to plain scalars for callers that want typed data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum YamlValue<'a> {
    /// A scalar: its text, and whether it was written plain (unquoted, not a block).
    Scalar {
        /// The scalar text after YAML unescaping/folding: borrowed from the
        /// frontmatter where it is written as it is (the fast path).
        text: Cow<'a, str>,
        /// `true` for plain scalars (core-schema resolution applies to them).
        plain: bool,
    },
    /// A sequence of values.
    Sequence(Vec<YamlNode<'a>>),
    /// A mapping with keys in document order (keys are scalar texts).
    Mapping(Vec<(Cow<'a, str>, YamlNode<'a>)>),
}

/// A mapping's entry: its key and value.
pub(crate) type YamlEntry<'a> = (Cow<'a, str>, YamlNode<'a>);

/// A YAML value with the 1-based line (in the `SKILL.md` file) where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlNode<'a> {
    /// The value.
    pub value: YamlValue<'a>,
    /// 1-based line in the `SKILL.md` file.
    pub line: u32,
}

impl YamlValue<'_> {
    /// The scalar text, if this is a scalar.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            YamlValue::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// A short name of the value's kind, for messages.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            YamlValue::Scalar { .. } => "a string",
            YamlValue::Sequence(_) => "a list",
            YamlValue::Mapping(_) => "a mapping",
        }
    }

    /// Converts to JSON, resolving plain scalars with the YAML 1.2 core schema
    /// (`null`/`~`/empty, `true`/`false`, integers, floats); quoted and block
    /// scalars stay strings.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            YamlValue::Scalar { text, plain } => {
                if *plain {
                    resolve_plain(text)
                } else {
                    serde_json::Value::String(text.to_string())
                }
            }
            YamlValue::Sequence(items) => {
                serde_json::Value::Array(items.iter().map(|n| n.value.to_json()).collect())
            }
            YamlValue::Mapping(entries) => serde_json::Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.value.to_json()))
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
    // Most files have no carriage return: a vectorized search tells.
    if memchr::memchr(b'\r', source.as_bytes()).is_none() {
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
    let (first, rest) = match text.find('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    };
    if !is_fence(first) {
        return Err(SplitError::Missing);
    }
    let fm_start = text.len() - rest.len();
    // Each line of `rest` in turn, its end found by a vectorized search;
    // only a line that starts with `---` is looked at further.
    let bytes = rest.as_bytes();
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', bytes).map(Some);
    for end in ends.chain(std::iter::once(None)) {
        let (line_end, next) = match end {
            Some(end) => (end, end + 1),
            None => (bytes.len(), bytes.len()),
        };
        if start >= bytes.len() {
            break;
        }
        if bytes[start..line_end].starts_with(b"---")
            && let Some(line) = rest.get(start..line_end)
            && is_fence(line)
        {
            let frontmatter = &text[fm_start..fm_start + start];
            let body = rest.get(next..).unwrap_or("").trim();
            return Ok(Split {
                frontmatter,
                frontmatter_first_line: 2,
                body,
            });
        }
        start = next;
    }
    Err(SplitError::Unclosed)
}

/// The result of parsing frontmatter YAML: a tree (if one could be built) and the
/// problems found on the way.
#[derive(Debug)]
pub(crate) struct Parsed<'a> {
    pub(crate) root: Option<YamlNode<'a>>,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// What a value costs against the budgets: nodes, and bytes of the built tree.
#[derive(Debug, Clone, Copy, Default)]
struct Size {
    nodes: usize,
    bytes: usize,
}

impl Size {
    fn node(text_bytes: usize) -> Self {
        Self {
            nodes: 1,
            bytes: NODE_COST_BYTES.saturating_add(text_bytes),
        }
    }

    fn add(&mut self, other: Size) {
        self.nodes = self.nodes.saturating_add(other.nodes);
        self.bytes = self.bytes.saturating_add(other.bytes);
    }
}

/// The running totals for one frontmatter, checked after every charge.
struct Budget {
    nodes: usize,
    bytes: usize,
    max_bytes: usize,
}

/// Which budget ran out.
enum Exceeded {
    Nodes,
    Bytes(usize),
}

impl Budget {
    fn new(text_len: usize) -> Self {
        Self {
            nodes: 0,
            bytes: 0,
            max_bytes: max_expanded_bytes(text_len),
        }
    }

    /// Charges a value built from the source or copied by an alias.
    fn charge(&mut self, size: Size) -> Result<(), Exceeded> {
        self.nodes = self.nodes.saturating_add(size.nodes);
        self.charge_bytes(size.bytes)?;
        if self.nodes > MAX_YAML_NODES {
            return Err(Exceeded::Nodes);
        }
        Ok(())
    }

    /// Charges bytes only (the copy of an anchored value kept for its aliases).
    fn charge_bytes(&mut self, bytes: usize) -> Result<(), Exceeded> {
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.max_bytes {
            return Err(Exceeded::Bytes(self.max_bytes));
        }
        Ok(())
    }
}

/// The byte budget for a frontmatter of `text_len` bytes: [`MAX_YAML_EXPANDED_BYTES`]
/// or [`YAML_EXPANSION_FACTOR`] times the text, whichever is larger.
pub fn max_expanded_bytes(text_len: usize) -> usize {
    MAX_YAML_EXPANDED_BYTES.max(text_len.saturating_mul(YAML_EXPANSION_FACTOR))
}

struct PendingKey {
    text: Cow<'static, str>,
    line: u32,
    line0: usize,
    col0: usize,
    size: Size,
}

enum Frame {
    Seq {
        items: Vec<YamlNode<'static>>,
        line: u32,
        anchor: usize,
        size: Size,
    },
    Map {
        entries: Vec<(Cow<'static, str>, YamlNode<'static>)>,
        pending_key: Option<PendingKey>,
        line: u32,
        anchor: usize,
        size: Size,
    },
}

/// The frontmatter text with its line starts, for locating diagnostics and quoting
/// the offending line.
struct Source<'a> {
    text: &'a str,
    first_line: u32,
    line_starts: Vec<usize>,
    chars: CharIndex<'a>,
}

impl<'a> Source<'a> {
    fn new(text: &'a str, first_line: u32) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            text,
            first_line,
            line_starts,
            chars: CharIndex::new(text),
        }
    }

    /// The 1-based file line of 0-based frontmatter line `line0`.
    fn file_line(&self, line0: usize) -> u32 {
        self.first_line
            .saturating_add(u32::try_from(line0).unwrap_or(u32::MAX))
    }

    /// The text of 0-based line `line0`, without its line break; `None` past the end
    /// (the empty "line" after a final line break counts as past the end).
    fn line_text(&self, line0: usize) -> Option<&'a str> {
        let start = *self.line_starts.get(line0)?;
        if start >= self.text.len() && line0 > 0 {
            return None;
        }
        let end = self
            .line_starts
            .get(line0 + 1)
            .map_or(self.text.len(), |&next| next - 1);
        Some(&self.text[start..end])
    }

    fn line_count(&self) -> usize {
        match self.text.as_bytes().last() {
            None => 0,
            Some(b'\n') => self.line_starts.len() - 1,
            Some(_) => self.line_starts.len(),
        }
    }

    /// A diagnostic at 0-based line `line0`, 0-based character column `col0`, with an
    /// excerpt of that line.
    fn diag(
        &self,
        severity: Severity,
        code: Code,
        message: impl Into<String>,
        line0: usize,
        col0: usize,
    ) -> Diagnostic {
        let line = self.file_line(line0);
        let column = u32::try_from(col0.saturating_add(1)).unwrap_or(u32::MAX);
        let diag = Diagnostic::new(severity, code, message)
            .at_line(line)
            .at_column(column);
        match self.line_text(line0) {
            Some(raw) => diag.with_excerpt(Excerpt::from_line(line, raw, Some(column))),
            None => diag,
        }
    }

    fn error(&self, code: Code, message: impl Into<String>, at: (usize, usize)) -> Diagnostic {
        self.diag(Severity::Error, code, message, at.0, at.1)
    }
}

/// The 0-based line and character column of a parser position.
fn position(marker: &Marker) -> (usize, usize) {
    (marker.line().saturating_sub(1), marker.col())
}

/// Parses frontmatter YAML into a tree.
///
/// `first_line` is the 1-based file line of the frontmatter's first line; all
/// diagnostics carry file lines, columns and an excerpt of the line.
///
/// Flat, simple frontmatter takes the [`fast`] path (the same result, without the
/// parser); everything else is parsed from events by [`parse_yaml_saphyr`].
pub(crate) fn parse_yaml(text: &str, first_line: u32, rules: YamlRules) -> Parsed<'_> {
    if let Some(parsed) = fast::parse_fast(text, first_line) {
        return parsed;
    }
    parse_yaml_saphyr(text, first_line, rules)
}

/// Parses frontmatter YAML into a tree from `saphyr-parser` events, with every
/// budget, limit and diagnostic; [`parse_yaml`] without the fast path.
pub(crate) fn parse_yaml_saphyr(text: &str, first_line: u32, rules: YamlRules) -> Parsed<'static> {
    let source = Source::new(text, first_line);
    let mut diagnostics = Vec::new();
    match build(&source, rules, &mut diagnostics) {
        Ok(root) => Parsed { root, diagnostics },
        Err(error) => {
            diagnostics.push(*error);
            Parsed {
                root: None,
                diagnostics,
            }
        }
    }
}

/// Longest key quoted in a message, in characters.
const MAX_QUOTED_KEY_CHARS: usize = 64;

/// `key` for a message, shortened with `…` when long.
fn quote_key(key: &str) -> Cow<'_, str> {
    match key.char_indices().nth(MAX_QUOTED_KEY_CHARS) {
        None => Cow::Borrowed(key),
        Some((cut, _)) => Cow::Owned(format!("{}…", &key[..cut])),
    }
}

fn budget_error(
    source: &Source<'_>,
    exceeded: Exceeded,
    alias: bool,
    at: (usize, usize),
) -> Box<Diagnostic> {
    let message = match (exceeded, alias) {
        (Exceeded::Nodes, true) => format!(
            "frontmatter expands to more than {MAX_YAML_NODES} YAML nodes through aliases (`*name`)"
        ),
        (Exceeded::Nodes, false) => {
            format!("frontmatter has more than {MAX_YAML_NODES} YAML nodes")
        }
        (Exceeded::Bytes(max), _) => format!(
            "frontmatter expands to more than {max} bytes through anchors and aliases (`&name`, `*name`); \
             the limit is 1 MiB or {YAML_EXPANSION_FACTOR} times the frontmatter's size, whichever is larger: \
             write the repeated values out, or remove them"
        ),
    };
    Box::new(source.error(Code::YamlAliasBudget, message, at))
}

/// Builds the tree; an error ends parsing (warnings go to `diagnostics`).
fn build(
    source: &Source<'_>,
    rules: YamlRules,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<YamlNode<'static>>, Box<Diagnostic>> {
    let text = source.text;
    if let Some((at, c)) = first_non_printable(text) {
        let message = format!(
            "the frontmatter contains the non-printable character U+{:04X}, which YAML does not allow",
            u32::from(c)
        );
        if rules.strict {
            return Err(Box::new(source.error(Code::YamlInvalid, message, at)));
        }
        diagnostics.push(source.diag(Severity::Warning, Code::YamlInvalid, message, at.0, at.1));
    }

    let mut budget = Budget::new(text.len());
    let mut stack: Vec<Frame> = Vec::new();
    // Anchor ids are unique per parser (a redefined name gets a new id).
    let mut anchors: BTreeMap<usize, (YamlNode<'static>, Size)> = BTreeMap::new();
    let mut root: Option<YamlNode<'static>> = None;
    let mut documents = 0usize;

    let mut parser = Parser::new_from_str(text);
    loop {
        let (event, span) = match parser.next_event() {
            None => break,
            Some(Ok(pair)) => pair,
            Some(Err(err)) => return Err(Box::new(explain_scan_error(source, &err))),
        };
        let at = position(&span.start);
        let line = source.file_line(at.0);
        let fail = |code: Code, message: String| Box::new(source.error(code, message, at));
        let (value, size, anchor) = match event {
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(fail(
                        Code::YamlInvalid,
                        "the frontmatter must be a single YAML document: remove the `---` or `...` line inside it".into(),
                    ));
                }
                continue;
            }
            Event::Alias(id) => {
                if rules.strict {
                    return Err(fail(
                        Code::YamlAnchor,
                        "YAML aliases (`*name`) are not allowed in frontmatter".into(),
                    ));
                }
                let Some((node, size)) = anchors.get(&id) else {
                    // The parser resolves names, so an unknown id is an anchor whose
                    // value is still open: the alias is inside what it refers to.
                    return Err(fail(
                        Code::YamlInvalid,
                        "this alias (`*name`) is inside the value its anchor names; a value cannot contain itself".into(),
                    ));
                };
                budget
                    .charge(*size)
                    .map_err(|e| budget_error(source, e, true, at))?;
                (node.clone(), *size, 0)
            }
            Event::Scalar(text, style, anchor, tag) => {
                check_anchor_tag(source, rules, at, anchor, tag.is_some())?;
                let size = Size::node(text.len());
                budget
                    .charge(size)
                    .map_err(|e| budget_error(source, e, false, at))?;
                (
                    YamlNode {
                        value: YamlValue::Scalar {
                            text: Cow::Owned(text.into_owned()),
                            plain: style == ScalarStyle::Plain,
                        },
                        line,
                    },
                    size,
                    anchor,
                )
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                let is_map = matches!(event, Event::MappingStart(..));
                check_anchor_tag(source, rules, at, anchor, tag.is_some())?;
                if rules.strict && matches!(source.chars.get(span.start.index()), Some('{' | '[')) {
                    return Err(fail(
                        Code::YamlFlowStyle,
                        "flow-style collections (`{...}` or `[...]`) are not allowed in frontmatter; use block style".into(),
                    ));
                }
                if stack.len() >= MAX_YAML_DEPTH {
                    return Err(fail(
                        Code::YamlTooDeep,
                        format!("frontmatter YAML is nested deeper than {MAX_YAML_DEPTH} levels"),
                    ));
                }
                let size = Size::node(0);
                budget
                    .charge(size)
                    .map_err(|e| budget_error(source, e, false, at))?;
                stack.push(if is_map {
                    Frame::Map {
                        entries: Vec::new(),
                        pending_key: None,
                        line,
                        anchor,
                        size,
                    }
                } else {
                    Frame::Seq {
                        items: Vec::new(),
                        line,
                        anchor,
                        size,
                    }
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq {
                    items,
                    line,
                    anchor,
                    size,
                }) => (
                    YamlNode {
                        value: YamlValue::Sequence(items),
                        line,
                    },
                    size,
                    anchor,
                ),
                Some(Frame::Map {
                    entries,
                    line,
                    anchor,
                    size,
                    ..
                }) => (
                    YamlNode {
                        value: YamlValue::Mapping(entries),
                        line,
                    },
                    size,
                    anchor,
                ),
                None => continue,
            },
        };
        if anchor != 0 {
            // The copy kept for later aliases is memory too.
            budget
                .charge_bytes(size.bytes)
                .map_err(|e| budget_error(source, e, false, at))?;
            anchors.insert(anchor, (value.clone(), size));
        }
        // Attach the finished value to its parent.
        match stack.last_mut() {
            None => root = Some(value),
            Some(Frame::Seq {
                items,
                size: parent,
                ..
            }) => {
                parent.add(size);
                items.push(value);
            }
            Some(Frame::Map {
                entries,
                pending_key,
                size: parent,
                ..
            }) => match pending_key.take() {
                None => match value.value {
                    YamlValue::Scalar { text, .. } => {
                        *pending_key = Some(PendingKey {
                            text,
                            line: value.line,
                            line0: at.0,
                            col0: at.1,
                            size,
                        });
                    }
                    other => {
                        return Err(Box::new(source.error(
                            Code::YamlInvalid,
                            format!(
                                "a mapping key must be a string, found {}",
                                other.kind_name()
                            ),
                            at,
                        )));
                    }
                },
                Some(key) => {
                    parent.add(key.size);
                    parent.add(size);
                    // Locate a field by its key line: block scalars start below it.
                    let value = YamlNode {
                        line: key.line,
                        ..value
                    };
                    if let Some(pos) = entries.iter().position(|(k, _)| *k == key.text) {
                        let quoted = quote_key(&key.text);
                        if rules.strict {
                            return Err(Box::new(source.error(
                                Code::YamlDuplicateKey,
                                format!("duplicate key `{quoted}` in frontmatter"),
                                (key.line0, key.col0),
                            )));
                        }
                        diagnostics.push(source.diag(
                            Severity::Warning,
                            Code::YamlDuplicateKey,
                            format!("duplicate key `{quoted}` in frontmatter; the last value wins"),
                            key.line0,
                            key.col0,
                        ));
                        entries.remove(pos);
                    }
                    entries.push((key.text, value));
                }
            },
        }
    }
    Ok(root)
}

/// The first character outside YAML's printable set (tab, LF, CR, U+0020–U+007E,
/// U+0085, U+00A0–U+D7FF, U+E000–U+FFFD, U+10000 and up), with its 0-based line and
/// character column.
fn first_non_printable(text: &str) -> Option<((usize, usize), char)> {
    let printable = |c: char| matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..);
    if text
        .bytes()
        .all(|b| matches!(b, b'\t' | b'\n' | b'\r' | b' '..=b'~'))
    {
        return None;
    }
    let (offset, c) = text.char_indices().find(|&(_, c)| !printable(c))?;
    let before = &text[..offset];
    let line0 = before.bytes().filter(|&b| b == b'\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Some(((line0, before[line_start..].chars().count()), c))
}

/// Refuses anchors and tags in strict mode.
fn check_anchor_tag(
    source: &Source<'_>,
    rules: YamlRules,
    at: (usize, usize),
    anchor: usize,
    tagged: bool,
) -> Result<(), Box<Diagnostic>> {
    if !rules.strict {
        return Ok(());
    }
    if anchor != 0 {
        return Err(Box::new(source.error(
            Code::YamlAnchor,
            "YAML anchors (`&name`) are not allowed in frontmatter",
            at,
        )));
    }
    if tagged {
        return Err(Box::new(source.error(
            Code::YamlTag,
            "YAML tags (`!tag`) are not allowed in frontmatter",
            at,
        )));
    }
    Ok(())
}

/// Turns a parser error into a diagnostic with a plain cause and the right place.
///
/// The parser's messages describe its state ("invalid indentation in quoted
/// scalar"); people need the cause ("unterminated double-quoted string"). Known
/// messages are mapped to a cause and a fix, and located where the problem is (a
/// tab, the opening quote, an unclosed bracket); unknown ones keep the parser's text.
fn explain_scan_error(source: &Source<'_>, err: &ScanError) -> Diagnostic {
    let info = err.info();
    let marker = err.marker();
    let at = clamp_to_text(source, position(marker));
    let char_at_marker = source.chars.get(marker.index());
    let (code, message, at): (Code, Cow<'static, str>, (usize, usize)) = match info {
        "while scanning a quoted scalar, found unexpected end of stream"
        | "while scanning a quoted scalar, found unexpected document indicator" => (
            Code::YamlInvalid,
            unterminated(char_at_marker).into(),
            at,
        ),
        "invalid indentation in quoted scalar" => {
            let message = if closed_later(source.text, marker, char_at_marker) {
                let (kind, quote) = quote_kind(char_at_marker);
                format!(
                    "this {kind}-quoted string is not closed on its line, and the next line is not indented: \
                     close it with `{quote}` on this line, or indent the lines it continues on"
                )
            } else {
                unterminated(char_at_marker)
            };
            (Code::YamlInvalid, message.into(), at)
        }
        "invalid trailing content after double-quoted scalar" => {
            let before = source
                .line_text(at.0)
                .map(|l| l.chars().take(at.1).collect::<String>())
                .unwrap_or_default();
            let message = if before.trim_end().ends_with('\'') {
                "unexpected text after the closing `'` of a single-quoted string: \
                 to put `'` inside single quotes, write it twice (`''`), or quote the value with `\"` instead"
            } else {
                "unexpected text after the closing `\"` of a double-quoted string: \
                 to put `\"` inside double quotes, write `\\\"`, or quote the value with `'` instead"
            };
            (Code::YamlInvalid, message.into(), at)
        }
        "tabs disallowed within this context (block indentation)"
        | "tab cannot be used as indentation"
        | "while scanning a plain scalar, found a tab"
        | "a block scalar content cannot start with a tab" => (
            Code::YamlInvalid,
            "tab character used for indentation: YAML indents with spaces; replace the tab with spaces"
                .into(),
            find_indent_tab(source, at).unwrap_or(at),
        ),
        "tabs disallowed in this context" => (
            Code::YamlInvalid,
            "tab character where YAML needs a space: replace the tab with spaces".into(),
            at,
        ),
        "':' must be followed by a valid YAML whitespace" => (
            Code::YamlInvalid,
            "tab character after `:`: separate a key from its value with a space".into(),
            tab_after_colon(source, at).unwrap_or(at),
        ),
        "mapping values are not allowed in this context" => mapping_value_error(source, at),
        "while parsing a block mapping, did not find expected key" => {
            let line = source.line_text(at.0).unwrap_or_default().trim_start();
            if line.starts_with("- ") || line == "-" {
                (
                    Code::YamlInvalid,
                    "a list item (`- ...`) cannot sit among `key: value` lines: put the list under its key, indented".into(),
                    (at.0, indent_of(source, at.0)),
                )
            } else {
                (
                    Code::YamlInvalid,
                    "expected a `key: value` line here: the keys of one mapping start in the same column; check this line's indentation".into(),
                    at,
                )
            }
        }
        "while parsing a block collection, did not find expected '-' indicator" => (
            Code::YamlInvalid,
            "expected a list item (`- ...`) here: a list cannot continue with `key: value` lines at the same indentation; check this line's indentation"
                .into(),
            at,
        ),
        "simple key expect ':'" | "simple key expected" => (
            Code::YamlInvalid,
            "this line has no `:` after its key: every field is written `key: value`".into(),
            (at.0, indent_of(source, at.0)),
        ),
        "while parsing node, found unknown anchor" => {
            let name = alias_name(source, at);
            (
                Code::YamlInvalid,
                format!(
                    "unknown alias `*{name}`: no anchor `&{name}` is defined before it; if the `*` is text, put the value in quotes"
                )
                .into(),
                at,
            )
        }
        "while parsing a flow sequence, expected ',' or ']'" => (
            Code::YamlInvalid,
            "a `[...]` list is not closed where expected: close it with `]` (items are separated by `,`), or put the whole value in quotes if the `[` is text"
                .into(),
            unclosed_opener(source, marker, at, '['),
        ),
        "while parsing a flow mapping, did not find expected ',' or '}'" => (
            Code::YamlInvalid,
            "a `{...}` mapping is not closed where expected: close it with `}` (entries are separated by `,`), or put the whole value in quotes if the `{` is text"
                .into(),
            unclosed_opener(source, marker, at, '{'),
        ),
        "misplaced bracket" => (
            Code::YamlInvalid,
            "a `]` or `}` without its opening bracket: put the value in quotes if the bracket is text".into(),
            at,
        ),
        "while parsing a quoted scalar, found unknown escape character" => (
            Code::YamlInvalid,
            "unknown escape sequence in a double-quoted string: write `\\\\` for a backslash, or use single quotes, where `\\` has no special meaning"
                .into(),
            find_bad_escape(source, at).unwrap_or(at),
        ),
        "while parsing a quoted scalar, did not find expected hexadecimal number"
        | "while parsing a quoted scalar, found invalid Unicode character escape code" => (
            Code::YamlInvalid,
            "invalid `\\x`, `\\u` or `\\U` escape in a double-quoted string: give 2, 4 or 8 hexadecimal digits of a valid character, or use single quotes, where `\\` has no special meaning"
                .into(),
            find_bad_escape(source, at).unwrap_or(at),
        ),
        "wrongly indented line in block scalar" => (
            Code::YamlInvalid,
            "a line of this block text (`|` or `>`) is indented less than its first line: indent every line at least as much as the first"
                .into(),
            at,
        ),
        "while scanning an anchor or alias, did not find expected alphabetic or numeric character" => (
            Code::YamlInvalid,
            "`&` or `*` at the start of a value begins a YAML anchor or alias and must be followed by a name: put the value in quotes if it is text"
                .into(),
            at,
        ),
        "block sequence entries are not allowed in this context" => (
            Code::YamlInvalid,
            "a list item (`- `) cannot start here: put each item on its own line below the key, indented, or quote the value if the `-` is text"
                .into(),
            at,
        ),
        "comment intercepting the multiline text" => (
            Code::YamlInvalid,
            "a comment (`#`) cannot sit inside a multi-line value: remove it, or put the value in quotes".into(),
            at,
        ),
        "a byte order mark must not appear inside a document" => (
            Code::YamlInvalid,
            "a byte order mark (U+FEFF) inside the frontmatter: remove it".into(),
            at,
        ),
        "recursion limit exceeded" => (
            Code::YamlTooDeep,
            format!("frontmatter YAML is nested deeper than the parser allows (our limit is {MAX_YAML_DEPTH} levels)").into(),
            at,
        ),
        _ => match info.strip_prefix("unexpected character: `") {
            Some(rest) => {
                let shown = match rest.chars().next() {
                    Some('`') => "a backquote (`` ` ``)".to_owned(),
                    Some(c) => format!("`{c}`"),
                    None => "this character".to_owned(),
                };
                (
                    Code::YamlInvalid,
                    format!("a plain value cannot start with {shown}, which YAML reserves: put the value in quotes").into(),
                    at,
                )
            }
            None => (
                Code::YamlInvalid,
                format!("invalid YAML in frontmatter: {info}").into(),
                at,
            ),
        },
    };
    source.error(code, message, at)
}

/// `("double", "\"")` or `("single", "'")` for the quote character at an error.
fn quote_kind(quote: Option<char>) -> (&'static str, &'static str) {
    if quote == Some('\'') {
        ("single", "'")
    } else {
        ("double", "\"")
    }
}

fn unterminated(quote: Option<char>) -> String {
    let (kind, quote) = quote_kind(quote);
    format!("unterminated {kind}-quoted string: add the closing `{quote}`")
}

/// Whether the quoted string opening at `marker` has a closing quote later in the
/// text (so the error is about its continuation lines, not a missing quote).
fn closed_later(text: &str, marker: &Marker, quote: Option<char>) -> bool {
    let Some(quote) = quote else {
        return false;
    };
    let mut rest = text.chars().skip(marker.index() + 1);
    while let Some(c) = rest.next() {
        match c {
            '\\' if quote == '"' => {
                rest.next();
            }
            c if c == quote => return true,
            _ => {}
        }
    }
    false
}

/// Moves a position past the end of the text (where "unexpected end" errors point)
/// to the end of the last line, so the excerpt shows real text.
fn clamp_to_text(source: &Source<'_>, at: (usize, usize)) -> (usize, usize) {
    if source.line_text(at.0).is_some() {
        return at;
    }
    let Some(last) = source.line_count().checked_sub(1) else {
        return at;
    };
    let chars = source.line_text(last).map_or(0, |l| l.chars().count());
    (last, chars)
}

/// The first tab in the indentation of a line at or after `at` (the parser reports
/// some tab errors at the start of the value the tab follows).
fn find_indent_tab(source: &Source<'_>, at: (usize, usize)) -> Option<(usize, usize)> {
    let lines = source.line_count();
    for line0 in at.0..lines {
        let text = source.line_text(line0)?;
        let indent = text.len() - text.trim_start_matches([' ', '\t']).len();
        if let Some(col) = text[..indent].find('\t') {
            return Some((line0, col));
        }
    }
    // A tab after other indentation on the error line (e.g. after `- `).
    let text = source.line_text(at.0)?;
    text.chars()
        .enumerate()
        .skip(at.1)
        .find(|&(_, c)| c == '\t')
        .map(|(col, _)| (at.0, col))
}

/// The number of leading spaces of 0-based line `line0`.
fn indent_of(source: &Source<'_>, line0: usize) -> usize {
    source
        .line_text(line0)
        .map_or(0, |l| l.chars().take_while(|&c| c == ' ').count())
}

/// The first escape at or after `at` on its line that YAML does not define, or whose
/// `\x`, `\u`, `\U` is not followed by enough hexadecimal digits.
fn find_bad_escape(source: &Source<'_>, at: (usize, usize)) -> Option<(usize, usize)> {
    let chars: Vec<char> = source.line_text(at.0)?.chars().collect();
    let mut i = at.1;
    while i < chars.len() {
        if chars[i] != '\\' {
            i += 1;
            continue;
        }
        let digits = match chars.get(i + 1) {
            None => return None,
            Some('x') => 2,
            Some('u') => 4,
            Some('U') => 8,
            Some(
                '0' | 'a' | 'b' | 't' | '\t' | 'n' | 'v' | 'f' | 'r' | 'e' | ' ' | '"' | '/' | '\\'
                | 'N' | '_' | 'L' | 'P',
            ) => 0,
            Some(_) => return Some((at.0, i)),
        };
        let hex_ok = (0..digits).all(|k| chars.get(i + 2 + k).is_some_and(char::is_ascii_hexdigit));
        if !hex_ok {
            return Some((at.0, i));
        }
        i += 2 + digits;
    }
    None
}

/// The tab right after the `:` before `at` on the same line.
fn tab_after_colon(source: &Source<'_>, at: (usize, usize)) -> Option<(usize, usize)> {
    let chars: Vec<char> = source.line_text(at.0)?.chars().collect();
    let end = at.1.min(chars.len());
    let colon = chars[..end].iter().rposition(|&c| c == ':')?;
    (chars.get(colon + 1) == Some(&'\t')).then_some((at.0, colon + 1))
}

/// The alias name written at `at` (after the `*`).
fn alias_name(source: &Source<'_>, at: (usize, usize)) -> String {
    let line = source.line_text(at.0).unwrap_or_default();
    let name: String = line
        .chars()
        .skip(at.1)
        .skip_while(|&c| c == '*')
        .take_while(|&c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
        .take(MAX_QUOTED_KEY_CHARS)
        .collect();
    name
}

/// For an unclosed flow collection reported at the end of the text, the position of
/// its innermost unclosed `open` bracket; otherwise `at`.
fn unclosed_opener(
    source: &Source<'_>,
    marker: &Marker,
    at: (usize, usize),
    open: char,
) -> (usize, usize) {
    if source.line_text(position(marker).0).is_some() {
        return at;
    }
    // Brackets inside quotes are not counted; a rough scan is enough to point at
    // the right line.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for line0 in 0..source.line_count() {
        let mut quote: Option<char> = None;
        for (col, c) in source
            .line_text(line0)
            .unwrap_or_default()
            .chars()
            .enumerate()
        {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => break,
                (None, c) if c == open => stack.push((line0, col)),
                (None, ']' | '}') => {
                    stack.pop();
                }
                _ => {}
            }
        }
    }
    stack.pop().unwrap_or(at)
}

/// "mapping values are not allowed in this context": a `: ` inside a plain value,
/// or a line indented under a value.
fn mapping_value_error(
    source: &Source<'_>,
    at: (usize, usize),
) -> (Code, Cow<'static, str>, (usize, usize)) {
    let line = source.line_text(at.0).unwrap_or_default();
    let before: String = line.chars().take(at.1).collect();
    let indent = line.chars().take_while(|&c| c == ' ').count();
    let key_before = before.trim_start().contains(": ") || before.trim_start().contains(":\t");
    if key_before {
        (
            Code::YamlInvalid,
            "this value contains `: `, which YAML reads as the start of another key: put the whole value in quotes, e.g. `description: \"Use when: ...\"`"
                .into(),
            at,
        )
    } else {
        (
            Code::YamlInvalid,
            "unexpected indentation: this line is indented more than the key above it, so YAML reads it as part of that value; \
             line it up with the other keys (or quote the value above if the `:` is part of its text)"
                .into(),
            (at.0, indent),
        )
    }
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

    fn parse(text: &str, strict: bool) -> Parsed<'_> {
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

    /// The split as first written, line by line with `str::find`: the
    /// reference the vectorized [`split`] must agree with.
    fn split_by_lines(text: &str) -> Result<Split<'_>, SplitError> {
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
                return Ok(Split {
                    frontmatter: &text[fm_start..offset],
                    frontmatter_first_line: 2,
                    body: text[text.len() - next.len()..].trim(),
                });
            }
            offset += line.len() + 1;
            rest = next;
        }
    }

    proptest::proptest! {
        #[test]
        fn split_agrees_with_the_line_by_line_split(
            text in "(---[ \t]?\n)?([a-z: -]{0,6}\n?){0,8}(---\t?\n?)?[a-z\n -]{0,8}|\\PC{0,40}"
        ) {
            proptest::prop_assert_eq!(split(&text), split_by_lines(&text));
        }
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
