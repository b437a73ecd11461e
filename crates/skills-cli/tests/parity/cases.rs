//! Deterministic generator of skill folders for the parity test.
//!
//! Every case is one skill directory `<root>/<case id>/<dir name>/` holding
//! the entries of [`Case::entries`]. The set is fixed: the same cases, with
//! the same bytes, are generated on every run (the combinatorial part uses a
//! seeded LCG, not a random source).

use skills_testkit::Lcg;
use std::{fs, io, path::Path, path::PathBuf};

/// Name of the directory used when a case's name cannot be a directory name.
const FALLBACK_DIR: &str = "skill";
/// Directory name that never matches the generated skill names.
const MISMATCH_DIR: &str = "different-dir";
/// The name used by cases that vary something other than the name.
const VALID_NAME: &str = "my-skill";
/// The `description:` value used by cases that vary something else.
const VALID_DESCRIPTION: &str = " A valid description of what this skill does.";
/// Markdown body written after the closing fence.
const BODY: &str = "# Instructions\n\nDo the thing, then report back.\n";
/// Number of combinatorial cases mixing names, descriptions, extra fields
/// and envelopes.
const COMBOS: usize = 210;

/// What one path inside a case's skill directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A regular file with these bytes.
    File(Vec<u8>),
    /// An (empty) directory.
    Dir,
}

/// One generated skill directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Case {
    /// Unique, filesystem-safe ASCII id; also the case's folder name.
    pub(crate) id: String,
    /// Name of the skill directory (often the skill name, sometimes not).
    pub(crate) dir_name: String,
    /// Entries of the skill directory, by file name.
    pub(crate) entries: Vec<(String, Entry)>,
}

impl Case {
    /// The bytes skills-ref reads: `SKILL.md` if that path exists, else
    /// `skill.md`. `None` when there is nothing to read, or when the path
    /// found first is a directory.
    pub(crate) fn primary_file(&self) -> Option<&[u8]> {
        ["SKILL.md", "skill.md"].iter().find_map(|wanted| {
            self.entries
                .iter()
                .find(|(name, _)| name == wanted)
                .map(|(_, entry)| match entry {
                    Entry::File(bytes) => Some(bytes.as_slice()),
                    Entry::Dir => None,
                })
        })?
    }

    /// Creates the case under `root` and returns `(case folder, skill dir)`.
    pub(crate) fn write(&self, root: &Path) -> io::Result<(PathBuf, PathBuf)> {
        let case_root = root.join(&self.id);
        let skill_dir = case_root.join(&self.dir_name);
        fs::create_dir_all(&skill_dir)?;
        for (name, entry) in &self.entries {
            let path = skill_dir.join(name);
            match entry {
                Entry::File(bytes) => fs::write(path, bytes)?,
                Entry::Dir => fs::create_dir(path)?,
            }
        }
        Ok((case_root, skill_dir))
    }
}

/// How a frontmatter text is wrapped into a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Envelope {
    /// `---\n<fm>---\n<body>`.
    Lf,
    /// As [`Envelope::Lf`] with every line ending CRLF.
    Crlf,
    /// As [`Envelope::Lf`] with every line ending a lone CR.
    Cr,
    /// CRLF up to the closing fence, LF in the body.
    MixedEol,
    /// Closing fence followed by spaces and a tab.
    ClosingWs,
    /// Body containing `---` horizontal rules.
    BodyHr,
    /// Nothing after the closing fence, not even a newline.
    NoBody,
    /// A UTF-8 byte order mark before the opening fence.
    Bom,
    /// The file is named `skill.md` instead of `SKILL.md`.
    LowercaseFile,
}

impl Envelope {
    const ALL: [Self; 9] = [
        Self::Lf,
        Self::Crlf,
        Self::Cr,
        Self::MixedEol,
        Self::ClosingWs,
        Self::BodyHr,
        Self::NoBody,
        Self::Bom,
        Self::LowercaseFile,
    ];

    /// Envelopes the combinatorial cases draw from (LF weighted up).
    const COMBO: [Self; 10] = [
        Self::Lf,
        Self::Lf,
        Self::Lf,
        Self::Crlf,
        Self::Crlf,
        Self::Cr,
        Self::ClosingWs,
        Self::BodyHr,
        Self::NoBody,
        Self::LowercaseFile,
    ];

    fn suffix(self) -> &'static str {
        match self {
            Self::Lf => "lf",
            Self::Crlf => "crlf",
            Self::Cr => "cr",
            Self::MixedEol => "mixed-eol",
            Self::ClosingWs => "closing-ws",
            Self::BodyHr => "body-hr",
            Self::NoBody => "no-body",
            Self::Bom => "bom",
            Self::LowercaseFile => "lowercase-file",
        }
    }

    /// Returns the file name and its bytes.
    fn wrap(self, fm: &str) -> (&'static str, Vec<u8>) {
        let lf = format!("---\n{fm}---\n{BODY}");
        let text = match self {
            Self::Lf | Self::LowercaseFile => lf,
            Self::Crlf => lf.replace('\n', "\r\n"),
            Self::Cr => lf.replace('\n', "\r"),
            Self::MixedEol => format!("---\r\n{}---\r\n{BODY}", fm.replace('\n', "\r\n")),
            Self::ClosingWs => format!("---\n{fm}---  \t\n{BODY}"),
            Self::BodyHr => format!("---\n{fm}---\n# Title\n\n---\n\nMore text.\n\n---\n"),
            Self::NoBody => format!("---\n{fm}---"),
            Self::Bom => format!("\u{feff}{lf}"),
        };
        let file = if self == Self::LowercaseFile {
            "skill.md"
        } else {
            "SKILL.md"
        };
        (file, text.into_bytes())
    }
}

/// A value for the `name:` key: the YAML text after `name:` and the
/// directory names to pair it with.
#[derive(Debug)]
struct NameVariant {
    label: String,
    frag: String,
    dirs: Vec<String>,
}

/// A value for the `description:` key: the YAML text after `description:`.
#[derive(Debug)]
struct DescVariant {
    label: String,
    frag: String,
}

/// Further frontmatter lines (other keys).
#[derive(Debug)]
struct ExtraVariant {
    label: String,
    lines: String,
}

impl ExtraVariant {
    /// The first top-level key, to avoid combining two extras into a
    /// duplicate key by accident.
    fn key(&self) -> &str {
        self.lines.split(':').next().unwrap_or_default()
    }
}

/// Whether `value` can be used as a directory name as it is.
fn fs_safe(value: &str) -> bool {
    !value.trim().is_empty()
        && value != "."
        && value != ".."
        && !value.contains('/')
        && !value.chars().any(char::is_control)
        && value.len() <= 200
}

/// A plain-scalar name paired with a matching and a mismatching directory
/// (or with [`FALLBACK_DIR`] when it cannot be a directory name).
fn plain(out: &mut Vec<NameVariant>, label: &str, value: &str) {
    let dirs = if fs_safe(value) {
        vec![value.to_owned(), MISMATCH_DIR.to_owned()]
    } else {
        vec![FALLBACK_DIR.to_owned()]
    };
    out.push(NameVariant {
        label: label.to_owned(),
        frag: format!(" {value}"),
        dirs,
    });
}

/// A name written as `frag`, paired with exactly `dirs`.
fn with_dirs(out: &mut Vec<NameVariant>, label: &str, frag: &str, dirs: &[&str]) {
    out.push(NameVariant {
        label: label.to_owned(),
        frag: frag.to_owned(),
        dirs: dirs.iter().map(|d| (*d).to_owned()).collect(),
    });
}

fn name_variants() -> Vec<NameVariant> {
    let mut v = Vec::new();
    let plains: &[(&str, &str)] = &[
        ("valid-basic", "my-skill"),
        ("valid-single-char", "a"),
        ("valid-trailing-digit", "skill1"),
        ("valid-mixed-digits", "a1-b2-c3"),
        ("digits-only", "123"),
        ("leading-digit", "1skill"),
        ("unicode-cafe", "café"),
        ("unicode-cjk", "日本語"),
        ("unicode-accents-hyphen", "données-ü"),
        ("unicode-eszett", "straße"),
        ("unicode-greek", "αβγ"),
        ("unicode-cyrillic", "привет"),
        ("unicode-arabic", "مرحبا"),
        ("unicode-hebrew", "שלום"),
        ("unicode-hangul", "한국어"),
        ("unicode-thai-no-marks", "ไทย"),
        ("small-roman-numeral", "ⅻ"),
        ("n-apostrophe", "ŉ"),
        ("ideographic-zero", "〇"),
        ("final-sigma", "λόγος"),
        ("arabic-indic-digit", "skill-٣"),
        ("spacing-mark-devanagari", "कि"),
        ("nonspacing-mark-arabic", "مَ"),
        ("nonspacing-mark-thai", "ภูมิ"),
        ("combining-acute-on-x", "x\u{301}"),
        ("upper-first", "My-Skill"),
        ("upper-all", "MY-SKILL"),
        ("upper-unicode-first", "Café"),
        ("upper-unicode-all", "ÉCOLE"),
        ("upper-greek", "ΑΒΓ"),
        ("upper-cyrillic", "ПРИВЕТ"),
        ("titlecase-dz", "ǅemal"),
        ("titlecase-greek", "ᾈ"),
        ("dotted-capital-i", "İstanbul"),
        ("kelvin-sign", "\u{212a}"),
        ("ohm-sign", "\u{2126}"),
        ("roman-numeral-upper", "Ⅻ"),
        ("fullwidth-lower", "ｍｙ－ｓｋｉｌｌ"),
        ("fullwidth-upper", "ＭＹ－ＳＫＩＬＬ"),
        ("ligature-fi", "ﬁle"),
        ("superscript-two", "x²"),
        ("circled-letters", "ⓐⓑ"),
        ("vulgar-fraction", "½"),
        ("decomposed-acute", "cafe\u{301}"),
        ("leading-hyphen", "-skill"),
        ("trailing-hyphen", "skill-"),
        ("hyphen-only", "-"),
        ("double-hyphen", "my--skill"),
        ("triple-hyphen", "a---b"),
        ("hyphen-edges-and-double", "-my--skill-"),
        ("underscore", "my_skill"),
        ("space-inside", "my skill"),
        ("dot-inside", "my.skill"),
        ("dot-only", "."),
        ("dot-dot", ".."),
        ("slash", "a/b"),
        ("unicode-hyphen", "my\u{2010}skill"),
        ("zero-width-joiner", "my\u{200d}skill"),
        ("emoji-only", "🙂"),
        ("emoji-suffix", "a🙂"),
        ("colon-inside", "my:skill"),
        ("at-sign", "my@skill"),
        ("reserved-claude", "claude-helper"),
        ("reserved-anthropic", "anthropic-tools"),
        ("yaml-null-word", "null"),
        ("yaml-tilde", "~"),
        ("yaml-bool-word", "true"),
        ("yaml-float", "1.5"),
    ];
    for (label, value) in plains {
        plain(&mut v, label, value);
    }
    let long: &[(&str, String)] = &[
        ("len-64-ascii", "a".repeat(64)),
        ("len-65-ascii", "a".repeat(65)),
        ("len-65-upper", "A".repeat(65)),
        ("len-64-e-acute", "é".repeat(64)),
        ("len-65-e-acute", "é".repeat(65)),
        ("len-64-cjk", "日".repeat(64)),
        ("len-65-cjk", "日".repeat(65)),
        ("len-64-hyphenated", format!("{}c", "ab-".repeat(21))),
        ("len-65-hyphenated", format!("{}cd", "ab-".repeat(21))),
        ("len-32-ligatures-nfkc-64", "ﬁ".repeat(32)),
        ("len-33-ligatures-nfkc-66", "ﬁ".repeat(33)),
    ];
    for (label, value) in long {
        plain(&mut v, label, value);
    }
    let explicit: &[(&str, &str, &[&str])] = &[
        ("empty-value", "", &[FALLBACK_DIR]),
        ("empty-double-quoted", " \"\"", &[FALLBACK_DIR]),
        ("empty-single-quoted", " ''", &[FALLBACK_DIR]),
        ("whitespace-quoted", " \"   \"", &[FALLBACK_DIR]),
        (
            "padded-quoted",
            " \" my-skill \"",
            &[" my-skill ", "my-skill"],
        ),
        (
            "double-quoted",
            " \"my-skill\"",
            &["my-skill", MISMATCH_DIR],
        ),
        ("single-quoted", " 'my-skill'", &["my-skill", MISMATCH_DIR]),
        ("quoted-upper", " \"MY-SKILL\"", &["MY-SKILL"]),
        ("quoted-tab-escape", " \"my\\tskill\"", &[FALLBACK_DIR]),
        ("quoted-newline-escape", " \"my-skill\\n\"", &["my-skill"]),
        (
            "quoted-unicode-escape",
            " \"my\\u002Dskill\"",
            &["my-skill"],
        ),
        ("quoted-apostrophe", " 'it''s'", &["it's"]),
        (
            "literal-block",
            " |\n  my-skill",
            &["my-skill", MISMATCH_DIR],
        ),
        (
            "folded-block-strip",
            " >-\n  my-skill",
            &["my-skill", MISMATCH_DIR],
        ),
        ("trailing-comment", " my-skill # the name", &["my-skill"]),
        (
            "nested-mapping",
            "\n  first: my-skill",
            &[FALLBACK_DIR, "my-skill"],
        ),
        ("nested-list", "\n  - my-skill", &[FALLBACK_DIR]),
        (
            "fullwidth-lower-ascii-dir",
            " ｍｙ－ｓｋｉｌｌ",
            &["my-skill"],
        ),
        ("ligature-name-ascii-dir", " ﬁle", &["file"]),
        ("ascii-name-ligature-dir", " file", &["ﬁle"]),
        ("decomposed-name-composed-dir", " cafe\u{301}", &["café"]),
        ("composed-name-decomposed-dir", " café", &["cafe\u{301}"]),
        ("circled-name-ascii-dir", " ⓐⓑ", &["ab"]),
        ("lower-name-upper-dir", " my-skill", &["My-Skill"]),
        ("upper-name-lower-dir", " My-Skill", &["my-skill"]),
        ("name-padded-dir", " my-skill", &[" my-skill"]),
        (
            "ideographic-space-padded-quoted",
            " \"\u{3000}my-skill\"",
            &["my-skill", "\u{3000}my-skill"],
        ),
        ("nbsp-padded-quoted", " \"my-skill\u{a0}\"", &["my-skill"]),
    ];
    for (label, frag, dirs) in explicit {
        with_dirs(&mut v, label, frag, dirs);
    }
    v
}

fn desc(out: &mut Vec<DescVariant>, label: &str, frag: String) {
    out.push(DescVariant {
        label: label.to_owned(),
        frag,
    });
}

fn description_variants() -> Vec<DescVariant> {
    let mut v = Vec::new();
    desc(&mut v, "ok", VALID_DESCRIPTION.to_owned());
    desc(&mut v, "one-char", " x".to_owned());
    desc(&mut v, "nbsp-only-quoted", " \"\u{a0}\"".to_owned());
    desc(
        &mut v,
        "unicode-spaces-only-quoted",
        " \"\u{2003}\u{3000}\"".to_owned(),
    );
    desc(
        &mut v,
        "zero-width-space-only-quoted",
        " \"\u{200b}\"".to_owned(),
    );
    desc(&mut v, "len-1024-emoji", format!(" {}", "🙂".repeat(1024)));
    desc(&mut v, "len-1025-emoji", format!(" {}", "🙂".repeat(1025)));
    desc(&mut v, "empty-value", String::new());
    desc(&mut v, "empty-double-quoted", " \"\"".to_owned());
    desc(&mut v, "empty-single-quoted", " ''".to_owned());
    desc(&mut v, "whitespace-quoted", " \"   \"".to_owned());
    desc(&mut v, "empty-literal-block", " |".to_owned());
    desc(&mut v, "blank-literal-block", " |\n  ".to_owned());
    desc(&mut v, "len-1024", format!(" {}", "a".repeat(1024)));
    desc(&mut v, "len-1025", format!(" {}", "a".repeat(1025)));
    desc(&mut v, "len-1024-e-acute", format!(" {}", "é".repeat(1024)));
    desc(&mut v, "len-1025-e-acute", format!(" {}", "é".repeat(1025)));
    desc(&mut v, "len-1025-cjk", format!(" {}", "日".repeat(1025)));
    desc(
        &mut v,
        "quoted-padded-1025-raw-1023-trimmed",
        format!(" \"  {}\"", "a".repeat(1023)),
    );
    desc(
        &mut v,
        "literal-1023-plus-newline",
        format!(" |\n  {}", "a".repeat(1023)),
    );
    desc(
        &mut v,
        "literal-1024-plus-newline",
        format!(" |\n  {}", "a".repeat(1024)),
    );
    desc(
        &mut v,
        "literal-strip-1024",
        format!(" |-\n  {}", "a".repeat(1024)),
    );
    desc(
        &mut v,
        "literal-strip-1025",
        format!(" |-\n  {}", "a".repeat(1025)),
    );
    desc(
        &mut v,
        "folded-511-511-clip",
        format!(" >\n  {}\n  {}", "a".repeat(511), "b".repeat(511)),
    );
    desc(
        &mut v,
        "folded-512-512-clip",
        format!(" >\n  {}\n  {}", "a".repeat(512), "b".repeat(512)),
    );
    desc(
        &mut v,
        "folded-512-511-strip",
        format!(" >-\n  {}\n  {}", "a".repeat(512), "b".repeat(511)),
    );
    desc(
        &mut v,
        "literal-multiline",
        " |\n  Line one.\n  Line two.\n\n  Line four.".to_owned(),
    );
    desc(
        &mut v,
        "folded-multiline",
        " >\n  Folded\n  text.".to_owned(),
    );
    desc(
        &mut v,
        "plain-multiline",
        " First line\n  continues here".to_owned(),
    );
    desc(&mut v, "single-quoted", " 'It''s quoted'".to_owned());
    desc(
        &mut v,
        "double-quoted-escapes",
        " \"Say \\\"hi\\\" caf\\u00e9\\tnow\"".to_owned(),
    );
    desc(
        &mut v,
        "double-quoted-newline",
        " \"Line1\\nLine2\"".to_owned(),
    );
    desc(
        &mut v,
        "markup-and-ampersand",
        " Use <b>bold</b> & <script>alert(1)</script> tags".to_owned(),
    );
    desc(&mut v, "quoted-markup", " \"<tag> & more\"".to_owned());
    desc(
        &mut v,
        "trailing-comment",
        " Described here # trailing comment".to_owned(),
    );
    desc(&mut v, "quoted-colon", " \"Note: has a colon\"".to_owned());
    desc(&mut v, "yaml-null-word", " null".to_owned());
    desc(&mut v, "yaml-bool-word", " true".to_owned());
    desc(&mut v, "yaml-int", " 123".to_owned());
    desc(&mut v, "nested-mapping", "\n  a: b".to_owned());
    desc(&mut v, "nested-list", "\n  - item".to_owned());
    desc(
        &mut v,
        "unicode-text",
        " Descripción en español con ñ y emoji 🙂".to_owned(),
    );
    desc(
        &mut v,
        "brackets-in-plain",
        " Handles a [b] {c} inline".to_owned(),
    );
    desc(
        &mut v,
        "dashes-inside",
        " Something --- with dashes".to_owned(),
    );
    v
}

fn extra(out: &mut Vec<ExtraVariant>, label: &str, lines: String) {
    out.push(ExtraVariant {
        label: label.to_owned(),
        lines,
    });
}

fn extra_variants() -> Vec<ExtraVariant> {
    let mut v = Vec::new();
    let fixed: &[(&str, &str)] = &[
        ("unknown-one", "author: me"),
        ("unknown-several", "author: me\nversion: 1.0\ntags: x"),
        ("unknown-capitalised-name", "Name: other"),
        ("unknown-underscore", "allowed_tools: Read"),
        ("unknown-unicode-key", "名前: x"),
        ("unknown-empty-key", "\"\": x"),
        ("unknown-nested", "extra:\n  a: b"),
        (
            "compat-ok",
            "compatibility: Requires git and network access",
        ),
        ("compat-map", "compatibility:\n  claude: yes"),
        ("compat-list", "compatibility:\n  - claude"),
        ("compat-empty", "compatibility:"),
        ("compat-empty-quoted", "compatibility: \"\""),
        (
            "metadata-map",
            "metadata:\n  author: me\n  version: \"1.0\"",
        ),
        ("metadata-list", "metadata:\n  - a\n  - b"),
        ("metadata-scalar", "metadata: just text"),
        ("metadata-empty", "metadata:"),
        (
            "metadata-nested",
            "metadata:\n  a:\n    b:\n      c:\n        d: e",
        ),
        ("license-ok", "license: MIT"),
        ("license-map", "license:\n  name: MIT"),
        ("license-list", "license:\n  - MIT\n  - Apache-2.0"),
        ("license-empty", "license:"),
        ("allowed-tools-ok", "allowed-tools: Bash(git:*) Read Write"),
        ("allowed-tools-list", "allowed-tools:\n  - Read\n  - Write"),
        ("allowed-tools-map", "allowed-tools:\n  read: yes"),
        ("allowed-tools-empty", "allowed-tools:"),
        (
            "all-optional",
            "license: MIT\ncompatibility: Needs python3\nmetadata:\n  k: v\nallowed-tools: Read",
        ),
        (
            "all-optional-plus-unknown",
            "license: MIT\ncompatibility: Needs python3\nmetadata:\n  k: v\nallowed-tools: Read\nversion: 2",
        ),
        ("comments", "# a comment\n\n# another comment"),
        ("blank-lines", "\n\n"),
        ("document-end-marker", "..."),
        ("merge-key", "<<: x"),
        ("complex-key", "? license\n: MIT"),
        ("key-space-before-colon", "license : MIT"),
    ];
    for (label, lines) in fixed {
        extra(&mut v, label, (*lines).to_owned());
    }
    extra(
        &mut v,
        "compat-500",
        format!("compatibility: {}", "c".repeat(500)),
    );
    extra(
        &mut v,
        "compat-501",
        format!("compatibility: {}", "c".repeat(501)),
    );
    extra(
        &mut v,
        "compat-500-e-acute",
        format!("compatibility: {}", "é".repeat(500)),
    );
    extra(
        &mut v,
        "compat-501-e-acute",
        format!("compatibility: {}", "é".repeat(501)),
    );
    extra(
        &mut v,
        "compat-quoted-padded-501-raw-499-trimmed",
        format!("compatibility: \"  {}\"", "c".repeat(499)),
    );
    extra(
        &mut v,
        "compat-literal-500-plus-newline",
        format!("compatibility: |\n  {}", "c".repeat(500)),
    );
    v
}

/// Frontmatter texts that exercise the YAML layer (full text, no fences).
fn yaml_variants() -> Vec<(&'static str, String)> {
    let ok = "description: ok";
    let raw: &[(&str, &str)] = &[
        ("mapping-in-value", "name: my-skill\ndescription: a: b: c\n"),
        ("mapping-values-top", "a: b: c\n"),
        ("bad-indent-key", "name: my-skill\n  description: x\n"),
        (
            "bad-indent-nested",
            "name: my-skill\ndescription: x\nmetadata:\n  a: 1\n   b: 2\n",
        ),
        ("bad-indent-first-key", " name: my-skill\ndescription: x\n"),
        (
            "tab-indent",
            "name: my-skill\ndescription: x\nmetadata:\n\ta: 1\n",
        ),
        ("tab-indent-top", "name: my-skill\n\tdescription: x\n"),
        ("tab-after-colon", "name:\tmy-skill\ndescription: x\n"),
        ("tab-after-value", "name: my-skill\t\ndescription: x\n"),
        (
            "tab-inside-quotes",
            "name: my-skill\ndescription: \"a\tb\"\n",
        ),
        (
            "unclosed-double-quote",
            "name: my-skill\ndescription: \"x\n",
        ),
        ("unclosed-single-quote", "name: my-skill\ndescription: 'x\n"),
        (
            "flow-empty-map",
            "name: my-skill\ndescription: x\nmetadata: {}\n",
        ),
        (
            "flow-map",
            "name: my-skill\ndescription: x\nmetadata: {a: b}\n",
        ),
        (
            "flow-empty-list",
            "name: my-skill\ndescription: x\nallowed-tools: []\n",
        ),
        (
            "flow-list",
            "name: my-skill\ndescription: x\nallowed-tools: [Read, Write]\n",
        ),
        ("flow-name", "name: [my-skill]\ndescription: x\n"),
        ("flow-top-level", "{name: my-skill, description: x}\n"),
        (
            "flow-chars-quoted",
            "name: my-skill\ndescription: \"{not: flow}\"\n",
        ),
        ("anchor-and-alias", "name: &n my-skill\ndescription: *n\n"),
        ("anchor-only", "name: &n my-skill\ndescription: x\n"),
        ("alias-undefined", "name: my-skill\ndescription: *nope\n"),
        (
            "anchor-on-mapping",
            "name: my-skill\ndescription: x\nmetadata: &m\n  a: b\n",
        ),
        ("tag-str", "name: !!str my-skill\ndescription: x\n"),
        ("tag-custom", "name: my-skill\ndescription: !custom x\n"),
        (
            "tag-map",
            "name: my-skill\ndescription: x\nmetadata: !!map\n  a: b\n",
        ),
        ("tag-non-specific", "name: my-skill\ndescription: ! x\n"),
        (
            "duplicate-name-same",
            "name: my-skill\nname: my-skill\ndescription: x\n",
        ),
        (
            "duplicate-name-different",
            "name: my-skill\nname: other\ndescription: x\n",
        ),
        (
            "duplicate-description",
            "name: my-skill\ndescription: x\ndescription: y\n",
        ),
        (
            "duplicate-unknown",
            "name: my-skill\ndescription: x\nx: 1\nx: 2\n",
        ),
        (
            "duplicate-nested",
            "name: my-skill\ndescription: x\nmetadata:\n  a: 1\n  a: 2\n",
        ),
        (
            "duplicate-quoted",
            "name: my-skill\n\"name\": my-skill\ndescription: x\n",
        ),
        ("top-level-list", "- name: my-skill\n- description: x\n"),
        ("top-level-scalar", "just some text\n"),
        (
            "top-level-multiline-scalar",
            "name my-skill\ndescription x\n",
        ),
        ("empty", ""),
        ("blank-line", "\n"),
        ("whitespace-only", "   \n"),
        ("comment-only", "# nothing here\n"),
        ("control-char-x01", "name: my-skill\ndescription: a\u{1}b\n"),
        ("control-char-nul", "name: my-skill\ndescription: a\u{0}b\n"),
        (
            "control-char-del",
            "name: my-skill\ndescription: a\u{7f}b\n",
        ),
        ("control-char-c1", "name: my-skill\ndescription: a\u{80}b\n"),
        (
            "control-char-esc-in-comment",
            "name: my-skill # \u{1b}\ndescription: x\n",
        ),
        (
            "control-char-vt-quoted",
            "name: my-skill\ndescription: \"a\u{b}b\"\n",
        ),
        (
            "noncharacter-fffe",
            "name: my-skill\ndescription: a\u{fffe}b\n",
        ),
        (
            "nel-inside-value",
            "name: my-skill\ndescription: a\u{85}b\n",
        ),
        (
            "bom-inside-value",
            "name: my-skill\ndescription: a\u{feff}b\n",
        ),
        (
            "bom-inside-quoted-value",
            "name: my-skill\ndescription: \"a\u{feff}b\"\n",
        ),
        ("tab-inside-plain", "name: my-skill\ndescription: a\tb\n"),
        ("tab-only-line", "name: my-skill\n\t\ndescription: x\n"),
        (
            "tab-before-comment",
            "name: my-skill\t# c\ndescription: x\n",
        ),
        ("tab-after-quoted", "name: \"my-skill\"\t\ndescription: x\n"),
        (
            "tab-in-block-scalar",
            "name: my-skill\ndescription: |\n  a\tb\t\n",
        ),
        (
            "merge-key-mapping",
            "name: my-skill\ndescription: x\n<<:\n  license: MIT\n",
        ),
        ("nbsp-after-colon", "name:\u{a0}my-skill\ndescription: x\n"),
        ("key-without-value", "name: my-skill\ndescription\n"),
        ("reversed-order", "description: x\nname: my-skill\n"),
        (
            "indented-consistently",
            "  name: my-skill\n  description: x\n",
        ),
        (
            "yaml-directive",
            "%YAML 1.2\nname: my-skill\ndescription: x\n",
        ),
        (
            "leading-comment",
            "# comment\nname: my-skill\ndescription: x\n",
        ),
        (
            "document-end-first",
            "...\nname: my-skill\ndescription: x\n",
        ),
        (
            "ellipsis-then-more",
            "name: my-skill\ndescription: x\n...\nlicense: MIT\n",
        ),
    ];
    let mut v: Vec<(&'static str, String)> = raw
        .iter()
        .map(|(label, text)| (*label, (*text).to_owned()))
        .collect();
    v.push((
        "deep-nesting-20",
        format!(
            "name: my-skill\n{ok}\nmetadata:\n{}",
            (1..=20)
                .map(|depth| format!("{}k{depth}:\n", "  ".repeat(depth)))
                .collect::<String>()
                + &format!("{}leaf: x\n", "  ".repeat(21))
        ),
    ));
    v
}

/// Lower-case ASCII slug of a label, for use in case ids.
fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').chars().take(120).collect()
}

/// Joins frontmatter lines, each followed by a newline.
fn fm(lines: &[&str]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

#[derive(Debug, Default)]
struct Generator {
    cases: Vec<Case>,
}

impl Generator {
    fn push(&mut self, group: &str, label: &str, dir: &str, entries: Vec<(String, Entry)>) {
        let id = format!("{group}-{:03}-{}", self.cases.len(), slug(label));
        self.cases.push(Case {
            id,
            dir_name: dir.to_owned(),
            entries,
        });
    }

    fn push_bytes(&mut self, group: &str, label: &str, dir: &str, file: &str, bytes: Vec<u8>) {
        self.push(
            group,
            label,
            dir,
            vec![(file.to_owned(), Entry::File(bytes))],
        );
    }

    fn push_doc(&mut self, group: &str, label: &str, dir: &str, frontmatter: &str, env: Envelope) {
        let (file, bytes) = env.wrap(frontmatter);
        let label = format!("{label}-{}", env.suffix());
        self.push_bytes(group, &label, dir, file, bytes);
    }
}

/// The full, fixed list of cases.
pub(crate) fn generate() -> Vec<Case> {
    let names = name_variants();
    let descs = description_variants();
    let extras = extra_variants();
    let mut g = Generator::default();
    let name_line = format!("name: {VALID_NAME}");
    let desc_line = format!("description:{VALID_DESCRIPTION}");

    // Names, each with a matching and (where possible) a mismatching directory.
    for n in &names {
        for (i, dir) in n.dirs.iter().enumerate() {
            let doc = fm(&[&format!("name:{}", n.frag), &desc_line]);
            let label = format!("{}-dir{i}", n.label);
            g.push_doc("name", &label, dir, &doc, Envelope::Lf);
        }
    }

    // Descriptions, LF and CRLF.
    for d in &descs {
        for env in [Envelope::Lf, Envelope::Crlf] {
            let doc = fm(&[&name_line, &format!("description:{}", d.frag)]);
            g.push_doc("desc", &d.label, VALID_NAME, &doc, env);
        }
    }

    // Optional and unknown fields, LF and CRLF.
    for e in &extras {
        for env in [Envelope::Lf, Envelope::Crlf] {
            let doc = fm(&[&name_line, &desc_line, &e.lines]);
            g.push_doc("field", &e.label, VALID_NAME, &doc, env);
        }
    }

    // Missing required fields.
    let missing: &[(&str, String)] = &[
        ("missing-name", fm(&[&desc_line])),
        ("missing-description", fm(&[&name_line])),
        ("missing-both", fm(&["license: MIT"])),
        ("missing-both-unknown-only", fm(&["author: me"])),
        ("missing-name-bad-description", fm(&["description:"])),
        ("missing-description-bad-name", fm(&["name: Bad_Name"])),
    ];
    for (label, doc) in missing {
        for env in [Envelope::Lf, Envelope::Crlf] {
            g.push_doc("missing", label, VALID_NAME, doc, env);
        }
    }

    // The YAML layer.
    for (label, doc) in yaml_variants() {
        for env in [Envelope::Lf, Envelope::Crlf] {
            g.push_doc("yaml", label, VALID_NAME, &doc, env);
        }
    }

    // Every envelope around a valid and an invalid frontmatter.
    let valid_doc = fm(&[&name_line, &desc_line]);
    let invalid_doc = fm(&["name: Bad--Name", "description:", "extra: 1"]);
    for env in Envelope::ALL {
        g.push_doc("envelope", "valid", VALID_NAME, &valid_doc, env);
        g.push_doc("envelope", "invalid", VALID_NAME, &invalid_doc, env);
    }

    file_level_cases(&mut g, &valid_doc);
    combinations(&mut g, &names, &descs, &extras);
    g.cases
}

/// Cases about the file itself rather than its frontmatter.
fn file_level_cases(g: &mut Generator, valid_doc: &str) {
    let valid = format!("---\n{valid_doc}---\n{BODY}");
    let invalid = format!("---\nname: Bad_Name\n{}---\n{BODY}", "description: x\n");
    let unclosed = format!("---\n{valid_doc}\n# Body\n\nNo closing fence here.\n");
    let texts: Vec<(&str, String)> = vec![
        (
            "no-frontmatter",
            "# Just markdown\n\nNo frontmatter.\n".to_owned(),
        ),
        ("empty-file", String::new()),
        ("only-newline", "\n".to_owned()),
        ("leading-blank-line", format!("\n{valid}")),
        ("leading-space", format!(" {valid}")),
        ("only-opening-fence", "---\n".to_owned()),
        ("only-opening-fence-no-newline", "---".to_owned()),
        ("empty-frontmatter", "---\n---\n".to_owned()),
        ("empty-frontmatter-no-newline", "---\n---".to_owned()),
        ("empty-frontmatter-with-body", format!("---\n---\n{BODY}")),
        ("unclosed", format!("---\n{valid_doc}")),
        ("unclosed-with-body", unclosed.clone()),
        (
            "unclosed-dashes-later",
            format!("{unclosed}\nfoo --- bar\n"),
        ),
        (
            "closing-four-dashes",
            format!("---\n{valid_doc}----\n{BODY}"),
        ),
        ("closing-indented", format!("---\n{valid_doc}  ---\n{BODY}")),
        (
            "closing-with-text",
            format!("---\n{valid_doc}--- x\n{BODY}"),
        ),
        (
            "opening-trailing-space",
            format!("--- \n{valid_doc}---\n{BODY}"),
        ),
        (
            "opening-trailing-tab",
            format!("---\t\n{valid_doc}---\n{BODY}"),
        ),
        (
            "opening-four-dashes",
            format!("----\n{valid_doc}---\n{BODY}"),
        ),
        (
            "opening-with-text",
            format!("---name: x\n{valid_doc}---\n{BODY}"),
        ),
        ("bom-no-frontmatter", "\u{feff}# Title\n".to_owned()),
        ("bom-invalid", format!("\u{feff}{invalid}")),
        (
            "hr-right-after-closing",
            format!("---\n{valid_doc}---\n---\n{BODY}"),
        ),
        (
            "body-yaml-like",
            format!("---\n{valid_doc}---\nname: Other\nfoo: [1, 2]\n"),
        ),
        (
            "body-with-dashes-invalid",
            format!("{invalid}\n---\n\nmore\n"),
        ),
        (
            "control-chars-in-body",
            format!("{valid}\u{1}\u{7f}\u{80}\u{fffe}\t\n"),
        ),
        ("crlf-invalid", invalid.replace('\n', "\r\n")),
        ("cr-invalid", invalid.replace('\n', "\r")),
        (
            "crlf-frontmatter-lf-closing",
            format!("---\r\n{}---\n{BODY}", valid_doc.replace('\n', "\r\n")),
        ),
        (
            "closing-crlf-trailing-ws",
            format!("---\r\n{}--- \r\n{BODY}", valid_doc.replace('\n', "\r\n")),
        ),
    ];
    for (label, text) in texts {
        g.push_bytes("file", label, VALID_NAME, "SKILL.md", text.into_bytes());
    }

    let non_utf8: &[(&str, &[u8])] = &[
        (
            "non-utf8-in-frontmatter",
            b"---\nname: my-skill\ndescription: caf\xe9\n---\n",
        ),
        (
            "non-utf8-in-body",
            b"---\nname: my-skill\ndescription: x\n---\nbody \xfe\xff\n",
        ),
        (
            "non-utf8-truncated-sequence",
            b"---\nname: my-skill\ndescription: x\n---\n\xc3",
        ),
        (
            "non-utf8-overlong",
            b"---\nname: my-skill\ndescription: \xc0\xaf\n---\n",
        ),
        (
            "non-utf8-surrogate",
            b"---\nname: my-skill\ndescription: \xed\xa0\x80\n---\n",
        ),
        (
            "non-utf8-in-name",
            b"---\nname: my-sk\xffill\ndescription: x\n---\n",
        ),
        ("non-utf8-no-frontmatter", b"\xff\xfe# Title\n"),
    ];
    for (label, bytes) in non_utf8 {
        g.push_bytes("file", label, VALID_NAME, "SKILL.md", bytes.to_vec());
    }

    let file = |bytes: &str| Entry::File(bytes.as_bytes().to_vec());
    let layouts: Vec<(&str, Vec<(String, Entry)>)> = vec![
        ("no-skill-md-empty-dir", vec![]),
        (
            "no-skill-md-with-readme",
            vec![("README.md".to_owned(), file(&valid))],
        ),
        (
            "skill-md-is-directory",
            vec![("SKILL.md".to_owned(), Entry::Dir)],
        ),
        (
            "skill-md-is-directory-lowercase-file",
            vec![
                ("SKILL.md".to_owned(), Entry::Dir),
                ("skill.md".to_owned(), file(&valid)),
            ],
        ),
        (
            "lowercase-skill-md-is-directory",
            vec![("skill.md".to_owned(), Entry::Dir)],
        ),
        (
            "lowercase-valid",
            vec![("skill.md".to_owned(), file(&valid))],
        ),
        (
            "lowercase-invalid",
            vec![("skill.md".to_owned(), file(&invalid))],
        ),
        (
            "both-upper-valid-lower-invalid",
            vec![
                ("SKILL.md".to_owned(), file(&valid)),
                ("skill.md".to_owned(), file(&invalid)),
            ],
        ),
        (
            "both-upper-invalid-lower-valid",
            vec![
                ("SKILL.md".to_owned(), file(&invalid)),
                ("skill.md".to_owned(), file(&valid)),
            ],
        ),
        (
            "both-upper-empty-lower-valid",
            vec![
                ("SKILL.md".to_owned(), file("")),
                ("skill.md".to_owned(), file(&valid)),
            ],
        ),
        (
            "mixed-case-file-name",
            vec![("Skill.md".to_owned(), file(&valid))],
        ),
        (
            "upper-extension",
            vec![("SKILL.MD".to_owned(), file(&valid))],
        ),
        (
            "valid-with-extra-files",
            vec![
                ("SKILL.md".to_owned(), file(&valid)),
                ("scripts".to_owned(), Entry::Dir),
                ("README.md".to_owned(), file("# readme\n")),
            ],
        ),
    ];
    for (label, entries) in layouts {
        g.push("layout", label, VALID_NAME, entries);
    }
}

/// Deterministic mixes of names, descriptions, extra fields and envelopes.
fn combinations(
    g: &mut Generator,
    names: &[NameVariant],
    descs: &[DescVariant],
    extras: &[ExtraVariant],
) {
    let mut rng = Lcg::new(0x5eed_2025_0a11_5c11);
    for _ in 0..COMBOS {
        let name = &names[rng.below(names.len())];
        let dir = &name.dirs[rng.below(name.dirs.len())];
        let description = &descs[rng.below(descs.len())];
        let keep_name = rng.below(10) != 0;
        let keep_description = rng.below(10) != 0;
        let mut chosen: Vec<&ExtraVariant> = Vec::new();
        for _ in 0..rng.below(3) {
            let candidate = &extras[rng.below(extras.len())];
            if chosen.iter().all(|c| c.key() != candidate.key()) {
                chosen.push(candidate);
            }
        }
        let description_first = rng.below(4) == 0;
        let env = Envelope::COMBO[rng.below(Envelope::COMBO.len())];

        let name_line = format!("name:{}", name.frag);
        let desc_line = format!("description:{}", description.frag);
        let mut lines: Vec<&str> = Vec::new();
        let mut label = String::new();
        if keep_name {
            lines.push(&name_line);
            label.push_str(&name.label);
        } else {
            label.push_str("no-name");
        }
        if keep_description {
            let at = if description_first { 0 } else { lines.len() };
            lines.insert(at, &desc_line);
            label.push('-');
            label.push_str(&description.label);
        } else {
            label.push_str("-no-description");
        }
        for e in &chosen {
            lines.push(&e.lines);
            label.push('-');
            label.push_str(&e.label);
        }
        g.push_doc("combo", &label, dir, &fm(&lines), env);
    }
}
