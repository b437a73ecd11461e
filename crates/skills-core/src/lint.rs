//! Lint: advice for skill authors beyond validity (F-FMT-6).
//!
//! [`lint_skill`] is pure: it takes a parsed [`SkillDocument`] and facts about the
//! files of the skill ([`ResourceFact`]: path, size, execute bit, first line, the
//! paths a Markdown file names) and returns warnings, each with a `lint-*` code
//! and a fix. A file-system provider gathers the facts (`skills-fs` does, in its
//! `lint` module); an in-code or wasm provider can build them by hand.
//!
//! Every rule is a heuristic tuned to stay quiet on good skills: URLs, anchors,
//! absolute paths, `../` paths, abbreviations such as `e.g.` and everything inside
//! fenced code blocks are never taken for file names. The rules are listed in
//! `docs/skill-format.md` ("Lint").

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::estimate_tokens;
use crate::diagnostic::{Code, Diagnostic};
use crate::validate::SkillDocument;

/// The longest body, in lines, before [`Code::LintBodyTooLong`].
pub const MAX_BODY_LINES: usize = 500;
/// The largest body, in estimated tokens, before [`Code::LintBodyTooLong`].
pub const MAX_BODY_TOKENS: usize = 5_000;

/// Folders whose files the body may name by a path with a folder (`scripts/x.py`);
/// any top-level folder the skill has counts too.
const RESOURCE_DIRS: &[&str] = &["assets", "references", "scripts"];

/// File extensions that make a word a file name (lowercase).
const FILE_EXTENSIONS: &[&str] = &[
    "bash", "bat", "c", "cfg", "cjs", "conf", "cpp", "css", "csv", "docx", "gif", "go", "h",
    "html", "ini", "ipynb", "j2", "java", "jinja", "jpeg", "jpg", "js", "json", "jsonl", "md",
    "markdown", "mjs", "pdf", "pl", "png", "pptx", "ps1", "py", "r", "rb", "rs", "sh", "sql",
    "svg", "tex", "tmpl", "toml", "ts", "tsv", "ttf", "txt", "xlsx", "xml", "xsd", "yaml", "yml",
    "zip", "zsh",
];

/// Script extensions that need a `#!` line to run directly (no extension counts
/// too).
const SHEBANG_EXTENSIONS: &[&str] = &["bash", "pl", "py", "rb", "sh", "zsh"];

/// Extensions of documents an agent is told to read (`read FORMS.md`); other bare
/// names after a read verb (`see package.json`) are usually the user's files.
const DOCUMENT_EXTENSIONS: &[&str] = &["markdown", "md", "txt"];

/// Words after which a bare file name (`see FORMS.md`) is a reference the agent is
/// told to open, so a missing file is reported.
const READ_VERBS: &[&str] = &["consult", "load", "open", "read", "see"];

/// What lint needs to know about one file of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ResourceFact {
    /// The path relative to the skill folder, `/`-separated (e.g. `scripts/run.py`).
    pub path: String,
    /// The size in bytes.
    pub size: u64,
    /// Whether the file has an execute bit (always `true` where there are none).
    pub is_executable: bool,
    /// The first line (for scripts; a few bytes are enough), without the newline.
    pub first_line: Option<String>,
    /// For Markdown files: the paths the file names, as [`mentioned_paths`] finds
    /// them (used for the nested-reference rule).
    pub links: Vec<String>,
}

impl ResourceFact {
    /// A fact with a path and a size; not executable, no first line, no links.
    pub fn new(path: impl Into<String>, size: u64) -> Self {
        Self {
            path: path.into(),
            size,
            ..Self::default()
        }
    }

    /// Sets the execute bit.
    #[must_use]
    pub fn with_executable(mut self, is_executable: bool) -> Self {
        self.is_executable = is_executable;
        self
    }

    /// Sets the first line.
    #[must_use]
    pub fn with_first_line(mut self, line: impl Into<String>) -> Self {
        self.first_line = Some(line.into());
        self
    }

    /// Sets the paths the file names.
    #[must_use]
    pub fn with_links(mut self, links: Vec<String>) -> Self {
        self.links = links;
        self
    }
}

/// How a file name was written in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The target of a Markdown link or image.
    Link,
    /// A path with a folder (`scripts/x.py`), in backticks or prose.
    Path,
    /// A bare file name after a read verb (`see FORMS.md`).
    Told,
    /// Any other bare file name: only checked for a letter-case mismatch.
    Bare,
}

/// A file name found in Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mention {
    /// The path as written, cleaned (no `./`, anchor or query).
    path: String,
    kind: Kind,
    /// 0-based line within the text.
    line: usize,
}

/// The relative paths a Markdown text names: link targets, backticked paths and
/// file names in prose (outside fenced code blocks), cleaned of `./`, anchors and
/// queries; URLs, absolute paths and `../` paths are left out. In text order,
/// without duplicates.
pub fn mentioned_paths(markdown: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    mentions(markdown)
        .into_iter()
        .filter(|m| seen.insert(m.path.clone()))
        .map(|m| m.path)
        .collect()
}

/// Lints one skill: its parsed document and the facts about its files.
///
/// Returns warnings only. A diagnostic about `SKILL.md` has no file and a line in
/// `SKILL.md`; one about another file (a script, a reference) has that file's
/// relative path as its file. The caller turns them into real paths.
pub fn lint_skill(document: &SkillDocument, resources: &[ResourceFact]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let files = Files::new(resources);
    let body_line = document.body_line.max(1);
    let at = |line: usize| body_line.saturating_add(u32::try_from(line).unwrap_or(u32::MAX));

    // Files the body names.
    let mut reported = BTreeSet::new();
    let mut level_one = BTreeSet::new();
    for m in mentions(&document.body) {
        if m.path == "SKILL.md" {
            continue;
        }
        if files.exists(&m.path) {
            level_one.insert(m.path.clone());
            continue;
        }
        if !reported.insert(m.path.clone()) {
            continue;
        }
        if let Some(actual) = files.case_insensitive(&m.path) {
            level_one.insert(actual.to_owned());
            out.push(
                Diagnostic::warning(
                    Code::LintFileCase,
                    format!(
                        "the body names `{}` but the file is `{actual}`: did you mean `{actual}`? (on a case-sensitive file system the name does not match)",
                        m.path
                    ),
                )
                .at_line(at(m.line)),
            );
            continue;
        }
        let checked = match m.kind {
            Kind::Link | Kind::Told => true,
            Kind::Path => files.is_resource_path(&m.path),
            Kind::Bare => false,
        };
        if checked {
            out.push(
                Diagnostic::warning(
                    Code::LintMissingFile,
                    format!(
                        "the body names `{}`, which is not in the skill: add the file or fix the path",
                        m.path
                    ),
                )
                .at_line(at(m.line)),
            );
        }
    }

    // References one level deep.
    let mut nested: BTreeMap<String, String> = BTreeMap::new();
    for parent in &level_one {
        let Some(fact) = files.get(parent) else {
            continue;
        };
        for link in &fact.links {
            let Some(target) = files.resolve_from(parent, link) else {
                continue;
            };
            if target == *parent || target == "SKILL.md" || level_one.contains(&target) {
                continue;
            }
            nested.entry(target).or_insert_with(|| parent.clone());
        }
    }
    for (target, parent) in nested {
        out.push(
            Diagnostic::warning(
                Code::LintNestedReference,
                format!(
                    "`{target}` is reached only through `{parent}`; agents may read nested references only partly: link `{target}` from SKILL.md directly"
                ),
            )
            .in_file(parent),
        );
    }

    // Body size.
    let lines = document.body.lines().count();
    let tokens = estimate_tokens(&document.body);
    if lines > MAX_BODY_LINES || tokens > MAX_BODY_TOKENS {
        out.push(
            Diagnostic::warning(
                Code::LintBodyTooLong,
                format!(
                    "the body is {lines} lines (about {tokens} tokens); keep it under {MAX_BODY_LINES} lines and about {MAX_BODY_TOKENS} tokens: move details into files under references/ and link them"
                ),
            )
            .at_line(body_line),
        );
    }

    // When to use.
    let meta = &document.metadata;
    if meta.extensions.when_to_use.is_none() && !says_when(&meta.description) {
        out.push(
            Diagnostic::warning(
                Code::LintDescriptionNoTrigger,
                "the description does not say when to use the skill: add a sentence such as `Use when the user asks to ...`",
            )
            .at_line(description_line(meta)),
        );
    }

    // A description that narrates the steps.
    if let Some(marker) = narrates_workflow(&meta.description) {
        out.push(
            Diagnostic::warning(
                Code::LintDescriptionWorkflow,
                format!(
                    "the description narrates the workflow (`{marker}`): say what the skill is for and when to use it, and keep the steps in the body; a model that reads steps in the description may follow them without loading the skill"
                ),
            )
            .at_line(description_line(meta)),
        );
    }

    // Scripts.
    for fact in resources {
        if !is_script(&fact.path) || fact.size == 0 {
            continue;
        }
        let has_shebang = fact
            .first_line
            .as_deref()
            .is_some_and(|l| l.starts_with("#!"));
        if !has_shebang {
            out.push(
                Diagnostic::warning(
                    Code::LintScriptNoShebang,
                    format!(
                        "`{}` has no `#!` line, so it cannot run directly: start it with e.g. `#!/usr/bin/env {}` and make it executable (`chmod +x`)",
                        fact.path,
                        interpreter(&fact.path)
                    ),
                )
                .in_file(fact.path.clone())
                .at_line(1),
            );
        } else if !fact.is_executable {
            out.push(
                Diagnostic::warning(
                    Code::LintScriptNotExecutable,
                    format!(
                        "`{}` has a `#!` line but is not executable: run `chmod +x {}`",
                        fact.path, fact.path
                    ),
                )
                .in_file(fact.path.clone()),
            );
        }
    }
    out
}

/// The documented "says when" heuristic: the description has one of the words
/// `when`, `whenever`, `if` or `upon`, or a phrase `use for`, `use to`, `use this`,
/// `use it`, `use on`, `use with`, `use in`, `use as`, `use after`, `use before`,
/// `use during` (or `used ...`), or a word starting with `invoke` or `trigger`
/// (case-insensitive).
pub fn says_when(description: &str) -> bool {
    let lower = description.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words
        .iter()
        .any(|w| matches!(*w, "when" | "whenever" | "if" | "upon"))
    {
        return true;
    }
    if words
        .iter()
        .any(|w| w.starts_with("invoke") || w.starts_with("trigger"))
    {
        return true;
    }
    words.windows(2).any(|pair| {
        matches!(pair[0], "use" | "used")
            && matches!(
                pair[1],
                "after"
                    | "as"
                    | "before"
                    | "during"
                    | "for"
                    | "in"
                    | "it"
                    | "on"
                    | "this"
                    | "to"
                    | "with"
            )
    })
}

/// The line of `SKILL.md` with the `description:` field (1 when not found).
fn description_line(meta: &crate::metadata::SkillMetadata) -> u32 {
    let line = meta
        .raw_frontmatter
        .lines()
        .position(|l| l.starts_with("description:"))
        .map_or(1, |i| i + 2);
    u32::try_from(line).unwrap_or(1)
}

/// Words that chain steps (`…, then …`); a description with two of them, or
/// `first` and one of them, narrates a workflow.
const SEQUENCE_WORDS: &[&str] = &["afterwards", "finally", "subsequently", "then"];

/// Two-word phrases that chain steps.
const SEQUENCE_PHRASES: &[(&str, &str)] = &[("after", "that"), ("followed", "by")];

/// Arrows that chain steps (`collect → analyse → report`) when two of them are
/// in one sentence; a single arrow (`csv → json`, `not for X → use Y`) is not a
/// workflow.
const ARROWS: &[&str] = &["->", "=>", "→", "⇒"];

/// The documented "narrates the workflow" heuristic: the description has two
/// sequence words (`then`, `finally`, `afterwards`, `subsequently`, `after
/// that`, `followed by`), or `first` before one of them, or a sentence (or list
/// item) with two arrows. Returns the words or arrows found, for the message.
///
/// A single `then` (`if the file is large, then split it`) is not a workflow,
/// and neither is a list of what the skill can do; hyphenated words
/// (`architecture-first`) are one word.
pub fn narrates_workflow(description: &str) -> Option<String> {
    let lower = description.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .collect();
    let mut found: Vec<String> = Vec::new();
    let mut first_before = false;
    for (i, word) in words.iter().enumerate() {
        if SEQUENCE_WORDS.contains(word) {
            found.push((*word).to_owned());
        } else if let Some(next) = words.get(i + 1)
            && SEQUENCE_PHRASES.contains(&(*word, *next))
        {
            found.push(format!("{word} {next}"));
        } else if *word == "first" && found.is_empty() {
            first_before = true;
        }
    }
    // `first …, then …` chains; `then do it first` does not.
    if first_before && !found.is_empty() {
        found.insert(0, "first".to_owned());
    }
    if found.len() >= 2 {
        found.truncate(3);
        return Some(found.join("`, `"));
    }
    // Sentences and list items: split on sentence ends, new lines and ` - `.
    let chained = lower
        .split(['\n', '.', ';', '。', '；', '!', '?'])
        .flat_map(|sentence| sentence.split(" - "))
        .any(|part| {
            ARROWS
                .iter()
                .map(|a| part.matches(a).count())
                .sum::<usize>()
                >= 2
        });
    chained.then(|| "→".to_owned())
}

fn is_script(path: &str) -> bool {
    let Some(name) = path.strip_prefix("scripts/") else {
        return false;
    };
    if name.contains('/') || name.starts_with('.') || name == "__init__.py" {
        return false;
    }
    match name.rsplit_once('.') {
        None => true,
        Some((_, ext)) => SHEBANG_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()),
    }
}

fn interpreter(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, e)| e) {
        Some("py") => "python3",
        Some("rb") => "ruby",
        Some("pl") => "perl",
        Some("zsh") => "zsh",
        _ => "bash",
    }
}

/// The files of a skill, for lookups.
struct Files<'a> {
    by_path: BTreeMap<&'a str, &'a ResourceFact>,
    top_dirs: BTreeSet<&'a str>,
}

impl<'a> Files<'a> {
    fn new(resources: &'a [ResourceFact]) -> Self {
        let by_path = resources.iter().map(|f| (f.path.as_str(), f)).collect();
        let top_dirs = resources
            .iter()
            .filter_map(|f| f.path.split_once('/').map(|(d, _)| d))
            .collect();
        Self { by_path, top_dirs }
    }

    fn get(&self, path: &str) -> Option<&'a ResourceFact> {
        self.by_path.get(path).copied()
    }

    /// A file, or a folder holding files.
    fn exists(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        if path.is_empty() || self.by_path.contains_key(path) {
            return true;
        }
        let prefix = format!("{path}/");
        self.by_path
            .range(prefix.as_str()..)
            .next()
            .is_some_and(|(p, _)| p.starts_with(&prefix))
    }

    /// The one file (or folder) whose path equals `path` up to letter case.
    fn case_insensitive(&self, path: &str) -> Option<&'a str> {
        let path = path.trim_end_matches('/');
        for p in self.by_path.keys() {
            if p.eq_ignore_ascii_case(path) {
                return Some(p);
            }
            if let Some(dir) = p.get(..path.len())
                && dir.eq_ignore_ascii_case(path)
                && p.as_bytes().get(path.len()) == Some(&b'/')
            {
                return Some(dir);
            }
        }
        None
    }

    /// A path with a resource folder as its first part.
    fn is_resource_path(&self, path: &str) -> bool {
        let first = path.split('/').next().unwrap_or_default();
        RESOURCE_DIRS.contains(&first) || self.top_dirs.contains(first)
    }

    /// `link`, named in the file `from`, as an existing file: relative to the
    /// folder of `from` first, then to the skill folder.
    fn resolve_from(&self, from: &str, link: &str) -> Option<String> {
        let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
        let mut candidates = Vec::with_capacity(2);
        if !dir.is_empty() {
            candidates.push(join(dir, link)?);
        }
        candidates.push(link.to_owned());
        candidates
            .into_iter()
            .find(|c| self.by_path.contains_key(c.as_str()))
    }
}

/// `dir/link` with `.` and `..` parts resolved; `None` when it leaves the skill.
fn join(dir: &str, link: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in link.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// Every file name in `markdown`, outside fenced code blocks.
fn mentions(markdown: &str) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        if let Some(c) = marker {
            let run = trimmed.chars().take_while(|x| *x == c).count();
            if run >= 3 {
                match fence {
                    None => fence = Some((c, run)),
                    Some((open, len)) if open == c && run >= len => fence = None,
                    Some(_) => {}
                }
                continue;
            }
        }
        if fence.is_some() {
            continue;
        }
        scan_line(line, i, &mut out);
    }
    out
}

/// Finds links, code spans and prose file names in one line.
fn scan_line(line: &str, index: usize, out: &mut Vec<Mention>) {
    // Reference-style link definitions: `[id]: target`.
    let t = line.trim_start();
    if t.starts_with('[')
        && let Some(end) = t.find("]:")
    {
        if let Some(path) = clean_link(t[end + 2..].trim()) {
            out.push(Mention {
                path,
                kind: Kind::Link,
                line: index,
            });
        }
        return;
    }
    let mut prose = String::with_capacity(line.len());
    let mut rest = line;
    let mut prev_word = String::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("](") {
            // The target of a link whose text has been scanned as prose.
            let (target, tail) = split_target(after);
            if let Some(path) = clean_link(target) {
                out.push(Mention {
                    path,
                    kind: Kind::Link,
                    line: index,
                });
            }
            prose.push(' ');
            rest = tail;
            continue;
        }
        if rest.starts_with('`') {
            let ticks = rest.chars().take_while(|c| *c == '`').count();
            let fence = &rest[..ticks];
            let after = &rest[ticks..];
            if let Some(end) = after.find(fence) {
                scan_words(&prose, index, &mut prev_word, out);
                prose.clear();
                let span = after[..end].trim();
                if let Some(path) = clean_word(span) {
                    out.push(Mention {
                        kind: classify(&path, &prev_word),
                        path,
                        line: index,
                    });
                }
                prev_word.clear();
                rest = &after[end + ticks..];
                continue;
            }
            prose.push_str(fence);
            rest = after;
            continue;
        }
        let Some(c) = rest.chars().next() else {
            break;
        };
        prose.push(c);
        rest = &rest[c.len_utf8()..];
    }
    scan_words(&prose, index, &mut prev_word, out);
}

/// Splits a link's `target)` from the rest of the line (balanced parentheses).
fn split_target(text: &str) -> (&str, &str) {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return (&text[..i], &text[i + 1..]),
            ')' => depth -= 1,
            _ => {}
        }
    }
    (text, "")
}

fn scan_words(prose: &str, index: usize, prev_word: &mut String, out: &mut Vec<Mention>) {
    for raw in prose.split_whitespace() {
        let word = raw.trim_matches(|c: char| "()[]{}<>,;:!?\"'*_|".contains(c));
        let word = word.trim_end_matches('.');
        // A file name has an extension: most words are skipped on one `memchr`.
        if word.contains('.')
            && let Some(path) = clean_word(word)
        {
            out.push(Mention {
                kind: classify(&path, prev_word),
                path,
                line: index,
            });
        }
        // Reused buffer, no allocation per word; compared without regard to
        // ASCII case in `classify`.
        prev_word.clear();
        prev_word.push_str(raw.trim_matches(|c: char| !c.is_alphanumeric()));
    }
}

fn classify(path: &str, prev_word: &str) -> Kind {
    let is_document = path
        .rsplit_once('.')
        .is_some_and(|(_, ext)| DOCUMENT_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()));
    if path.contains('/') {
        Kind::Path
    } else if is_document && READ_VERBS.iter().any(|v| v.eq_ignore_ascii_case(prev_word)) {
        Kind::Told
    } else {
        Kind::Bare
    }
}

/// A Markdown link target as a relative path, or `None` for URLs, anchors,
/// absolute and `../` paths.
fn clean_link(target: &str) -> Option<String> {
    let target = target.trim();
    let target = match target.strip_prefix('<') {
        Some(inner) => inner.split('>').next().unwrap_or_default(),
        // A title after the target: `(file.md "Title")`.
        None => target.split_whitespace().next().unwrap_or_default(),
    };
    let target = target.split(['#', '?']).next().unwrap_or_default();
    let target = target.replace("%20", " ");
    let target = target.strip_prefix("./").unwrap_or(&target);
    if target.is_empty()
        || target.starts_with('/')
        || target.starts_with('~')
        || target.starts_with('\\')
        || has_scheme(target)
        || target.split('/').any(|p| p == "..")
    {
        return None;
    }
    Some(target.to_owned())
}

/// `scheme:` before any `/` (`https:`, `mailto:`, `data:`, `C:`).
fn has_scheme(text: &str) -> bool {
    match text.find(':') {
        Some(i) => !text[..i].contains('/'),
        None => false,
    }
}

/// A word that looks like a relative file path (`forms.md`, `scripts/run.py`).
fn clean_word(word: &str) -> Option<String> {
    let word = word.strip_prefix("./").unwrap_or(word);
    if word.is_empty()
        || word.len() > 200
        || word.contains(char::is_whitespace)
        || word.starts_with(['/', '~', '$', '-', '#', '@', '.', '\\'])
        || word.contains(|c: char| "*?<>{}|\"'=,;()[]`\\%".contains(c))
        || has_scheme(word)
        || word.split('/').any(|p| p.is_empty() || p == "..")
    {
        return None;
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    let (stem, ext) = name.rsplit_once('.')?;
    if stem.is_empty() || stem.ends_with('.') {
        return None;
    }
    FILE_EXTENSIONS
        .contains(&ext.to_ascii_lowercase().as_str())
        .then(|| word.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_links_code_and_prose_names() {
        let text = "Read [the guide](references/guide.md#setup) and `scripts/run.py`.\nSee FORMS.md, e.g. the list.\n```bash\npython scripts/absent.py\n```\n[x]: ./assets/t.txt\n";
        assert_eq!(
            mentioned_paths(text),
            vec![
                "references/guide.md",
                "scripts/run.py",
                "FORMS.md",
                "assets/t.txt"
            ]
        );
    }

    #[test]
    fn ignores_urls_anchors_and_absolute_paths() {
        let text = "[a](https://x.org/a.md) [b](#top) [c](/etc/x.md) [d](../up.md) `~/x.md` `/tmp/y.md` mailto:a@b.md i.e. e.g. v1.2 `$HOME/z.md` [e](<file name.md>)";
        assert_eq!(mentioned_paths(text), vec!["file name.md"]);
    }

    #[test]
    fn join_stays_inside() {
        assert_eq!(
            join("references", "b.md").as_deref(),
            Some("references/b.md")
        );
        assert_eq!(join("references", "../x.md").as_deref(), Some("x.md"));
        assert_eq!(join("references", "../../x.md"), None);
    }

    #[test]
    fn when_heuristic() {
        assert!(says_when(
            "Fills PDF forms. Use when the user shares a form."
        ));
        assert!(says_when("Use this for CSV files."));
        assert!(says_when("Triggers on commit requests."));
        assert!(!says_when("Maps citation networks of academic papers."));
        assert!(!says_when("Helps users with their user settings."));
    }
}
