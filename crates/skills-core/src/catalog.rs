//! The catalog (disclosure level 1): an immutable, sorted snapshot of skill metadata
//! and its byte-stable rendering for a system prompt (F-DIS-1, F-DIS-2).
//!
//! Rendering is a pure function of (catalog, options): same skills in, same bytes
//! out, whatever order they were discovered in. That is what keeps a provider's
//! prompt cache hitting. The rendered text never mentions load state.

use std::fmt;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

use crate::metadata::SkillMetadata;

/// An immutable, name-sorted snapshot of skill metadata with a content
/// fingerprint. Cloning is cheap (one reference count).
///
/// # Serialization
///
/// A catalog serializes losslessly (so a session store can keep the catalog a
/// session pinned and a resume after a restart renders the same bytes) as
/// `{"entries": [...]}`, one object per skill with every field of
/// [`SkillMetadata`] under its Rust name, `raw_frontmatter` included, and
/// empty fields left out. Deserializing validates every name and rebuilds the
/// index and the fingerprint, so a deserialized catalog equals the original.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// One allocation shared by every clone: cloning is one reference count.
    inner: Arc<Snapshot>,
}

/// The data of a [`Catalog`].
#[derive(Debug)]
struct Snapshot {
    entries: Vec<SkillMetadata>,
    /// Each description on one line, made on the first render (a listing
    /// never needs them); `None` where the description is one line already
    /// (most are), which is then used as it is.
    one_line: OnceLock<Vec<Option<String>>>,
    /// `(hash of name, index into entries)`, sorted: a name lookup is a binary
    /// search over integers and one string comparison.
    by_hash: Vec<(u64, usize)>,
    /// Computed when first asked for (comparing catalogs, search indexes).
    fingerprint: OnceLock<u64>,
}

impl Snapshot {
    fn fingerprint(&self) -> u64 {
        *self.fingerprint.get_or_init(|| fingerprint(&self.entries))
    }

    fn one_line(&self) -> &[Option<String>] {
        self.one_line.get_or_init(|| {
            self.entries
                .iter()
                .map(|e| (!is_one_line(&e.description)).then(|| collapse(&e.description)))
                .collect()
        })
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl PartialEq for Catalog {
    fn eq(&self, other: &Self) -> bool {
        self.inner.fingerprint() == other.inner.fingerprint()
            && self.inner.entries == other.inner.entries
    }
}

impl Catalog {
    /// Sorts `entries` by name. When a name appears twice, the first one given wins
    /// (providers report such collisions as diagnostics).
    pub fn new(entries: impl IntoIterator<Item = SkillMetadata>) -> Self {
        let mut entries: Vec<SkillMetadata> = entries.into_iter().collect();
        // A stable sort keeps the first of equal names first; dedup keeps it.
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        entries.dedup_by(|later, earlier| later.name == earlier.name);
        let mut by_hash: Vec<(u64, usize)> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (name_hash(e.name.as_str()), i))
            .collect();
        by_hash.sort_unstable();
        Self {
            inner: Arc::new(Snapshot {
                entries,
                one_line: OnceLock::new(),
                by_hash,
                fingerprint: OnceLock::new(),
            }),
        }
    }

    /// `true` when `other` holds the same entries: in O(1) when both are clones
    /// of one snapshot (what providers return while nothing changed), otherwise
    /// by fingerprint, then entry by entry.
    pub fn same_entries(&self, other: &Catalog) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner) || self == other
    }

    /// The standard "no skill named …" error, listing the names in this catalog.
    pub fn not_found(&self, name: &str) -> crate::Error {
        crate::Error::skill_not_found(name, self.names().map(str::to_owned).collect())
    }

    /// The entries, sorted by name.
    pub fn entries(&self) -> &[SkillMetadata] {
        &self.inner.entries
    }

    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&SkillMetadata> {
        let hash = name_hash(name);
        let start = self.inner.by_hash.partition_point(|(h, _)| *h < hash);
        self.inner.by_hash[start..]
            .iter()
            .take_while(|(h, _)| *h == hash)
            .filter_map(|(_, i)| self.inner.entries.get(*i))
            .find(|e| e.name.as_str() == name)
    }

    /// `true` when a skill named `name` is in the catalog.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// The names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.inner.entries.iter().map(|e| e.name.as_str())
    }

    /// Number of skills.
    pub fn len(&self) -> usize {
        self.inner.entries.len()
    }

    /// `true` when there are no skills.
    pub fn is_empty(&self) -> bool {
        self.inner.entries.is_empty()
    }

    /// A 64-bit FNV-1a hash over every entry's metadata; equal catalogs have equal
    /// fingerprints, so a changed fingerprint means "something changed".
    pub fn fingerprint(&self) -> u64 {
        self.inner.fingerprint()
    }

    /// Renders the catalog for a system prompt.
    ///
    /// Only skills the options' [`VisibilityPolicy`](crate::VisibilityPolicy)
    /// lists are rendered: not `off` or `manual` ones (skills marked
    /// `disable-model-invocation` are manual: they load only on an explicit
    /// mention) nor those needing setup; `name-only` ones without their
    /// description. An empty catalog renders as the empty string.
    ///
    /// # Budget overflow
    ///
    /// When a [`Budget`] limit is set and the catalog does not fit, in order:
    /// the description cap applies to every skill but pinned ones; then skills
    /// are listed by name only, lowest priority first and, among equal
    /// priorities, the name last in byte order first, until it fits; then, in
    /// the same order, skills are left out and named in a closing note. Pinned
    /// and preloaded skills are never shortened or left out. Entries stay in
    /// name order whatever is dropped, so adding a low-priority skill never
    /// moves the others. See [`Catalog::render_report`] for what was done.
    pub fn render(&self, options: &RenderOptions) -> String {
        render(&self.inner.entries, self.inner.one_line(), options, false).text
    }

    /// [`Catalog::render`], with what the budget shortened and left out.
    pub fn render_report(&self, options: &RenderOptions) -> RenderReport {
        render(&self.inner.entries, self.inner.one_line(), options, true)
    }
}

/// One [`SkillMetadata`] in the catalog's lossless stored form.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredEntry {
    name: crate::SkillName,
    description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    license: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    compatibility: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    metadata: std::collections::BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    allowed_tools: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    declared_tools: Vec<String>,
    #[serde(default, skip_serializing_if = "crate::Extensions::is_empty")]
    extensions: crate::Extensions,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    extra: std::collections::BTreeMap<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    raw_frontmatter: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
}

impl From<&SkillMetadata> for StoredEntry {
    fn from(m: &SkillMetadata) -> Self {
        Self {
            name: m.name.clone(),
            description: m.description.clone(),
            title: m.title.clone(),
            license: m.license.clone(),
            compatibility: m.compatibility.clone(),
            metadata: m.metadata.clone(),
            allowed_tools: m.allowed_tools.clone(),
            declared_tools: m.declared_tools.clone(),
            extensions: m.extensions.clone(),
            extra: m.extra.clone(),
            raw_frontmatter: m.raw_frontmatter.clone(),
            path: m.path.clone(),
        }
    }
}

impl From<StoredEntry> for SkillMetadata {
    fn from(e: StoredEntry) -> Self {
        let mut m = SkillMetadata::new(e.name, e.description);
        m.title = e.title;
        m.license = e.license;
        m.compatibility = e.compatibility;
        m.metadata = e.metadata;
        m.allowed_tools = e.allowed_tools;
        m.declared_tools = e.declared_tools;
        m.extensions = e.extensions;
        m.extra = e.extra;
        m.raw_frontmatter = e.raw_frontmatter;
        m.path = e.path;
        m
    }
}

/// The stored form of a [`Catalog`].
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredCatalog {
    entries: Vec<StoredEntry>,
}

impl serde::Serialize for Catalog {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        StoredCatalog {
            entries: self.entries().iter().map(StoredEntry::from).collect(),
        }
        .serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Catalog {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = StoredCatalog::deserialize(deserializer)?;
        Ok(Catalog::new(
            stored.entries.into_iter().map(SkillMetadata::from),
        ))
    }
}

/// FNV-1a of a skill name, for the lookup index.
fn name_hash(name: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name.as_bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// FNV-1a over the serialized metadata. Written by hand because it is six lines
/// and needs no dependency; it is a change detector, not a security hash.
fn fingerprint(entries: &[SkillMetadata]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(PRIME);
        }
        hash ^= 0xff;
        hash = hash.wrapping_mul(PRIME);
    };
    for e in entries {
        feed(e.name.as_str().as_bytes());
        feed(e.description.as_bytes());
        feed(e.raw_frontmatter.as_bytes());
        for tool in &e.declared_tools {
            feed(tool.as_bytes());
        }
        if let Some(path) = &e.path {
            feed(path.as_bytes());
        }
    }
    hash
}

/// The output format of [`Catalog::render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CatalogFormat {
    /// `<available_skills>` with one `<skill name="…">description</skill>` line per
    /// skill (XML-escaped). The default.
    #[default]
    Xml,
    /// A Markdown list.
    Markdown,
    /// One line of JSON: `{"instructions":…,"skills":[{"name","description"}]}`, plus
    /// `"note":…` naming what a budget left out.
    Json,
}

/// A size limit for the rendered catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BudgetLimit {
    /// At most this many characters (Unicode scalar values).
    Chars(usize),
    /// At most this many tokens, as counted by [`RenderOptions::token_counter`]
    /// (a [`TokenCounter`]).
    Tokens(usize),
}

/// How much of the catalog may be rendered (F-DIS-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Budget {
    /// Total size limit; `None` = unlimited.
    pub limit: Option<BudgetLimit>,
    /// Longest description shown per skill, in characters (cut with `…`).
    pub description_cap: Option<usize>,
}

impl Budget {
    /// No limit.
    pub fn unlimited() -> Self {
        Self::default()
    }

    /// A budget with an optional size limit and an optional description cap.
    pub fn new(limit: Option<BudgetLimit>, description_cap: Option<usize>) -> Self {
        Self {
            limit,
            description_cap,
        }
    }

    /// A character limit.
    pub fn chars(max: usize) -> Self {
        Self {
            limit: Some(BudgetLimit::Chars(max)),
            description_cap: None,
        }
    }

    /// A token limit.
    pub fn tokens(max: usize) -> Self {
        Self {
            limit: Some(BudgetLimit::Tokens(max)),
            description_cap: None,
        }
    }

    /// A share of a context window, e.g. `percent_of_window(200_000, 2)` = 4 000 tokens.
    pub fn percent_of_window(window_tokens: usize, percent: usize) -> Self {
        Self::tokens(window_tokens.saturating_mul(percent) / 100)
    }

    /// Sets the per-entry description cap.
    #[must_use]
    pub fn with_description_cap(mut self, chars: usize) -> Self {
        self.description_cap = Some(chars);
        self
    }
}

/// A rough token estimate: one token per four characters, rounded up. Good
/// enough for budgets; callers with a real tokenizer pass their own
/// [`TokenCounter`].
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// Counts the tokens of a text, for token budgets.
///
/// Held as `Arc<dyn TokenCounter>`, so a tokenizer built at run time (a BPE
/// loaded from a file, say) plugs in as well as the built-in
/// [`EstimateTokens`]:
///
/// ```
/// use std::sync::Arc;
/// use skills_core::{Budget, RenderOptions, TokenCounter};
///
/// /// Counts whitespace-separated words (a stand-in for a real tokenizer).
/// #[derive(Debug)]
/// struct Words;
///
/// impl TokenCounter for Words {
///     fn count(&self, text: &str) -> usize {
///         text.split_whitespace().count()
///     }
/// }
///
/// let options = RenderOptions::default()
///     .with_budget(Budget::tokens(500))
///     .with_token_counter(Arc::new(Words));
/// assert_eq!(options.token_counter.count("two words"), 2);
/// ```
pub trait TokenCounter: Send + Sync + fmt::Debug {
    /// The number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
}

/// The built-in counter: [`estimate_tokens`] (one token per four characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EstimateTokens;

impl TokenCounter for EstimateTokens {
    fn count(&self, text: &str) -> usize {
        estimate_tokens(text)
    }
}

impl<T: TokenCounter + ?Sized> TokenCounter for Arc<T> {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
}

impl<T: TokenCounter + ?Sized> TokenCounter for &T {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
}

/// Options for [`Catalog::render`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RenderOptions {
    /// Output format.
    pub format: CatalogFormat,
    /// Size limits.
    pub budget: Budget,
    /// The tool the guardrail tells the model to call (default `load_skill`).
    pub load_tool: String,
    /// Counts tokens for [`BudgetLimit::Tokens`] (default [`EstimateTokens`]).
    pub token_counter: Arc<dyn TokenCounter>,
    /// Who is listed, how, and who gives way first to the budget (default:
    /// every skill as it says itself).
    pub visibility: Arc<crate::VisibilityPolicy>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            format: CatalogFormat::Xml,
            budget: Budget::unlimited(),
            load_tool: "load_skill".to_owned(),
            token_counter: Arc::new(EstimateTokens),
            visibility: Arc::new(crate::VisibilityPolicy::default()),
        }
    }
}

impl RenderOptions {
    /// Sets the format.
    #[must_use]
    pub fn with_format(mut self, format: CatalogFormat) -> Self {
        self.format = format;
        self
    }

    /// Sets the budget.
    #[must_use]
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Sets the name of the load tool mentioned in the guardrail.
    #[must_use]
    pub fn with_load_tool(mut self, tool: impl Into<String>) -> Self {
        self.load_tool = tool.into();
        self
    }

    /// Sets the token counter.
    #[must_use]
    pub fn with_token_counter(mut self, counter: Arc<dyn TokenCounter>) -> Self {
        self.token_counter = counter;
        self
    }

    /// Sets the visibility policy (tiers, priorities, skills needing setup).
    #[must_use]
    pub fn with_visibility(mut self, policy: impl Into<Arc<crate::VisibilityPolicy>>) -> Self {
        self.visibility = policy.into();
        self
    }
}

/// Names shown at most in the "left out" note.
const MAX_NOTE_NAMES: usize = 20;

struct Shown<'a> {
    name: &'a str,
    /// `None`: listed by name only.
    description: Option<std::borrow::Cow<'a, str>>,
}

/// One listed skill and what the budget may do to it.
struct Candidate<'a> {
    shown: Shown<'a>,
    pinned: bool,
    priority: i32,
    /// The name's length in characters.
    name_chars: usize,
}

/// The length of `text` in characters, without a scan for ASCII text longer
/// than the scan costs.
fn char_len(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.chars().count()
    }
}

/// What [`Catalog::render_report`] did to fit the budget.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RenderReport {
    /// The rendered catalog (what [`Catalog::render`] returns).
    pub text: String,
    /// Skills listed by name only to fit the budget (not those whose tier is
    /// `name-only` anyway), sorted.
    pub shortened: Vec<String>,
    /// Skills left out to fit the budget (named in the catalog's note), sorted.
    pub omitted: Vec<String>,
    /// Whether the catalog is still over the budget: pinned skills alone do not
    /// fit (they are never shortened or dropped).
    pub over_budget: bool,
}

/// Renders `all` (with their one-line descriptions `lines`); `lists` fills
/// the report's name lists.
fn render<'a>(
    all: &'a [SkillMetadata],
    lines: &'a [Option<String>],
    options: &RenderOptions,
    lists: bool,
) -> RenderReport {
    let policy = &*options.visibility;
    let cap = options.budget.description_cap;
    let mut entries: Vec<Candidate<'a>> = Vec::with_capacity(all.len());
    for ((e, line), (tier, priority, needs_setup)) in
        all.iter().zip(lines).zip(policy.resolve_sorted(all))
    {
        if !tier.is_listed() || needs_setup {
            continue;
        }
        let pinned = tier.is_pinned();
        let line = line.as_deref().unwrap_or(e.description.as_str());
        let description = if tier == crate::Tier::NameOnly {
            None
        } else {
            Some(match cap {
                Some(cap) if !pinned => std::borrow::Cow::Owned(one_line(line, Some(cap))),
                _ => std::borrow::Cow::Borrowed(line),
            })
        };
        entries.push(Candidate {
            shown: Shown {
                name: e.name.as_str(),
                description,
            },
            pinned,
            priority,
            name_chars: char_len(e.name.as_str()),
        });
    }
    let mut report = RenderReport::default();
    if entries.is_empty() {
        return report;
    }
    let guardrail = guardrail(&options.load_tool);
    let format = options.format;
    let Some(limit) = options.budget.limit else {
        let mut body = String::with_capacity(entries.len() * 160);
        for (i, entry) in entries.iter().enumerate() {
            push_entry(&mut body, format, &entry.shown, i == 0);
        }
        report.text = assemble(format, &guardrail, &body, Omitted::default());
        return report;
    };
    let chars = matches!(limit, BudgetLimit::Chars(_));
    let cost = |text: &str| match limit {
        BudgetLimit::Chars(_) => char_len(text),
        BudgetLimit::Tokens(_) => options.token_counter.count(text),
    };
    let max = match limit {
        BudgetLimit::Chars(n) | BudgetLimit::Tokens(n) => n,
    };
    // One entry line. `first: false` gives every JSON entry a leading comma;
    // the first one drops it when joined, so a JSON catalog is one character
    // cheaper than the sum.
    let line = |shown: &Shown<'_>| {
        let mut line = String::new();
        push_entry(&mut line, format, shown, false);
        line
    };
    let join = |lines: &mut dyn Iterator<Item = &str>, omitted: Omitted<'_>| {
        let mut body = String::with_capacity(entries.len() * 48);
        for (i, line) in lines.enumerate() {
            if i == 0 && format == CatalogFormat::Json {
                body.push_str(line.strip_prefix(',').unwrap_or(line));
            } else {
                body.push_str(line);
            }
        }
        assemble(format, &guardrail, &body, omitted)
    };
    let frame = cost(&assemble(format, &guardrail, "", Omitted::default()));
    // What every entry costs listed by name only (pinned ones as they are):
    // the floor before anything is left out. Names never need escaping, so
    // for characters a name-only line costs a fixed frame plus the name.
    let name_frame = cost(&line(&Shown {
        name: "",
        description: None,
    }));
    let short_costs: Vec<usize> = entries
        .iter()
        .map(|entry| {
            if entry.pinned || !chars {
                cost(&line(&Shown {
                    name: entry.shown.name,
                    description: if entry.pinned {
                        entry.shown.description.clone()
                    } else {
                        None
                    },
                }))
            } else {
                name_frame + entry.name_chars
            }
        })
        .collect();
    let floor = frame + short_costs.iter().sum::<usize>();
    // When names alone do not fit (a large library, a small budget), every
    // description goes anyway: the full lines need not be rendered.
    let names_only = floor > max && chars;
    // Every full line, rendered once into one buffer (one allocation, not
    // one per skill); `full_lines` holds where each one is.
    let mut full_buf = String::new();
    let mut full_spans: Vec<(usize, usize)> = Vec::new();
    if !names_only {
        full_buf.reserve(entries.len() * 160);
        full_spans.reserve(entries.len());
        for entry in &entries {
            let start = full_buf.len();
            push_entry(&mut full_buf, format, &entry.shown, false);
            full_spans.push((start, full_buf.len()));
        }
    }
    let full_lines: Vec<&str> = full_spans
        .iter()
        .map(|&(start, end)| &full_buf[start..end])
        .collect();
    let mut costs: Vec<usize> = if names_only {
        short_costs.clone()
    } else {
        full_lines.iter().map(|l| cost(l)).collect()
    };
    // Exact for characters; token counts need not add up, so the full
    // rendering is always measured whole with them.
    let mut total = frame + costs.iter().sum::<usize>();
    if format == CatalogFormat::Json && chars {
        total -= 1;
    }
    if !names_only && (total <= max || !chars) {
        let out = join(&mut full_lines.iter().copied(), Omitted::default());
        if cost(&out) <= max {
            report.text = out;
            return report;
        }
    }
    // Who gives way first: the lowest priority, then the name last in byte
    // order (entries are in name order: the highest index). Pinned skills
    // never give way.
    // Grouped by priority (few distinct values in practice), each group
    // filled from the last name back: no comparison sort.
    let mut groups: std::collections::BTreeMap<i32, Vec<usize>> = std::collections::BTreeMap::new();
    for i in (0..entries.len()).rev().filter(|&i| !entries[i].pinned) {
        groups.entry(entries[i].priority).or_default().push(i);
    }
    let order: Vec<usize> = groups.into_values().flatten().collect();
    // Step 1: list skills by name only, in that order, until the catalog fits.
    let mut shortened = vec![false; entries.len()];
    for &i in &order {
        if total <= max && !names_only {
            break;
        }
        if entries[i].shown.description.is_none() {
            continue;
        }
        shortened[i] = true;
        if !names_only {
            total = total - costs[i] + short_costs[i];
            costs[i] = short_costs[i];
        }
    }
    // Step 2: leave skills out, in the same order, until it fits with the note
    // naming them. Room is reserved for the worst-case note: the longest
    // names it could list, plus its frame; what fits beside the real note is
    // then taken back.
    let mut dropped = vec![false; entries.len()];
    let mut next_drop = 0;
    // The first names (in name order) of the skills left out, for the note.
    let note_names = |dropped: &[bool]| -> Vec<&str> {
        entries
            .iter()
            .zip(dropped)
            .filter(|(_, gone)| **gone)
            .map(|(entry, _)| entry.shown.name)
            .take(MAX_NOTE_NAMES)
            .collect()
    };
    if total > max {
        let mut longest: Vec<(usize, &str)> = order
            .iter()
            .map(|&i| (entries[i].name_chars, entries[i].shown.name))
            .collect();
        if longest.len() > MAX_NOTE_NAMES {
            longest.select_nth_unstable_by_key(MAX_NOTE_NAMES, |(n, _)| std::cmp::Reverse(*n));
            longest.truncate(MAX_NOTE_NAMES);
        }
        let longest: Vec<&str> = longest.into_iter().map(|(_, name)| name).collect();
        let reserve = cost(&note_text(order.len(), &longest)) + cost(",\"note\":\"\"\n");
        while total + reserve > max && next_drop < order.len() {
            let i = order[next_drop];
            dropped[i] = true;
            total -= costs[i];
            next_drop += 1;
        }
        let empty_frame = cost(&assemble(format, "", "", Omitted::default()));
        let note_cost = |dropped: &[bool], count: usize| {
            let names = note_names(dropped);
            let omitted = Omitted {
                count,
                names: &names,
            };
            cost(&assemble(format, "", "", omitted)).saturating_sub(empty_frame)
        };
        while next_drop > 0 {
            let i = order[next_drop - 1];
            dropped[i] = false;
            let fits = if next_drop == 1 {
                total + costs[i] <= max
            } else {
                total + costs[i] + note_cost(&dropped, next_drop - 1) <= max
            };
            if !fits {
                dropped[i] = true;
                break;
            }
            total += costs[i];
            next_drop -= 1;
        }
    }
    let assemble_kept = |dropped: &[bool], count: usize| {
        let names = note_names(dropped);
        let mut body = String::new();
        let mut first = true;
        for (i, entry) in entries.iter().enumerate() {
            if dropped[i] {
                continue;
            }
            if entry.pinned || !(shortened[i] || names_only) {
                match full_lines.get(i) {
                    Some(line) if first && format == CatalogFormat::Json => {
                        body.push_str(line.strip_prefix(',').unwrap_or(line));
                    }
                    Some(line) => body.push_str(line),
                    None => push_entry(&mut body, format, &entry.shown, first),
                }
            } else {
                let short = Shown {
                    name: entry.shown.name,
                    description: None,
                };
                push_entry(&mut body, format, &short, first);
            }
            first = false;
        }
        let omitted = Omitted {
            count,
            names: &names,
        };
        assemble(format, &guardrail, &body, omitted)
    };
    let mut out = assemble_kept(&dropped, next_drop);
    let mut out_cost = cost(&out);
    // A custom token counter need not be additive: keep dropping until it fits.
    while out_cost > max && next_drop < order.len() {
        dropped[order[next_drop]] = true;
        next_drop += 1;
        out = assemble_kept(&dropped, next_drop);
        out_cost = cost(&out);
    }
    report.over_budget = out_cost > max;
    report.text = out;
    if lists {
        // Entries are in name order, so both lists come out sorted.
        for ((entry, &gone), &short) in entries.iter().zip(&dropped).zip(&shortened) {
            if gone {
                report.omitted.push(entry.shown.name.to_owned());
            } else if short {
                report.shortened.push(entry.shown.name.to_owned());
            }
        }
    }
    report
}

fn guardrail(tool: &str) -> String {
    format!(
        "Skills are instructions for specific tasks, not tools you can call. When a task matches a skill's description, call `{tool}` with the skill's name before you act, then follow the instructions it returns."
    )
}

fn note_text(omitted: usize, names: &[&str]) -> String {
    let mut note = format!(
        "{omitted} more skill{} not listed here to fit the catalog budget: ",
        if omitted == 1 { " is" } else { "s are" }
    );
    note.push_str(
        &names
            .iter()
            .take(MAX_NOTE_NAMES)
            .copied()
            .collect::<Vec<_>>()
            .join(", "),
    );
    if omitted > MAX_NOTE_NAMES {
        let _ = write!(note, ", and {} others", omitted - MAX_NOTE_NAMES);
    }
    note.push_str(if omitted == 1 {
        ". It can still be loaded by name."
    } else {
        ". They can still be loaded by name."
    });
    note
}

/// Collapses whitespace runs (newlines included) to one space, drops control
/// characters (escape sequences must not reach a prompt or a terminal) and
/// applies the cap.
fn one_line(text: &str, cap: Option<usize>) -> String {
    let mut out = if is_one_line(text) {
        // Already one line of printable ASCII words: nothing to collapse.
        text.to_owned()
    } else {
        collapse(text)
    };
    if let Some(cap) = cap
        && out.chars().count() > cap
    {
        let cut = out
            .char_indices()
            .nth(cap.saturating_sub(1))
            .map_or(out.len(), |(i, _)| i);
        out.truncate(cut);
        out.truncate(out.trim_end().len());
        out.push('…');
    }
    out
}

/// Whether `text` is printable ASCII words separated by single spaces, with
/// no space at either end: what [`collapse`] would give back unchanged
/// (most descriptions), told in one pass over the bytes.
fn is_one_line(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Folded without stopping early, so the compiler can vectorize it; the
    // double space is found by a vectorized search.
    let printable = bytes
        .iter()
        .fold(true, |ok, &b| ok & (b' '..=b'~').contains(&b));
    printable
        && bytes.first() != Some(&b' ')
        && bytes.last() != Some(&b' ')
        && memchr::memmem::find(bytes, b"  ").is_none()
}

/// Whitespace runs (newlines included) to one space, control characters
/// dropped, no space at either end.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        if word.chars().any(char::is_control) {
            out.extend(word.chars().filter(|c| !c.is_control()));
        } else {
            out.push_str(word);
        }
    }
    out
}

fn push_entry(out: &mut String, format: CatalogFormat, shown: &Shown<'_>, first: bool) {
    match format {
        CatalogFormat::Xml => {
            out.push_str("<skill name=\"");
            escape_xml(out, shown.name);
            match &shown.description {
                Some(description) => {
                    out.push_str("\">");
                    escape_xml(out, description);
                    out.push_str("</skill>\n");
                }
                None => out.push_str("\"/>\n"),
            }
        }
        CatalogFormat::Markdown => {
            out.push_str("- `");
            out.push_str(shown.name);
            out.push('`');
            if let Some(description) = &shown.description {
                out.push_str(": ");
                out.push_str(description);
            }
            out.push('\n');
        }
        CatalogFormat::Json => {
            if !first {
                out.push(',');
            }
            out.push_str("{\"name\":");
            push_json(out, shown.name);
            if let Some(description) = &shown.description {
                out.push_str(",\"description\":");
                push_json(out, description);
            }
            out.push('}');
        }
    }
}

/// Appends `text` as a JSON string. Hand-written because it runs once per
/// catalog entry and a serializer call per string costs more than the escaping;
/// the output is what `serde_json` writes (tested).
fn push_json(out: &mut String, text: &str) {
    out.push('"');
    push_escaped(out, text, &JSON_SPECIAL, |b, out| match b {
        b'"' => out.push_str("\\\""),
        b'\\' => out.push_str("\\\\"),
        b'\n' => out.push_str("\\n"),
        b'\r' => out.push_str("\\r"),
        b'\t' => out.push_str("\\t"),
        0x08 => out.push_str("\\b"),
        0x0c => out.push_str("\\f"),
        _ => {
            let _ = write!(out, "\\u{b:04x}");
        }
    });
    out.push('"');
}

/// How many skills a budget left out, and the names the note may show.
#[derive(Clone, Copy, Default)]
struct Omitted<'a> {
    count: usize,
    names: &'a [&'a str],
}

/// The whole catalog around `body`; `omitted` skills left out (the note names
/// the first of `names`, which are in name order).
fn assemble(format: CatalogFormat, guardrail: &str, body: &str, omitted: Omitted<'_>) -> String {
    let mut out = String::with_capacity(512 + body.len());
    match format {
        CatalogFormat::Xml => {
            out.push_str(guardrail);
            out.push_str("\n<available_skills>\n");
            out.push_str(body);
            out.push_str("</available_skills>\n");
            if omitted.count > 0 {
                escape_xml(&mut out, &note_text(omitted.count, omitted.names));
                out.push('\n');
            }
        }
        CatalogFormat::Markdown => {
            out.push_str("## Available skills\n\n");
            out.push_str(guardrail);
            out.push_str("\n\n");
            out.push_str(body);
            if omitted.count > 0 {
                out.push('\n');
                out.push_str(&note_text(omitted.count, omitted.names));
                out.push('\n');
            }
        }
        CatalogFormat::Json => {
            out.push_str("{\"instructions\":");
            push_json(&mut out, guardrail);
            out.push_str(",\"skills\":[");
            out.push_str(body);
            out.push(']');
            if omitted.count > 0 {
                out.push_str(",\"note\":");
                push_json(&mut out, &note_text(omitted.count, omitted.names));
            }
            out.push_str("}\n");
        }
    }
    out
}

/// Escapes `& < > " '` for XML text and attribute values.
pub fn escape_xml(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    // The next `&`, `<` or `>` and the next quote, each found by a
    // vectorized search and searched for again only once passed.
    let markup = |from: usize| {
        bytes
            .get(from..)
            .and_then(|rest| memchr::memchr3(b'&', b'<', b'>', rest))
            .map(|i| from + i)
    };
    let quote = |from: usize| {
        bytes
            .get(from..)
            .and_then(|rest| memchr::memchr2(b'"', b'\'', rest))
            .map(|i| from + i)
    };
    let (mut next_markup, mut next_quote) = (markup(0), quote(0));
    let mut last = 0;
    loop {
        let at = match (next_markup, next_quote) {
            (Some(m), Some(q)) => m.min(q),
            (Some(at), None) | (None, Some(at)) => at,
            (None, None) => break,
        };
        // Every special byte is ASCII: `last` and `at` are on character
        // boundaries.
        out.push_str(text.get(last..at).unwrap_or_default());
        out.push_str(match bytes.get(at) {
            Some(b'&') => "&amp;",
            Some(b'<') => "&lt;",
            Some(b'>') => "&gt;",
            Some(b'"') => "&quot;",
            _ => "&apos;",
        });
        last = at + 1;
        if next_markup == Some(at) {
            next_markup = markup(last);
        } else {
            next_quote = quote(last);
        }
    }
    out.push_str(text.get(last..).unwrap_or_default());
}

/// Bytes that need escaping, as lookup tables: a table scan is several times
/// faster than matching every byte, and catalogs are mostly plain text.
#[cfg(test)]
static XML_SPECIAL: [bool; 256] = table(b"&<>\"'", false);
static JSON_SPECIAL: [bool; 256] = table(b"\"\\", true);

const fn table(special: &[u8], controls: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < special.len() {
        t[special[i] as usize] = true;
        i += 1;
    }
    if controls {
        let mut c = 0;
        while c < 0x20 {
            t[c] = true;
            c += 1;
        }
    }
    t
}

/// Copies `text`, replacing each byte flagged in `special` through `escape`.
/// Flagged bytes are ASCII, so slicing at them stays on UTF-8 boundaries.
fn push_escaped(
    out: &mut String,
    text: &str,
    special: &[bool; 256],
    escape: impl Fn(u8, &mut String),
) {
    let bytes = text.as_bytes();
    let mut last = 0;
    while let Some(offset) = bytes[last..].iter().position(|&b| special[usize::from(b)]) {
        let i = last + offset;
        out.push_str(&text[last..i]);
        escape(bytes[i], out);
        last = i + 1;
    }
    out.push_str(&text[last..]);
}

#[cfg(test)]
mod escape_tests {
    use proptest::prelude::*;

    use super::{XML_SPECIAL, escape_xml, push_escaped};

    proptest! {
        /// The vectorized XML escape writes what the table scan writes.
        #[test]
        fn escape_xml_agrees_with_the_table_scan(text in "[a-z &<>\"' ]{0,40}|\\PC{0,40}") {
            let mut fast = String::from("x");
            escape_xml(&mut fast, &text);
            let mut slow = String::from("x");
            push_escaped(&mut slow, &text, &XML_SPECIAL, |b, out| {
                out.push_str(match b {
                    b'&' => "&amp;",
                    b'<' => "&lt;",
                    b'>' => "&gt;",
                    b'"' => "&quot;",
                    _ => "&apos;",
                });
            });
            prop_assert_eq!(fast, slow);
        }
    }
}

#[cfg(test)]
mod one_line_tests {
    use proptest::prelude::*;

    use super::{collapse, is_one_line, one_line};

    proptest! {
        /// The shortcut for text already on one line agrees with the
        /// general collapse, on text made mostly of the characters that
        /// decide (spaces, tabs, newlines, controls, printable ASCII, a
        /// few non-ASCII spaces and letters).
        #[test]
        fn the_one_line_shortcut_agrees_with_the_collapse(
            text in proptest::collection::vec(
                prop_oneof![
                    4 => proptest::char::range('!', '~'),
                    2 => Just(' '),
                    1 => prop::sample::select(vec!['\t', '\n', '\r', '\u{7f}', '\u{1b}', '\u{a0}', '\u{2028}', 'é', '\u{0}']),
                ],
                0..40,
            ).prop_map(|chars| chars.into_iter().collect::<String>())
        ) {
            if is_one_line(&text) {
                prop_assert_eq!(collapse(&text), text.clone());
            }
            prop_assert_eq!(one_line(&text, None), collapse(&text));
        }
    }

    #[test]
    fn the_shortcut_takes_plain_sentences_only() {
        assert!(is_one_line("Reads PDFs. Use it for forms."));
        assert!(is_one_line(""));
        for text in [
            " lead",
            "trail ",
            "two  spaces",
            "tab\there",
            "line\nbreak",
            "caf\u{e9}",
            "bell\u{7}",
        ] {
            assert!(!is_one_line(text), "{text:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::SkillName;

    fn meta(name: &str, desc: &str) -> SkillMetadata {
        SkillMetadata::new(SkillName::parse(name).expect("name"), desc)
    }

    #[test]
    fn a_catalog_round_trips_losslessly() {
        let mut a = meta("pdf", "Reads PDFs.");
        a.raw_frontmatter = "name: pdf\ndescription: Reads PDFs.\nx-team: docs\n".into();
        a.extra
            .insert("x-team".into(), serde_json::Value::String("docs".into()));
        a.declared_tools = vec!["read_pdf".into()];
        a.extensions.disable_model_invocation = true;
        a.path = Some("docs/pdf".into());
        let catalog = Catalog::new(vec![meta("b", "Bees."), a]);
        let text = serde_json::to_string(&catalog).expect("serializes");
        let back: Catalog = serde_json::from_str(&text).expect("deserializes");
        assert_eq!(back, catalog);
        assert_eq!(
            back.get("pdf").and_then(|m| m.path.as_deref()),
            Some("docs/pdf")
        );
        assert_eq!(back.fingerprint(), catalog.fingerprint());
        let options = RenderOptions::default();
        assert_eq!(back.render(&options), catalog.render(&options));
        let bad = r#"{"entries":[{"name":"Not A Name","description":"x"}]}"#;
        assert!(serde_json::from_str::<Catalog>(bad).is_err());
    }

    #[test]
    fn a_path_changes_the_entries_but_never_the_rendering() {
        let flat = Catalog::new(vec![meta("pdf", "Reads PDFs.")]);
        let nested = Catalog::new(vec![meta("pdf", "Reads PDFs.").with_path("docs/pdf")]);
        assert!(!flat.same_entries(&nested));
        assert_ne!(flat.fingerprint(), nested.fingerprint());
        for format in [
            CatalogFormat::Xml,
            CatalogFormat::Markdown,
            CatalogFormat::Json,
        ] {
            let options = RenderOptions::default().with_format(format);
            assert_eq!(flat.render(&options), nested.render(&options));
        }
    }

    #[test]
    fn empty_renders_nothing() {
        for format in [
            CatalogFormat::Xml,
            CatalogFormat::Markdown,
            CatalogFormat::Json,
        ] {
            assert_eq!(
                Catalog::default().render(&RenderOptions::default().with_format(format)),
                ""
            );
        }
    }

    #[test]
    fn sorted_deduped_and_searchable() {
        let c = Catalog::new(vec![
            meta("b", "first b"),
            meta("a", "x"),
            meta("b", "second b"),
        ]);
        assert_eq!(c.names().collect::<Vec<_>>(), vec!["a", "b"]);
        assert_eq!(c.get("b").map(|m| m.description.as_str()), Some("first b"));
        assert!(c.get("zz").is_none());
        assert_ne!(
            c.fingerprint(),
            Catalog::new(vec![meta("a", "y")]).fingerprint()
        );
    }

    #[test]
    fn escapes_xml() {
        let c = Catalog::new(vec![meta("a", "x </available_skills> & \"q\"")]);
        let out = c.render(&RenderOptions::default());
        assert!(out.contains("x &lt;/available_skills&gt; &amp; &quot;q&quot;"));
        assert_eq!(out.matches("</available_skills>").count(), 1);
    }

    #[test]
    fn hidden_skills_are_not_listed() {
        let mut hidden = meta("secret", "d");
        hidden.extensions.disable_model_invocation = true;
        let c = Catalog::new(vec![hidden.clone()]);
        assert_eq!(c.render(&RenderOptions::default()), "");
        let c = Catalog::new(vec![hidden, meta("open", "d")]);
        let out = c.render(&RenderOptions::default());
        assert!(out.contains("open") && !out.contains("secret"));
    }

    fn listed(out: &str) -> Vec<(String, bool)> {
        out.lines()
            .filter_map(|l| l.strip_prefix("<skill name=\""))
            .map(|l| {
                let end = l.find('"').unwrap_or(l.len());
                (l[..end].to_owned(), l.ends_with("</skill>"))
            })
            .collect()
    }

    #[test]
    fn tiers_decide_who_is_listed_and_how() {
        use crate::{Tier, VisibilityPolicy};
        let mut manual = meta("manual-one", "Manual.");
        manual.extensions.disable_model_invocation = true;
        let mut needy = meta("needy", "Needs jq.");
        needy.extensions.requires.bins = vec!["jq".into()];
        let c = Catalog::new(vec![
            meta("alpha", "Alpha."),
            meta("beta", "Beta."),
            meta("gone", "Gone."),
            manual,
            needy.clone(),
        ]);
        let mut policy = VisibilityPolicy::new()
            .with_tier("beta", Tier::NameOnly)
            .with_tier("gone", Tier::Off)
            .with_tier("manual-one", Tier::Listed);
        policy
            .needs_setup
            .insert("needy".into(), vec![crate::Missing::Bin("jq".into())]);
        let out = c.render(&RenderOptions::default().with_visibility(policy));
        assert_eq!(
            listed(&out),
            [
                ("alpha".to_owned(), true),
                ("beta".to_owned(), false),
                ("manual-one".to_owned(), true),
            ]
        );
        assert!(out.contains("<skill name=\"beta\"/>\n"), "{out}");
        let md = c.render(
            &RenderOptions::default()
                .with_format(CatalogFormat::Markdown)
                .with_visibility(VisibilityPolicy::new().with_tier("beta", Tier::NameOnly)),
        );
        assert!(
            md.contains("- `beta`\n") && md.contains("- `alpha`: Alpha.\n"),
            "{md}"
        );
        let json = c.render(
            &RenderOptions::default()
                .with_format(CatalogFormat::Json)
                .with_visibility(VisibilityPolicy::new().with_tier("beta", Tier::NameOnly)),
        );
        let value: serde_json::Value = serde_json::from_str(&json).expect("json");
        assert_eq!(value["skills"][1], serde_json::json!({"name": "beta"}));
    }

    #[test]
    fn overflow_shortens_then_drops_by_priority_then_name() {
        use crate::{Tier, VisibilityPolicy};
        let names = ["a-one", "b-two", "c-three", "d-four", "e-five", "f-six"];
        let c = Catalog::new(names.map(|n| meta(n, &"word ".repeat(30))));
        let policy = VisibilityPolicy::new()
            .with_tier("f-six", Tier::Pinned)
            .with_priority("a-one", -1)
            .with_priority("d-four", 5);
        // The frame plus the pinned entry.
        let frame = c
            .render(
                &RenderOptions::default().with_visibility(
                    VisibilityPolicy::new()
                        .with_tier("a-one", Tier::Off)
                        .with_tier("b-two", Tier::Off)
                        .with_tier("c-three", Tier::Off)
                        .with_tier("d-four", Tier::Off)
                        .with_tier("e-five", Tier::Off),
                ),
            )
            .chars()
            .count();
        // Room for the pinned skill and a little more: three skills lose their
        // description (a-one first: lowest priority; then e-five and c-three:
        // the last names).
        let opts = |budget| {
            RenderOptions::default()
                .with_budget(Budget::chars(budget))
                .with_visibility(policy.clone())
        };
        let report = c.render_report(&opts(frame + 2 * 180 + 3 * 25));
        assert_eq!(report.shortened, ["a-one", "c-three", "e-five"]);
        assert!(report.omitted.is_empty() && !report.over_budget);
        assert_eq!(
            listed(&report.text),
            [
                ("a-one".to_owned(), false),
                ("b-two".to_owned(), true),
                ("c-three".to_owned(), false),
                ("d-four".to_owned(), true),
                ("e-five".to_owned(), false),
                ("f-six".to_owned(), true),
            ]
        );
        // Tighter: every skill by name, then skills leave in the same order.
        let many = Catalog::new((0..40).map(|i| meta(&format!("s-{i:02}"), "Does a thing.")));
        let order = VisibilityPolicy::new()
            .with_priority("s-00", -1)
            .with_priority("s-39", 1);
        let report = many.render_report(
            &RenderOptions::default()
                .with_budget(Budget::chars(900))
                .with_visibility(order),
        );
        assert!(report.text.chars().count() <= 900);
        assert!(!report.over_budget);
        let kept = listed(&report.text);
        assert!(kept.len() > 5 && kept.len() < 40, "{}", report.text);
        assert!(kept.iter().all(|(_, described)| !described));
        // s-00 (lowest priority) left first, then names from the end; s-39
        // (highest) stays.
        let mut expected: Vec<String> = (1..kept.len()).map(|i| format!("s-{i:02}")).collect();
        expected.push("s-39".into());
        assert_eq!(
            kept.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
            expected
        );
        assert!(report.omitted.contains(&"s-00".to_owned()));
        assert_eq!(report.omitted.len() + kept.len(), 40);
        let note = format!("{} more skills are not listed", report.omitted.len());
        assert!(report.text.contains(&note), "{}", report.text);
        // Pinned skills alone over the budget: still listed, and said so.
        let report = c.render_report(&opts(10));
        assert!(report.over_budget);
        assert_eq!(listed(&report.text), [("f-six".to_owned(), true)]);
        // A description cap never cuts a pinned skill.
        let capped = c.render(
            &RenderOptions::default()
                .with_budget(Budget::unlimited().with_description_cap(10))
                .with_visibility(policy.clone()),
        );
        assert_eq!(capped.matches(">word word…</skill>").count(), 5, "{capped}");
    }

    /// A counter configured at run time (as a BPE loaded from a file would
    /// be): `per_word` tokens per word, counting calls.
    #[derive(Debug)]
    struct RuntimeCounter {
        per_word: usize,
        calls: std::sync::atomic::AtomicUsize,
    }

    impl TokenCounter for RuntimeCounter {
        fn count(&self, text: &str) -> usize {
            self.calls
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            text.split_whitespace().count() * self.per_word
        }
    }

    #[test]
    fn token_budgets_use_the_counter_object() {
        let entries: Vec<_> = (0..30)
            .map(|i| meta(&format!("skill-{i:02}"), &"word ".repeat(10)))
            .collect();
        let c = Catalog::new(entries);
        let counter = Arc::new(RuntimeCounter {
            per_word: 3,
            calls: std::sync::atomic::AtomicUsize::new(0),
        });
        let opts = RenderOptions::default()
            .with_budget(Budget::tokens(600))
            .with_token_counter(counter.clone());
        let out = c.render(&opts);
        assert!(counter.calls.load(std::sync::atomic::Ordering::Relaxed) > 0);
        assert!(counter.count(&out) <= 600, "{}", counter.count(&out));
        // Every skill stays listed; some only by name.
        assert_eq!(out.matches("<skill ").count(), 30);
        let described = out.matches("</skill>").count();
        assert!(described > 0 && described < 30, "{described}");
        // The default estimator lets more through: the counter really decided.
        let estimated = c.render(&RenderOptions::default().with_budget(Budget::tokens(600)));
        assert!(estimated.matches("</skill>").count() > described);
        assert_eq!(EstimateTokens.count("abcde"), 2);
    }

    #[test]
    fn budget_names_what_was_left_out() {
        let entries: Vec<_> = (0..50)
            .map(|i| meta(&format!("skill-{i:02}"), &"word ".repeat(20)))
            .collect();
        let c = Catalog::new(entries);
        for limit in [Budget::chars(800), Budget::tokens(200)] {
            let opts = RenderOptions::default().with_budget(limit);
            let out = c.render(&opts);
            let size = match limit.limit {
                Some(BudgetLimit::Chars(n)) => (out.chars().count(), n),
                Some(BudgetLimit::Tokens(n)) => (estimate_tokens(&out), n),
                None => unreachable!("limit set"),
            };
            assert!(size.0 <= size.1, "{size:?}");
            let kept = out.matches("<skill ").count();
            assert!(kept > 0 && kept < 50, "{kept}");
            // Descriptions go before any skill does.
            assert_eq!(out.matches("</skill>").count(), 0, "{out}");
            let note = format!("{} more skills are not listed here", 50 - kept);
            assert!(out.contains(&note), "{out}");
            assert!(
                out.contains(&format!("and {} others", 50 - kept - 20)),
                "{out}"
            );
        }
        let opts =
            RenderOptions::default().with_budget(Budget::unlimited().with_description_cap(10));
        assert!(c.render(&opts).contains(">word word…</skill>"));
    }

    #[test]
    fn json_strings_match_serde() {
        for text in [
            "plain",
            "q\"uote\\back",
            "nl\n\r\t\u{8}\u{c}\u{1}\u{1f}",
            "é ✓ 😀",
            "",
        ] {
            let mut out = String::new();
            push_json(&mut out, text);
            assert_eq!(out, serde_json::to_string(text).expect("json"), "{text:?}");
        }
    }

    #[test]
    fn description_is_one_line() {
        assert_eq!(one_line("a\n  b\tc ", None), "a b c");
        assert_eq!(one_line("abcdef", Some(3)), "ab…");
        assert_eq!(one_line("abc", Some(3)), "abc");
    }
}
