//! The search index behind `search_skills` (F-DIS-12): keyed by content, built
//! once per library version, shared between sessions and agents, single-flight.
//!
//! A [`SearchCache`] holds the indexes. Every agent has one (its own by default;
//! [`AgentBuilder::search_cache`](crate::AgentBuilder::search_cache) shares one
//! between agents over the same provider, e.g. the per-request agents of a
//! server).
//!
//! # When the library is checked
//! A session looks at the library when it starts and when it refreshes its
//! catalog. Its first search after such a look *checks* the library: it fetches
//! every skill of its catalog (16 at a time) and hashes each skill's metadata,
//! body and file listing (paths and sizes; the text of a doc whose size the
//! provider does not report). The hashes together are the library *version*:
//!
//! * a check that started after the session's last look answers for it, so
//!   sessions that started before a check reuse it without fetching anything,
//!   and concurrent first searches share one check (one shared future);
//! * an index is built only for a version not seen before (the docs are read
//!   then, 16 skills at a time); an edited body, doc listing or doc size gives a
//!   new version and a new index, an unchanged library reuses the index.
//!
//! A skill that cannot be fetched is indexed from its metadata alone (and
//! counted in the version as such, so it is indexed fully once it can be).
//!
//! No runtime is needed: the shared future is driven by whichever search awaits
//! it, so this builds for `wasm32-unknown-unknown`.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::future::{FutureExt, Shared};
use futures_util::stream::{self, StreamExt};
use skills_core::{Catalog, SearchDocument, SearchIndex, Skill, SkillMetadata, SkillProvider};
use tracing::Instrument as _;

/// Skills fetched (or docs read) at the same time while checking or building.
pub const FETCH_CONCURRENCY: usize = 16;
/// Most bytes of one doc read into the index.
pub const SEARCH_REFERENCE_BYTES: usize = 64 * 1024;
/// Checks remembered (the latest per provider and catalog).
const MAX_CHECKS: usize = 4;
/// Indexes remembered (by version).
const MAX_INDEXES: usize = 2;

/// The boxed check future: `Send` on native targets; on `wasm32` providers'
/// futures need not be `Send`, so neither is this one.
#[cfg(not(target_arch = "wasm32"))]
type CheckFuture = futures_util::future::BoxFuture<'static, Arc<SearchIndex>>;
#[cfg(target_arch = "wasm32")]
type CheckFuture = futures_util::future::LocalBoxFuture<'static, Arc<SearchIndex>>;

/// Boxes a check future for [`CheckFuture`].
#[cfg(not(target_arch = "wasm32"))]
fn box_check(
    future: impl std::future::Future<Output = Arc<SearchIndex>> + Send + 'static,
) -> CheckFuture {
    future.boxed()
}
#[cfg(target_arch = "wasm32")]
fn box_check(future: impl std::future::Future<Output = Arc<SearchIndex>> + 'static) -> CheckFuture {
    future.boxed_local()
}

type SharedIndex = Shared<CheckFuture>;

/// One check of the library: started at `epoch` over a provider's catalog.
struct Check {
    provider: usize,
    fingerprint: u64,
    epoch: u64,
    index: SharedIndex,
}

#[derive(Default)]
struct State {
    checks: Vec<Check>,
    indexes: Vec<(u64, Arc<SearchIndex>)>,
}

/// The search indexes of one or more agents, keyed by content.
///
/// A session's first search after it looked at the library (at start and at
/// each catalog refresh) checks the library: it fetches every skill (16 at a
/// time) and hashes metadata, body and file listing into a version. An index is
/// built once per version and shared by every session (and, through
/// [`AgentBuilder::search_cache`](crate::AgentBuilder::search_cache), every
/// agent) that uses this cache; concurrent first searches share one check.
/// No runtime is needed, so this works on `wasm32-unknown-unknown`.
/// Cheap to share (`Arc<SearchCache>`).
pub struct SearchCache {
    state: Mutex<State>,
    epoch: AtomicU64,
    checks: AtomicU64,
    builds: AtomicU64,
}

impl fmt::Debug for SearchCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SearchCache")
            .field("checks", &self.checks())
            .field("builds", &self.builds())
            .finish_non_exhaustive()
    }
}

impl Default for SearchCache {
    fn default() -> Self {
        Self::new()
    }
}

impl SearchCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self {
            state: Mutex::new(State::default()),
            epoch: AtomicU64::new(0),
            checks: AtomicU64::new(0),
            builds: AtomicU64::new(0),
        }
    }

    /// How many times the library was checked (every skill fetched).
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    /// How many indexes were built.
    pub fn builds(&self) -> u64 {
        self.builds.load(Ordering::Relaxed)
    }

    /// The mark to take just before listing the provider (a session does,
    /// and so does a caller of [`Library::search`](crate::Library::search)):
    /// checks started after it answer for that listing.
    pub fn mark(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// The index for `catalog` as of a listing taken at `listed_at`: an
    /// existing check newer than the listing (finished or in flight), or a new
    /// check shared with every search that comes while it runs.
    pub(crate) async fn index(
        self: &Arc<Self>,
        provider: &Arc<dyn SkillProvider>,
        catalog: &Catalog,
        listed_at: u64,
    ) -> Arc<SearchIndex> {
        let provider_id = Arc::as_ptr(provider).cast::<()>() as usize;
        let fingerprint = catalog.fingerprint();
        let shared = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let found = state
                .checks
                .iter()
                .find(|c| {
                    c.provider == provider_id && c.fingerprint == fingerprint && c.epoch > listed_at
                })
                .map(|c| c.index.clone());
            match found {
                Some(shared) => shared,
                None => {
                    let epoch = self.epoch.fetch_add(1, Ordering::SeqCst) + 1;
                    self.checks.fetch_add(1, Ordering::Relaxed);
                    let future = box_check(check(
                        Arc::clone(self),
                        Arc::clone(provider),
                        catalog.clone(),
                        epoch,
                    ))
                    .shared();
                    state
                        .checks
                        .retain(|c| !(c.provider == provider_id && c.fingerprint == fingerprint));
                    if state.checks.len() >= MAX_CHECKS {
                        state.checks.remove(0);
                    }
                    state.checks.push(Check {
                        provider: provider_id,
                        fingerprint,
                        epoch,
                        index: future.clone(),
                    });
                    future
                }
            }
        };
        shared.await
    }

    fn cached(&self, version: u64) -> Option<Arc<SearchIndex>> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state
            .indexes
            .iter()
            .find(|(v, _)| *v == version)
            .map(|(_, index)| Arc::clone(index))
    }

    fn store(&self, version: u64, index: &Arc<SearchIndex>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.indexes.retain(|(v, _)| *v != version);
        if state.indexes.len() >= MAX_INDEXES {
            state.indexes.remove(0);
        }
        state.indexes.push((version, Arc::clone(index)));
    }
}

/// One skill as fetched by a check.
struct Fetched {
    /// Its document so far (no doc texts yet), or the metadata-only one.
    document: SearchDocument,
    /// Its docs with the text when it was read for the key, in path order.
    docs: Vec<(String, Option<String>)>,
    /// The hash of everything the check saw.
    key: u64,
}

/// Checks the library and returns the index of its version.
async fn check(
    cache: Arc<SearchCache>,
    provider: Arc<dyn SkillProvider>,
    catalog: Catalog,
    epoch: u64,
) -> Arc<SearchIndex> {
    let span = tracing::debug_span!(
        "skills.search_index",
        epoch,
        skills = catalog.len(),
        version = tracing::field::Empty,
        built = tracing::field::Empty,
        bytes = tracing::field::Empty,
    );
    async move {
        let fetched: Vec<Fetched> = stream::iter(catalog.entries().iter().cloned())
            .map(|meta| fetch(&provider, meta))
            .buffered(FETCH_CONCURRENCY)
            .collect()
            .await;
        let mut version = Fnv::new();
        for (meta, skill) in catalog.entries().iter().zip(&fetched) {
            version.feed(meta.name.as_str().as_bytes());
            version.feed(&skill.key.to_le_bytes());
        }
        let version = version.finish();
        let span = tracing::Span::current();
        span.record("version", version);
        if let Some(index) = cache.cached(version) {
            span.record("built", false);
            return index;
        }
        let documents: Vec<SearchDocument> = stream::iter(fetched)
            .map(|skill| complete(&provider, skill))
            .buffered(FETCH_CONCURRENCY)
            .collect()
            .await;
        let bytes: usize = documents
            .iter()
            .map(|d| {
                d.description.len()
                    + d.body.len()
                    + d.references.iter().map(|(_, t)| t.len()).sum::<usize>()
            })
            .sum();
        let index = Arc::new(SearchIndex::build(documents));
        cache.builds.fetch_add(1, Ordering::Relaxed);
        cache.store(version, &index);
        span.record("built", true);
        span.record("bytes", bytes);
        index
    }
    .instrument(span)
    .await
}

/// Fetches one skill and hashes what the check sees of it.
async fn fetch(provider: &Arc<dyn SkillProvider>, meta: SkillMetadata) -> Fetched {
    let name = meta.name.as_str().to_owned();
    let skill = match provider.get(&name).await {
        Ok(skill) => skill,
        Err(err) => {
            tracing::debug!(skill = %name, error = %err, "search index: skill unavailable, indexing its metadata");
            let mut key = Fnv::new();
            key.feed(b"unavailable");
            feed_metadata(&mut key, &meta);
            return Fetched {
                document: SearchDocument::from_metadata(&meta),
                docs: Vec::new(),
                key: key.finish(),
            };
        }
    };
    let mut key = Fnv::new();
    key.feed(b"skill");
    feed_skill(&mut key, &skill);
    let mut docs = Vec::new();
    for doc in skills_core::list_docs(&skill) {
        let size = skill
            .resources
            .entries
            .iter()
            .find(|e| e.path == doc)
            .and_then(|e| e.size);
        // Without a size, only the text tells whether the doc changed.
        let text = match size {
            Some(_) => None,
            None => {
                let text = read_doc(provider, &name, doc.as_str()).await;
                key.feed(doc.as_str().as_bytes());
                key.feed(text.as_deref().unwrap_or("\u{0}unreadable").as_bytes());
                text.or(Some(String::new()))
            }
        };
        docs.push((doc.as_str().to_owned(), text));
    }
    Fetched {
        document: SearchDocument::from_skill(&skill),
        docs,
        key: key.finish(),
    }
}

/// Adds the doc texts to a fetched skill's document.
async fn complete(provider: &Arc<dyn SkillProvider>, skill: Fetched) -> SearchDocument {
    let mut document = skill.document;
    for (path, text) in skill.docs {
        let text = match text {
            Some(text) => Some(text),
            None => read_doc(provider, &document.name, &path).await,
        };
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            document = document.with_reference(path, text);
        }
    }
    document
}

/// The first [`SEARCH_REFERENCE_BYTES`] of a doc, or `None` when it cannot be
/// read.
async fn read_doc(provider: &Arc<dyn SkillProvider>, skill: &str, path: &str) -> Option<String> {
    match provider.read_resource(skill, path, None).await {
        Ok(content) => {
            let mut text = content.text;
            if text.len() > SEARCH_REFERENCE_BYTES {
                let mut cut = SEARCH_REFERENCE_BYTES;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
            }
            Some(text)
        }
        Err(err) => {
            tracing::debug!(skill, path, error = %err, "search index: doc unreadable, left out");
            None
        }
    }
}

fn feed_metadata(key: &mut Fnv, meta: &SkillMetadata) {
    key.feed(meta.name.as_str().as_bytes());
    key.feed(meta.description.as_bytes());
    key.feed(meta.raw_frontmatter.as_bytes());
    for tool in &meta.declared_tools {
        key.feed(tool.as_bytes());
    }
}

fn feed_skill(key: &mut Fnv, skill: &Skill) {
    feed_metadata(key, &skill.metadata);
    key.feed(skill.body.as_bytes());
    for entry in &skill.resources.entries {
        key.feed(entry.path.as_str().as_bytes());
        match entry.size {
            Some(size) => key.feed(&size.to_le_bytes()),
            None => key.feed(b"?"),
        }
    }
    key.feed(&(skill.resources.omitted as u64).to_le_bytes());
}

/// 64-bit FNV-1a with a separator after each field: a change detector, not a
/// security hash.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn feed(&mut self, bytes: &[u8]) {
        const PRIME: u64 = 0x0000_0100_0000_01b3;
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(PRIME);
        }
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(PRIME);
        // The length too, so field boundaries cannot shift.
        for b in (bytes.len() as u64).to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
