//! The fast path for flat, simple frontmatter: a line scanner that builds the same
//! tree as the event-based path for a small, common subset of YAML, and declines
//! (returns `None`) for everything else.
//!
//! The subset, line by line (blank lines may appear anywhere):
//!
//! * `key: value` at column 0, where `key` is an ASCII word (`[A-Za-z0-9_]` then
//!   also `-` and `.`) written directly before the `:`, and `value` is a one-line
//!   scalar: plain, `"double-quoted"` without `\` or `"` inside, or
//!   `'single-quoted'` without `'` inside;
//! * `key:` with nothing after it, followed by either
//!   - a block mapping one level deep: lines `key: value` all indented by the same
//!     number of spaces, or
//!   - a block list: lines `- value` all indented by the same number of spaces
//!     (possibly none),
//!
//!   or by another top-level key or the end, in which case the value is the empty
//!   plain scalar (null).
//!
//! A plain value must not start with an indicator character, must not end with a
//! space or `:`, and must not contain `: `, `#` or a bracket. Keys must be unique.
//! The whole text must be at most [`MAX_FAST_BYTES`] bytes and [`MAX_FAST_LINES`]
//! lines, without tabs, carriage returns, byte order marks, Unicode line or
//! paragraph separators, U+0085, U+00A0 or any character outside YAML's printable
//! set. Within these limits the tree is far below every budget and depth limit of
//! the event-based path, and that path reports no diagnostic, so none is built
//! here.

use std::borrow::Cow;

use super::{Parsed, YamlNode, YamlValue};

/// Frontmatter larger than this is left to the event-based path.
pub(super) const MAX_FAST_BYTES: usize = 16 * 1024;
/// Frontmatter with more lines than this is left to the event-based path.
pub(super) const MAX_FAST_LINES: usize = 256;
/// Keys longer than this are left to the event-based path (YAML limits implicit
/// keys to 1024 characters).
const MAX_KEY_BYTES: usize = 128;

/// A top-level key whose value is still being read.
enum Open<'a> {
    /// `key:` with nothing after it; the next non-blank line decides.
    Pending { key: &'a str, line: u32 },
    /// A nested block mapping indented by `indent` spaces.
    Map {
        key: &'a str,
        line: u32,
        indent: usize,
        entries: Entries<'a>,
    },
    /// A block list indented by `indent` spaces.
    Seq {
        key: &'a str,
        line: u32,
        indent: usize,
        items: Vec<YamlNode<'a>>,
    },
}

/// A mapping's entries; keys and scalars borrow from the frontmatter.
type Entries<'a> = Vec<(Cow<'a, str>, YamlNode<'a>)>;

/// Room made for a block list or nested mapping at its first line (most
/// hold a few values).
const NESTED_CAPACITY: usize = 4;

impl<'a> Open<'a> {
    /// The finished `(key, value)` entry.
    fn finish(self) -> (Cow<'a, str>, YamlNode<'a>) {
        match self {
            Open::Pending { key, line } => (
                Cow::Borrowed(key),
                YamlNode {
                    value: YamlValue::Scalar {
                        text: Cow::Borrowed(""),
                        plain: true,
                    },
                    line,
                },
            ),
            Open::Map {
                key, line, entries, ..
            } => (
                Cow::Borrowed(key),
                YamlNode {
                    value: YamlValue::Mapping(entries),
                    line,
                },
            ),
            Open::Seq {
                key, line, items, ..
            } => (
                Cow::Borrowed(key),
                YamlNode {
                    value: YamlValue::Sequence(items),
                    line,
                },
            ),
        }
    }
}

/// Parses `text` if it is in the fast subset (see the module doc); `None` means
/// "not handled" and the caller must use the event-based path.
pub(crate) fn parse_fast(text: &str, first_line: u32) -> Option<Parsed<'_>> {
    if text.is_empty() || text.len() > MAX_FAST_BYTES || !chars_ok(text) {
        return None;
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut entries: Entries<'_> = Vec::with_capacity(TOP_CAPACITY);
    let mut root_line: Option<u32> = None;
    let mut open: Option<Open<'_>> = None;
    for (line0, raw) in lines(body).enumerate() {
        let raw = raw?;
        if line0 >= MAX_FAST_LINES {
            return None;
        }
        if raw.is_empty() {
            continue;
        }
        let line = first_line.checked_add(u32::try_from(line0).ok()?)?;
        let indent = raw.bytes().take_while(|&b| b == b' ').count();
        let rest = &raw[indent..];
        if rest.is_empty() {
            // A line of only spaces.
            return None;
        }
        // Continue the open value, or close it when the line is back at column 0.
        open = match open.take() {
            None => None,
            Some(Open::Pending {
                key,
                line: key_line,
            }) => {
                if let Some(item) = rest.strip_prefix("- ") {
                    let mut items = Vec::with_capacity(NESTED_CAPACITY);
                    items.push(scalar(item, line)?);
                    open = Some(Open::Seq {
                        key,
                        line: key_line,
                        indent,
                        items,
                    });
                    continue;
                }
                if indent > 0 {
                    let (nested_key, value) = key_value(rest, line)?;
                    let mut entries = Vec::with_capacity(NESTED_CAPACITY);
                    entries.push((Cow::Borrowed(nested_key), value?));
                    open = Some(Open::Map {
                        key,
                        line: key_line,
                        indent,
                        entries,
                    });
                    continue;
                }
                Some(Open::Pending {
                    key,
                    line: key_line,
                })
            }
            Some(Open::Map {
                key,
                line: key_line,
                indent: map_indent,
                entries: mut nested,
            }) => {
                if indent == map_indent {
                    let (nested_key, value) = key_value(rest, line)?;
                    let value = value?;
                    if nested.iter().any(|(k, _)| *k == nested_key) {
                        return None;
                    }
                    nested.push((Cow::Borrowed(nested_key), value));
                    open = Some(Open::Map {
                        key,
                        line: key_line,
                        indent: map_indent,
                        entries: nested,
                    });
                    continue;
                }
                Some(Open::Map {
                    key,
                    line: key_line,
                    indent: map_indent,
                    entries: nested,
                })
            }
            Some(Open::Seq {
                key,
                line: key_line,
                indent: seq_indent,
                mut items,
            }) => {
                if indent == seq_indent
                    && let Some(item) = rest.strip_prefix("- ")
                {
                    items.push(scalar(item, line)?);
                    open = Some(Open::Seq {
                        key,
                        line: key_line,
                        indent: seq_indent,
                        items,
                    });
                    continue;
                }
                Some(Open::Seq {
                    key,
                    line: key_line,
                    indent: seq_indent,
                    items,
                })
            }
        };
        // A top-level `key: value` or `key:` line.
        if indent != 0 {
            return None;
        }
        if let Some(done) = open.take() {
            push_unique(&mut entries, done.finish())?;
        }
        root_line.get_or_insert(line);
        let (key, value) = key_value(rest, line)?;
        match value {
            Some(value) => push_unique(&mut entries, (Cow::Borrowed(key), value))?,
            None => open = Some(Open::Pending { key, line }),
        }
    }
    if let Some(done) = open.take() {
        push_unique(&mut entries, done.finish())?;
    }
    Some(Parsed {
        root: Some(YamlNode {
            value: YamlValue::Mapping(entries),
            line: root_line?,
        }),
        diagnostics: Vec::new(),
    })
}

/// Room made for the top-level keys (most frontmatter has a few).
const TOP_CAPACITY: usize = 8;

/// The lines of `text` (split at `\n`, as `str::split` does), found with a
/// vectorized search; an item is `None` only if a cut were not on a
/// character boundary, which a `\n` always is.
fn lines(text: &str) -> impl Iterator<Item = Option<&str>> {
    let mut start = 0;
    let mut cuts = memchr::memchr_iter(b'\n', text.as_bytes());
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let end = cuts.next().unwrap_or_else(|| {
            done = true;
            text.len()
        });
        let line = text.get(start..end);
        start = end + 1;
        Some(line)
    })
}

/// Adds an entry, or declines on a duplicate key (the event-based path reports it).
fn push_unique<'a>(entries: &mut Entries<'a>, entry: (Cow<'a, str>, YamlNode<'a>)) -> Option<()> {
    if entries.iter().any(|(k, _)| *k == entry.0) {
        return None;
    }
    entries.push(entry);
    Some(())
}

/// Splits `key: value` or `key:` (the line without its indentation) into the key
/// and, unless it is empty, the value located at `line`.
fn key_value(rest: &str, line: u32) -> Option<(&str, Option<YamlNode<'_>>)> {
    let colon = memchr::memchr(b':', rest.as_bytes())?;
    let key = rest.get(..colon)?;
    if !is_simple_key(key) {
        return None;
    }
    let after = rest.get(colon + 1..)?;
    if after.is_empty() {
        return Some((key, None));
    }
    let value = after.strip_prefix(' ')?.trim_start_matches(' ');
    Some((key, Some(scalar(value, line)?)))
}

/// A key the fast path accepts: a short ASCII word.
fn is_simple_key(key: &str) -> bool {
    let bytes = key.as_bytes();
    match bytes.first() {
        Some(b) if b.is_ascii_alphanumeric() || *b == b'_' => {}
        _ => return false,
    }
    bytes.len() <= MAX_KEY_BYTES
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// A one-line scalar in the subset, or `None`.
fn scalar(value: &str, line: u32) -> Option<YamlNode<'_>> {
    let (text, plain) = match value.as_bytes().first()? {
        b'"' => {
            let inner = value.strip_prefix('"')?.strip_suffix('"')?;
            if memchr::memchr2(b'"', b'\\', inner.as_bytes()).is_some() {
                return None;
            }
            (inner, false)
        }
        b'\'' => {
            let inner = value.strip_prefix('\'')?.strip_suffix('\'')?;
            if memchr::memchr(b'\'', inner.as_bytes()).is_some() {
                return None;
            }
            (inner, false)
        }
        first => {
            if is_indicator(*first) || value.ends_with([' ', ':']) || !plain_safe(value) {
                return None;
            }
            (value, true)
        }
    };
    Some(YamlNode {
        value: YamlValue::Scalar {
            text: Cow::Borrowed(text),
            plain,
        },
        line,
    })
}

/// Whether `value` has none of `: `, `#`, `[`, `]`, `{` and `}`, in three
/// vectorized searches over its bytes (all ASCII: no byte of a multi-byte
/// UTF-8 character is one of them).
fn plain_safe(value: &str) -> bool {
    let bytes = value.as_bytes();
    memchr::memchr3(b'#', b'[', b']', bytes).is_none()
        && memchr::memchr2(b'{', b'}', bytes).is_none()
        && memchr::memchr_iter(b':', bytes).all(|i| bytes.get(i + 1) != Some(&b' '))
}

/// Characters that may not start a plain scalar in the subset (YAML's indicators,
/// and `@` and `` ` `` which it reserves).
fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
            | b' '
    )
}

/// Whether every character is one the subset allows: printable ASCII and line
/// feeds, and non-ASCII characters in YAML's printable set other than U+0085,
/// U+00A0, U+2028, U+2029 and U+FEFF.
fn chars_ok(text: &str) -> bool {
    if text.is_ascii() {
        // Folded without stopping early, so the compiler can vectorize it.
        return text
            .bytes()
            .fold(true, |ok, b| ok & matches!(b, b'\n' | b' '..=b'~'));
    }
    text.chars().all(|c| match c {
        '\n' | ' '..='~' => true,
        '\u{2028}' | '\u{2029}' | '\u{feff}' => false,
        '\u{a1}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'.. => true,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    use super::super::{YamlRules, parse_yaml_saphyr};
    use super::*;

    /// Whether the fast path handles `text`; when it does, its result must equal
    /// the event-based path's in both strict and lenient mode.
    fn check(text: &str, first_line: u32) -> Result<bool, String> {
        let Some(fast) = parse_fast(text, first_line) else {
            return Ok(false);
        };
        for strict in [true, false] {
            let slow = parse_yaml_saphyr(text, first_line, YamlRules { strict });
            if fast.root != slow.root || fast.diagnostics != slow.diagnostics {
                return Err(format!(
                    "{text:?} (strict: {strict}):\nfast: {fast:?}\nsaphyr: {slow:?}"
                ));
            }
        }
        Ok(true)
    }

    proptest::proptest! {
        /// The vectorized search answers as a plain reading of the rule.
        #[test]
        fn plain_safe_agrees_with_the_rule(value in "[a-z :#{}\\[\\]]{0,24}|\\PC{0,12}") {
            let bytes = value.as_bytes();
            let expected = !bytes.iter().enumerate().any(|(i, &b)| match b {
                b'#' | b'[' | b']' | b'{' | b'}' => true,
                b':' => bytes.get(i + 1) == Some(&b' '),
                _ => false,
            });
            proptest::prop_assert_eq!(plain_safe(&value), expected);
        }
    }

    #[test]
    fn fixed_inputs_agree() {
        let handled = [
            "name: a\n",
            "name: a",
            "name: a\ndescription: b c  d\n",
            "\n\nname: a\n\ndescription: \"x: y # z & w\"\n\n",
            "a: 'it is'\nb: \"\"\nc: ''\n",
            "a: don't\nb: say \"hi\"\nc: a:b\nd: x -\ne: ~\nf: null\ng: 1.5\n",
            "a:   spaced\n",
            "a: caf\u{e9} \u{1f600} \u{2014}\n",
            "metadata:\n  author: me\n  version: \"1.0\"\nname: x\n",
            "metadata:\n    a: 1\n    b: 2\n",
            "tools:\n  - Read\n  - \"Write\"\n  - 'Bash'\nname: x\n",
            "tools:\n- a\n- b\nname: x\n",
            "a:\nb: c\n",
            "a:\n",
            "a:\n\n  k: v\n\n  l: w\n",
            "a.b-c_d: e\n9: x\n_: y\n",
            "a: b&c *d !e |f >g %h @i `j`\n",
            "a: x,y\n",
            "a: 'x \\ y'\n",
            "a:\n\n- b\n\n- c\n",
            "a:\n\n  - b\nc: d\n",
            "a:\n  - b\n\nc:\n",
            "a: b\u{3000}\nc: \u{ff1a}d\n",
            "a: x :y\nb: \\n\nc: a'b\"c\nd: .5\ne: <<\nf: ...\n",
        ];
        for text in handled {
            for first_line in [1, 2, 40] {
                assert_eq!(check(text, first_line), Ok(true), "{text:?}");
            }
        }
        let declined = [
            "",
            "\n",
            "# c\na: b\n",
            "a: b # c\n",
            "a: b\na: c\n",
            "m:\n  a: b\n  a: c\n",
            "a: b:\n",
            "a: b: c\n",
            "a: b \n",
            "a:  \n",
            "a: b\n  c\n",
            "a: -b\n",
            "a: [b]\n",
            "a: {b: c}\n",
            "a: &x b\n",
            "a: *x\n",
            "a: !t b\n",
            "a: |\n  b\n",
            "a: >\n  b\n",
            "a: \"b\\nc\"\n",
            "a: 'b''c'\n",
            "a: \"b\" \n",
            "a: \"b\n",
            "a:\tb\n",
            "a: b\r\n",
            "---\na: b\n",
            "a: b\n...\n",
            "a: b\n---\n",
            " a: b\n",
            "a : b\n",
            "\"a\": b\n",
            "a:b\n",
            "? a\n: b\n",
            "- a\n- b\n",
            "a:\n  - b\n  c: d\n",
            "a:\n  - b\n - c\n",
            "a:\n  k: v\n    w\n",
            "a:\n  k:\n    l: m\n",
            "a:\n  -  b\n",
            "a:\n  -\n",
            "a: \u{a0}b\n",
            "a: b\u{85}c\n",
            "a: b\u{2028}c\n",
            "a: \u{feff}b\n",
            "a: b\u{1}\n",
            "   \na: b\n",
            "%YAML 1.2\na: b\n",
            "a: @b\n",
            "a: `b`\n",
            "a:\n  - b\n- c\n",
            "a:\n- b\n  - c\n",
            "a:\n  k: v\n  - b\n",
            "a:\n  - - b\n",
            "a:\n  - b: c\n",
            "m:\n  k: v\n- x\n",
            "a b: c\n",
            "a: b\n  - c\n",
        ];
        for text in declined {
            assert_eq!(check(text, 2), Ok(false), "{text:?}");
        }
        // Above the size and line caps the event-based path runs.
        let long = format!("a: b\nc: {}\n", "x".repeat(MAX_FAST_BYTES));
        assert_eq!(check(&long, 2), Ok(false));
        let many: String = (0..=MAX_FAST_LINES).map(|i| format!("k{i}: v\n")).collect();
        assert_eq!(check(&many, 2), Ok(false));
        let at_cap: String = (0..MAX_FAST_LINES).map(|i| format!("k{i}: v\n")).collect();
        assert_eq!(check(&at_cap, 2), Ok(true));
    }

    /// Characters for generated keys and values: letters, every YAML indicator,
    /// quotes, backslash, spaces, tabs, unicode and the line-like characters.
    const CHARS: &[char] = &[
        'a',
        'b',
        'Z',
        '0',
        '1',
        ' ',
        ' ',
        ':',
        '-',
        '?',
        ',',
        '[',
        ']',
        '{',
        '}',
        '#',
        '&',
        '*',
        '!',
        '|',
        '>',
        '\'',
        '"',
        '%',
        '@',
        '`',
        '\\',
        '.',
        '~',
        '_',
        '/',
        '\t',
        '\u{e9}',
        '\u{2014}',
        '\u{1f600}',
        '\u{a0}',
        '\u{85}',
        '\u{2028}',
        '\u{feff}',
        '\u{1}',
        '\r',
    ];

    /// A mostly simple word, sometimes (weight `wild` in 10) any string over
    /// [`CHARS`].
    fn word(wild: u32) -> impl Strategy<Value = String> {
        prop_oneof![
            8 => prop::sample::select(vec![
                "name", "a", "hello world", "it's", "http://x.y/z", "1.0", "true", "null", "~",
                "a,b", "\u{e9}t\u{e9}", "x -", "a  b", "a:b", "50%", "x@y", "a `c`", "a&b",
            ])
            .prop_map(str::to_owned),
            1 => prop::sample::select(vec![
                "it's", "say \"hi\"", "`c`", "", "Use when: x", "C#", "end:", "-1", "- x", "...", "---", " a", "a ", "\\n",
                "'", "\"", "''", "{a}", "[a]", "*a", "&a", "!a", "|", ">", "?", ":", "%a", "@a",
            ])
            .prop_map(str::to_owned),
            wild => prop::collection::vec(prop::sample::select(CHARS.to_vec()), 0..8)
                .prop_map(|cs| cs.into_iter().collect::<String>()),
        ]
    }

    /// A value as written after `key: ` or `- `: plain, or quoted.
    fn value(wild: u32) -> impl Strategy<Value = String> {
        prop_oneof![
            3 => word(wild),
            1 => word(wild).prop_map(|w| format!("\"{w}\"")),
            1 => word(wild).prop_map(|w| format!("'{w}'")),
        ]
    }

    /// One or more lines of a near-flat frontmatter; `wild` (0 to 10) weighs the
    /// odd lines, keys and values against the simple ones.
    fn chunk(wild: u32) -> impl Strategy<Value = String> {
        let key = prop_oneof![
            2 => prop::sample::select(vec![
                "name", "description", "metadata", "tools", "a-b", "x.y", "9", "_x", "A", "true",
            ])
            .prop_map(str::to_owned),
            8 => (0..1000u32).prop_map(|n| format!("k{n}")),
            wild => word(wild),
        ];
        let sep = prop_oneof![
            10 => Just(": "),
            wild => prop::sample::select(vec![":  ", ":", " : ", ":\t"]),
        ];
        let indent = prop::sample::select(vec!["", " ", "  ", "  ", "    "]);
        prop_oneof![
            6 => (key.clone(), sep, value(wild)).prop_map(|(k, s, v)| format!("{k}{s}{v}\n")),
            1 => Just("\n".to_owned()),
            wild => prop::sample::select(vec!["  \n", "# c\n", "---\n", "...\n", "  more\n", "-\n"])
                .prop_map(str::to_owned),
            2 => (key.clone(), indent.clone(), prop::collection::vec((key.clone(), value(wild)), 1..4))
                .prop_map(|(k, ind, pairs)| {
                    let mut s = format!("{k}:\n");
                    for (nk, nv) in pairs {
                        s.push_str(&format!("{ind}{nk}: {nv}\n"));
                    }
                    s
                }),
            2 => (key, indent, prop::collection::vec(value(wild), 1..4)).prop_map(|(k, ind, items)| {
                let mut s = format!("{k}:\n");
                for item in items {
                    s.push_str(&format!("{ind}- {item}\n"));
                }
                s
            }),
        ]
    }

    #[test]
    fn generated_inputs_agree() {
        let chunks = (0..=4u32).prop_flat_map(|wild| prop::collection::vec(chunk(wild), 1..6));
        let text = (chunks, any::<bool>()).prop_map(|(chunks, nl)| {
            let mut s = chunks.concat();
            if !nl {
                s.pop();
            }
            s
        });
        let handled = std::cell::Cell::new(0usize);
        let total = std::cell::Cell::new(0usize);
        let mut runner = TestRunner::new(Config {
            cases: 20_000,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&text, |text| {
                total.set(total.get() + 1);
                match check(&text, 2) {
                    Ok(true) => handled.set(handled.get() + 1),
                    Ok(false) => {}
                    Err(e) => return Err(TestCaseError::fail(e)),
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
        // The fast path must take a good share, or this test proves nothing.
        assert!(
            handled.get() * 5 >= total.get(),
            "handled {} of {}",
            handled.get(),
            total.get()
        );
        // And it must decline a good share: the generator reaches the edges.
        assert!(
            handled.get() * 5 <= total.get() * 4,
            "handled {} of {}",
            handled.get(),
            total.get()
        );
    }

    /// The documents in one corpus file: a `SKILL.md`, or the output of
    /// `git cat-file --batch` (`<id> blob <size>` headers, each followed by its
    /// content and a line feed).
    fn corpus_documents(bytes: &[u8]) -> Vec<String> {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut out = Vec::new();
        let mut rest = bytes;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            let header = String::from_utf8_lossy(&rest[..nl]);
            let mut fields = header.split(' ');
            let (Some(id), Some(kind), Some(size), None) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                break;
            };
            let Ok(size) = size.parse::<usize>() else {
                break;
            };
            let body = &rest[nl + 1..];
            if id.len() != 40 || size > body.len() {
                break;
            }
            if kind == "blob" {
                out.push(text(&body[..size]));
            }
            rest = body.get(size + 1..).unwrap_or_default();
            if rest.is_empty() {
                return out;
            }
        }
        if out.is_empty() {
            vec![text(bytes)]
        } else {
            out
        }
    }

    /// The corpus check: runs both paths over the frontmatter of every document in
    /// the files listed (one path a line) in the file `SKILLS_FM_PARITY_LIST`, and
    /// reports how many the fast path handles and how many differ (must be none).
    ///
    /// `SKILLS_FM_PARITY_LIST=files.txt cargo test -p skills-core --release --lib
    /// corpus_parity -- --ignored --nocapture`
    #[test]
    #[ignore = "needs a corpus: SKILLS_FM_PARITY_LIST names a file listing SKILL.md paths"]
    fn corpus_parity() {
        let list = std::env::var("SKILLS_FM_PARITY_LIST").expect("SKILLS_FM_PARITY_LIST");
        let list = std::fs::read_to_string(list).expect("list file");
        let (mut docs, mut with_fm, mut handled, mut mismatches) = (0usize, 0, 0, 0);
        let (mut fast_time, mut slow_time) = (Duration::ZERO, Duration::ZERO);
        for path in list.lines().filter(|l| !l.trim().is_empty()) {
            let bytes = std::fs::read(path.trim()).expect("corpus file");
            for doc in corpus_documents(&bytes) {
                docs += 1;
                let normalized = super::super::normalize(&doc);
                let Ok(split) = super::super::split(&normalized) else {
                    continue;
                };
                with_fm += 1;
                let (fm, first) = (split.frontmatter, split.frontmatter_first_line);
                match check(fm, first) {
                    Ok(true) => {
                        handled += 1;
                        let t = Instant::now();
                        std::hint::black_box(parse_fast(fm, first));
                        fast_time += t.elapsed();
                        let t = Instant::now();
                        std::hint::black_box(parse_yaml_saphyr(
                            fm,
                            first,
                            YamlRules { strict: false },
                        ));
                        slow_time += t.elapsed();
                    }
                    Ok(false) => {
                        if std::env::var_os("SKILLS_FM_PARITY_SHOW").is_some() {
                            eprintln!("DECLINED {fm:?}");
                        }
                    }
                    Err(e) => {
                        mismatches += 1;
                        if mismatches <= 5 {
                            eprintln!("MISMATCH in {path}: {e}");
                        }
                    }
                }
            }
        }
        let share = |n: usize| n as f64 * 100.0 / with_fm.max(1) as f64;
        eprintln!(
            "documents: {docs}, with frontmatter: {with_fm}, handled by the fast path: {handled} \
             ({:.1}%), mismatches: {mismatches}; on the handled ones, fast {fast_time:?} vs saphyr {slow_time:?}",
            share(handled)
        );
        assert_eq!(mismatches, 0);
    }
}
