//! Full-text search over skills (F-DIS-12): a BM25F index over each skill's name,
//! description, body and reference documents.
//!
//! [`SearchIndex::build`] takes [`SearchDocument`]s (one per skill) and
//! [`SearchIndex::search`] returns the best [`SearchHit`]s for a free-text query.
//! The index is pure: no I/O, clocks, threads or randomness, so it builds for
//! `wasm32-unknown-unknown` like the rest of the crate. A provider (or agent)
//! gathers the texts; this module only ranks them.
//!
//! # Ranking
//! BM25F (Robertson, Zaragoza & Taylor): each field's term count is normalized by
//! that field's length against the field's average length, weighted by the
//! field's weight ([`FieldWeights`]; by default name 4 > description 2 > body 1 >
//! references 0.5), summed, and saturated once with `k1`; the sum is multiplied
//! by the term's inverse document frequency
//! `ln(1 + (N − df + 0.5) / (df + 0.5))`, which is always positive. A skill's
//! score is the sum over the distinct query terms. Repeating a word in the query
//! does not count it twice.
//!
//! # Tokens
//! See [`tokens`]: Unicode-aware (NFKC, then lowercase), split on anything that is
//! not a letter, digit or combining mark. A hyphenated or underscored word such as
//! `pdf-tools` gives the whole word *and* its parts (`pdf-tools`, `pdf`,
//! `tools`), so a query for `pdf` finds the `pdf-tools` skill and a query for
//! `pdf-tools` prefers it. A short English stop-word list is dropped
//! ([`STOP_WORDS`]) and plain English plurals are folded (`tables` → `table`,
//! `queries` → `query`); there is no other stemming. Scripts written without
//! spaces (Chinese, Japanese) are indexed as whole runs, not words.
//!
//! # Determinism
//! Documents are sorted by name before indexing, every floating-point sum is
//! taken in a fixed order (query terms sorted, documents by name), and ties are
//! broken by name. The same documents give the same hits, bit for bit, in any
//! insertion order. When two documents share a name the first one given wins,
//! as in [`Catalog::new`](crate::Catalog::new).
//!
//! # Hidden skills
//! Skills marked `disable-model-invocation` ([`SearchDocument::hidden`]) are left
//! out of the index by default, consistent with the catalog (they load only on an
//! explicit mention); [`SearchOptions::with_include_hidden`] keeps them.
//!
//! # Bounds
//! Queries are cut to [`MAX_QUERY_BYTES`] bytes and [`MAX_QUERY_TERMS`] distinct
//! terms; tokens longer than [`MAX_TOKEN_BYTES`] bytes (hashes, base64) are not
//! indexed. Scores are finite and positive; a query with no indexed term gives
//! no hits.
//!
//! # Why not a crate
//! Written by hand (about 150 lines of scoring). The maintained crates checked
//! did not fit: `bm25` scores a single text per document (no field weights), and
//! its search engine keeps documents in a randomly seeded `HashMap`, so tie order
//! and float summation order vary between runs; `probly-search` has field boosts
//! but brings `hashbrown` and a generational arena, expands prefixes through a
//! trie we do not need, and also leaves tie order to hash iteration. A
//! hand-written index gives BM25F, a fixed summation order and name tie-breaks
//! with no new dependency.
//!
//! ```
//! use skills_core::{SearchDocument, SearchIndex};
//! let index = SearchIndex::build([
//!     SearchDocument::new("pdf-tools", "Extracts text and tables from PDF files."),
//!     SearchDocument::new("api-review", "Reviews REST API designs.")
//!         .with_body("Mention PDF exports only in passing."),
//! ]);
//! let hits = index.search("pdf tables", 10);
//! assert_eq!(hits[0].name, "pdf-tools");
//! assert_eq!(hits.len(), 2);
//! assert!(index.search("the and of", 10).is_empty());
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use serde::Serialize;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

use crate::metadata::SkillMetadata;
use crate::provider::Skill;

/// At most this many distinct terms of a query are used; the rest are ignored.
pub const MAX_QUERY_TERMS: usize = 64;

/// At most this many bytes of a query are read (cut at a character boundary).
pub const MAX_QUERY_BYTES: usize = 8 * 1024;

/// Tokens longer than this (in bytes, after normalization) are not indexed.
pub const MAX_TOKEN_BYTES: usize = 64;

/// Words dropped from documents and queries.
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "do", "does", "for", "from", "had", "has", "have", "he", "her", "his",
    "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "our", "she", "so", "such", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "too", "was", "we", "were", "what", "when", "where", "which",
    "who", "why", "will", "with", "would", "you", "your",
];

/// A field of a [`SearchDocument`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchField {
    /// The skill's name.
    Name,
    /// The description (and `when_to_use`, when given).
    Description,
    /// The `SKILL.md` body.
    Body,
    /// Reference documents: their paths and texts.
    References,
}

impl SearchField {
    /// Every field, in weight order.
    pub const ALL: [SearchField; 4] = [
        SearchField::Name,
        SearchField::Description,
        SearchField::Body,
        SearchField::References,
    ];

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// One skill's searchable text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchDocument {
    /// The skill's name, returned in [`SearchHit::name`].
    pub name: String,
    /// What the skill does and when to use it.
    pub description: String,
    /// The `SKILL.md` body.
    pub body: String,
    /// Reference documents as `(relative path, text)`; the path is indexed too.
    pub references: Vec<(String, String)>,
    /// `true` for skills marked `disable-model-invocation`.
    pub hidden: bool,
}

impl SearchDocument {
    /// A document with a name and description only.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            body: String::new(),
            references: Vec::new(),
            hidden: false,
        }
    }

    /// A document from catalog metadata (no body): name, description plus
    /// `when_to_use`, and the hidden flag.
    pub fn from_metadata(metadata: &SkillMetadata) -> Self {
        let mut description = metadata.description.clone();
        if let Some(when) = &metadata.extensions.when_to_use {
            description.push('\n');
            description.push_str(when);
        }
        Self {
            hidden: metadata.extensions.disable_model_invocation,
            ..Self::new(metadata.name.as_str(), description)
        }
    }

    /// A document from a loaded skill: [`from_metadata`](Self::from_metadata) plus
    /// the body. Add reference texts with [`with_reference`](Self::with_reference)
    /// (see [`list_docs`](crate::docs::list_docs) for which files count).
    pub fn from_skill(skill: &Skill) -> Self {
        Self::from_metadata(&skill.metadata).with_body(skill.body.clone())
    }

    /// Sets the body.
    #[must_use]
    pub fn with_body(mut self, body: impl Into<String>) -> Self {
        self.body = body.into();
        self
    }

    /// Adds a reference document's path and text.
    #[must_use]
    pub fn with_reference(mut self, path: impl Into<String>, text: impl Into<String>) -> Self {
        self.references.push((path.into(), text.into()));
        self
    }

    /// Adds several reference documents.
    #[must_use]
    pub fn with_references<P, T>(mut self, references: impl IntoIterator<Item = (P, T)>) -> Self
    where
        P: Into<String>,
        T: Into<String>,
    {
        self.references
            .extend(references.into_iter().map(|(p, t)| (p.into(), t.into())));
        self
    }

    /// Marks the document hidden (`disable-model-invocation`) or not.
    #[must_use]
    pub fn with_hidden(mut self, hidden: bool) -> Self {
        self.hidden = hidden;
        self
    }
}

/// How much a match in each field counts. Negative or non-finite weights count
/// as zero (the field is ignored).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights {
    /// Weight of the name. Default 4.
    pub name: f64,
    /// Weight of the description. Default 2.
    pub description: f64,
    /// Weight of the body. Default 1.
    pub body: f64,
    /// Weight of the reference documents. Default 0.5.
    pub references: f64,
}

impl Default for FieldWeights {
    fn default() -> Self {
        Self {
            name: 4.0,
            description: 2.0,
            body: 1.0,
            references: 0.5,
        }
    }
}

impl FieldWeights {
    fn as_array(self) -> [f64; 4] {
        [self.name, self.description, self.body, self.references]
            .map(|w| if w.is_finite() && w > 0.0 { w } else { 0.0 })
    }
}

/// Options for [`SearchIndex::build_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SearchOptions {
    /// Per-field weights.
    pub weights: FieldWeights,
    /// BM25 term-frequency saturation, default 1.2 (clamped to `0..=100`).
    pub k1: f64,
    /// BM25 length normalization, default 0.75 (clamped to `0..=1`).
    pub b: f64,
    /// Index skills marked `disable-model-invocation` too. Default `false`.
    pub include_hidden: bool,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            weights: FieldWeights::default(),
            k1: 1.2,
            b: 0.75,
            include_hidden: false,
        }
    }
}

impl SearchOptions {
    /// Sets the field weights.
    #[must_use]
    pub fn with_weights(mut self, weights: FieldWeights) -> Self {
        self.weights = weights;
        self
    }

    /// Sets the BM25 parameters `k1` and `b`.
    #[must_use]
    pub fn with_bm25(mut self, k1: f64, b: f64) -> Self {
        self.k1 = k1;
        self.b = b;
        self
    }

    /// Includes (or not) skills marked `disable-model-invocation`.
    #[must_use]
    pub fn with_include_hidden(mut self, include: bool) -> Self {
        self.include_hidden = include;
        self
    }
}

/// One result of [`SearchIndex::search`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SearchHit {
    /// The skill's name.
    pub name: String,
    /// The BM25F score: finite and positive; higher is better.
    pub score: f64,
    /// The fields in which some query term occurs, in [`SearchField::ALL`] order.
    pub fields: Vec<SearchField>,
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    /// Which fields contain the term ([`SearchField::bit`]).
    fields: u8,
    /// The saturated, weighted, length-normalized term frequency (before idf).
    weight: f64,
}

/// An immutable BM25F index over skills. Build once per catalog snapshot;
/// searching takes `&self`.
#[derive(Debug, Clone)]
pub struct SearchIndex {
    /// Document names, sorted; a document's id is its position.
    names: Vec<String>,
    /// Term → id (an index into `postings` and `idf`). Only looked up, never
    /// iterated, so the hasher does not affect results.
    terms: HashMap<Box<str>, u32, TermHasher>,
    /// Per term, the documents that contain it, by id.
    postings: Vec<Vec<Posting>>,
    /// Per term, its inverse document frequency.
    idf: Vec<f64>,
    options: SearchOptions,
}

impl Default for SearchIndex {
    fn default() -> Self {
        Self::build(std::iter::empty())
    }
}

impl SearchIndex {
    /// Builds an index with the default [`SearchOptions`].
    pub fn build(docs: impl IntoIterator<Item = SearchDocument>) -> Self {
        Self::build_with(docs, SearchOptions::default())
    }

    /// Builds an index with `options`.
    pub fn build_with(
        docs: impl IntoIterator<Item = SearchDocument>,
        options: SearchOptions,
    ) -> Self {
        let mut docs: Vec<SearchDocument> = docs
            .into_iter()
            .filter(|d| options.include_hidden || !d.hidden)
            .collect();
        // A stable sort keeps the first of equal names first; dedup keeps it.
        docs.sort_by(|a, b| a.name.cmp(&b.name));
        docs.dedup_by(|later, earlier| later.name == earlier.name);

        let mut terms: HashMap<Box<str>, u32, TermHasher> = HashMap::default();
        // Per term: (doc, per-field counts) in doc order.
        let mut raw: Vec<Vec<(u32, [u32; 4])>> = Vec::new();
        let mut lengths: Vec<[u32; 4]> = Vec::with_capacity(docs.len());
        // Scratch counts for the current document, indexed by term id.
        let mut counts: Vec<[u32; 4]> = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        let mut tokenizer = Tokenizer::default();

        for (doc, d) in docs.iter().enumerate() {
            let doc = u32::try_from(doc).unwrap_or(u32::MAX);
            let mut len = [0u32; 4];
            let mut add = |field: usize, text: &str| {
                tokenizer.run(text, |token| {
                    let id = match terms.get(token) {
                        Some(&id) => id,
                        None => {
                            let id = u32::try_from(raw.len()).unwrap_or(u32::MAX);
                            terms.insert(token.into(), id);
                            raw.push(Vec::new());
                            counts.push([0; 4]);
                            id
                        }
                    };
                    let slot = &mut counts[id as usize];
                    if *slot == [0; 4] {
                        touched.push(id);
                    }
                    slot[field] = slot[field].saturating_add(1);
                    len[field] = len[field].saturating_add(1);
                });
            };
            add(0, &d.name);
            add(1, &d.description);
            add(2, &d.body);
            for (path, text) in &d.references {
                add(3, path);
                add(3, text);
            }
            for id in touched.drain(..) {
                let slot = &mut counts[id as usize];
                raw[id as usize].push((doc, *slot));
                *slot = [0; 4];
            }
            lengths.push(len);
        }

        let n = docs.len() as f64;
        let mut avg = [0.0f64; 4];
        for len in &lengths {
            for (a, &l) in avg.iter_mut().zip(len) {
                *a += f64::from(l);
            }
        }
        for a in &mut avg {
            *a = if n > 0.0 { *a / n } else { 0.0 };
        }

        let weights = options.weights.as_array();
        let k1 = if options.k1.is_finite() {
            options.k1.clamp(0.0, 100.0)
        } else {
            1.2
        };
        let b = if options.b.is_finite() {
            options.b.clamp(0.0, 1.0)
        } else {
            0.75
        };

        let mut idf = Vec::with_capacity(raw.len());
        let postings: Vec<Vec<Posting>> = raw
            .into_iter()
            .map(|list| {
                let df = list.len() as f64;
                idf.push((1.0 + (n - df + 0.5) / (df + 0.5)).ln());
                list.into_iter()
                    .map(|(doc, tf)| {
                        let len = &lengths[doc as usize];
                        let mut weighted = 0.0;
                        let mut fields = 0u8;
                        for f in 0..4 {
                            if tf[f] == 0 {
                                continue;
                            }
                            fields |= SearchField::ALL[f].bit();
                            // avg[f] > 0 whenever some document has a token in f.
                            let norm = 1.0 - b + b * f64::from(len[f]) / avg[f];
                            weighted += weights[f] * f64::from(tf[f]) / norm;
                        }
                        let weight = if weighted > 0.0 {
                            weighted / (k1 + weighted)
                        } else {
                            0.0
                        };
                        Posting {
                            doc,
                            fields,
                            weight,
                        }
                    })
                    .collect()
            })
            .collect();

        Self {
            names: docs.into_iter().map(|d| d.name).collect(),
            terms,
            postings,
            idf,
            options,
        }
    }

    /// The options the index was built with.
    pub fn options(&self) -> &SearchOptions {
        &self.options
    }

    /// Number of indexed skills.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// `true` when no skill is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The indexed skills' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The `limit` best hits for `query`, best first; equal scores in name order.
    ///
    /// An empty query, a query of stop words only, a query with no indexed term
    /// or `limit == 0` give an empty vector.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        if limit == 0 || self.names.is_empty() {
            return Vec::new();
        }
        let mut query_terms: Vec<String> = Vec::new();
        Tokenizer::default().run(cut(query, MAX_QUERY_BYTES), |token| {
            if query_terms.len() < MAX_QUERY_TERMS && !query_terms.iter().any(|t| t == token) {
                query_terms.push(token.to_owned());
            }
        });
        let mut ids: Vec<(&str, u32)> = Vec::new();
        for term in &query_terms {
            if let Some((key, &id)) = self.terms.get_key_value(term.as_str()) {
                ids.push((key, id));
            }
        }
        // Sum in term order so the float result never depends on query order.
        ids.sort_unstable();

        let mut scores = vec![0.0f64; self.names.len()];
        let mut fields = vec![0u8; self.names.len()];
        let mut hit: Vec<u32> = Vec::new();
        for &(_, id) in &ids {
            let idf = self.idf[id as usize];
            for p in &self.postings[id as usize] {
                let doc = p.doc as usize;
                if fields[doc] == 0 {
                    hit.push(p.doc);
                }
                fields[doc] |= p.fields;
                scores[doc] += idf * p.weight;
            }
        }
        hit.retain(|&d| scores[d as usize] > 0.0);
        // Ids are in name order, so comparing ids breaks ties by name.
        let order = |a: &u32, b: &u32| {
            scores[*b as usize]
                .total_cmp(&scores[*a as usize])
                .then(a.cmp(b))
        };
        if hit.len() > limit {
            hit.select_nth_unstable_by(limit - 1, order);
            hit.truncate(limit);
        }
        hit.sort_unstable_by(order);
        hit.into_iter()
            .map(|d| {
                let d = d as usize;
                SearchHit {
                    name: self.names[d].clone(),
                    score: scores[d],
                    fields: SearchField::ALL
                        .into_iter()
                        .filter(|f| fields[d] & f.bit() != 0)
                        .collect(),
                }
            })
            .collect()
    }
}

/// The hasher of the term table: FxHash (as in rustc), a few lines by hand.
/// Building hashes every token (millions for a large library), and the default
/// SipHash made that the bottleneck. The table is never iterated, so results do
/// not depend on it; a crafted skill could at worst slow its own indexing.
type TermHasher = BuildHasherDefault<FxHasher>;

#[derive(Debug, Default)]
struct FxHasher(u64);

impl FxHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character
/// boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The tokens of `text`, in order, as the index sees them (duplicates kept).
///
/// ```
/// use skills_core::search_tokens as tokens;
/// assert_eq!(tokens("The PDF-Tools skill"), ["pdf-tool", "pdf", "tool", "skill"]);
/// assert_eq!(tokens("Café forms, QUERIES"), ["café", "form", "query"]);
/// ```
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    Tokenizer::default().run(text, |t| out.push(t.to_owned()));
    out
}

/// Reusable buffers for tokenizing.
#[derive(Debug, Default)]
struct Tokenizer {
    /// The normalized parts of the current word, back to back.
    parts: String,
    /// `(start, end, is a stop word)` of each part in `parts`.
    bounds: Vec<(usize, usize, bool)>,
    /// The whole compound word, parts joined with `-`.
    compound: String,
}

fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        c.is_alphanumeric() || c.general_category_group() == GeneralCategoryGroup::Mark
    }
}

fn is_connector(c: char) -> bool {
    c == '-' || c == '_'
}

impl Tokenizer {
    fn run(&mut self, text: &str, mut emit: impl FnMut(&str)) {
        let bytes = text.as_bytes();
        let mut start = None;
        let mut i = 0;
        while i < bytes.len() {
            // ASCII fast path; other characters are decoded.
            let (inside, width) = if bytes[i].is_ascii() {
                let b = bytes[i];
                (b.is_ascii_alphanumeric() || b == b'-' || b == b'_', 1)
            } else {
                let c = text[i..].chars().next().unwrap_or(' ');
                (is_word_char(c), c.len_utf8())
            };
            if inside {
                start.get_or_insert(i);
            } else if let Some(s) = start.take() {
                self.word(&text[s..i], &mut emit);
            }
            i += width;
        }
        if let Some(s) = start {
            self.word(&text[s..], &mut emit);
        }
    }

    /// One run of word characters and connectors.
    fn word(&mut self, run: &str, emit: &mut impl FnMut(&str)) {
        self.parts.clear();
        self.bounds.clear();
        for part in run.split(is_connector).filter(|p| !p.is_empty()) {
            let start = self.parts.len();
            normalize_into(part, &mut self.parts);
            // Stop words are matched before plural folding ("does" is not "doe").
            let stop = is_stop_word(&self.parts[start..]);
            if !stop {
                fold_plural(&mut self.parts, start);
            }
            if self.parts.len() > start {
                self.bounds.push((start, self.parts.len(), stop));
            }
        }
        if self.bounds.len() > 1 {
            self.compound.clear();
            for (i, &(s, e, _)) in self.bounds.iter().enumerate() {
                if i > 0 {
                    self.compound.push('-');
                }
                self.compound.push_str(&self.parts[s..e]);
            }
            if self.compound.len() <= MAX_TOKEN_BYTES {
                emit(&self.compound);
            }
        }
        for &(s, e, stop) in &self.bounds {
            let part = &self.parts[s..e];
            if part.len() <= MAX_TOKEN_BYTES && !stop {
                emit(part);
            }
        }
    }
}

/// A stop word (at most 5 ASCII bytes) packed into an integer, with its length.
const fn pack(word: &[u8]) -> u64 {
    let mut packed = word.len() as u64;
    let mut i = 0;
    while i < word.len() {
        packed = (packed << 8) | word[i] as u64;
        i += 1;
    }
    packed
}

/// [`STOP_WORDS`] packed, so a check is a scan of a few dozen integers.
const PACKED_STOP_WORDS: [u64; STOP_WORDS.len()] = {
    let mut out = [0; STOP_WORDS.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = pack(STOP_WORDS[i].as_bytes());
        i += 1;
    }
    out
};

fn is_stop_word(token: &str) -> bool {
    token.len() <= 5 && PACKED_STOP_WORDS.contains(&pack(token.as_bytes()))
}

/// Appends `part` lowercased (ASCII fast path; otherwise NFKC, then Unicode
/// lowercase, keeping only word characters).
fn normalize_into(part: &str, out: &mut String) {
    if part.is_ascii() {
        let start = out.len();
        out.push_str(part);
        out[start..].make_ascii_lowercase();
    } else {
        for c in part.nfkc().flat_map(char::to_lowercase) {
            if is_word_char(c) {
                out.push(c);
            }
        }
    }
}

/// Folds a plain English plural at the end of `out` (the token starts at
/// `start`): `-ies` → `-y`, `-s` → `` except after `s`, `u` or `i`. ASCII tokens
/// of four or more letters only.
fn fold_plural(out: &mut String, start: usize) {
    let token = &out[start..];
    if token.len() < 4 || !token.is_ascii() || !token.ends_with('s') {
        return;
    }
    if token.len() > 4 && token.ends_with("ies") {
        out.truncate(out.len() - 3);
        out.push('y');
        return;
    }
    let before = token.as_bytes()[token.len() - 2];
    if !matches!(before, b's' | b'u' | b'i') && !before.is_ascii_digit() {
        out.truncate(out.len() - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_and_packed() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| w.len() <= 5 && is_stop_word(w)));
        assert!(!is_stop_word("abou") && !is_stop_word("tha") && !is_stop_word(""));
    }

    #[test]
    fn plurals_fold() {
        assert_eq!(
            tokens("tables queries process status analysis pdfs gas"),
            [
                "table", "query", "process", "status", "analysis", "pdf", "gas"
            ]
        );
    }

    #[test]
    fn cut_respects_char_boundaries() {
        assert_eq!(cut("café", 4), "caf");
        assert_eq!(cut("abc", 10), "abc");
    }
}
