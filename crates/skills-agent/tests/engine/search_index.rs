//! The index behind `search_skills`: keyed by content (an edited body or doc
//! is re-indexed), built once per library version, shared by sessions and by
//! agents that share a cache, and single-flight (concurrent first searches
//! check and build once).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use async_trait::async_trait;
use serde_json::json;
use skills_agent::{Agent, Dispatch, SearchCache, Session};
use skills_core::{
    Catalog, Error, ErrorKind, InCodeSkill, LineRange, ResourceContent, Skill, SkillProvider,
    define_skill,
};

use super::support::{SetSkills, builder_with, call_ok, start_agent, swap_provider};

fn animals(care_body: &str, equids: &str) -> Vec<InCodeSkill> {
    vec![
        define_skill(
            "zebra-care",
            "Looks after striped animals. Use for feeding schedules.",
        )
        .body(care_body)
        .build()
        .expect("valid"),
        define_skill(
            "animal-facts",
            "Answers questions about wild animals. Use for trivia.",
        )
        .body("Keep answers short.")
        .resource("references/equids.md", equids)
        .build()
        .expect("valid"),
        define_skill(
            "git-helper",
            "Explains git commands. Use for version control.",
        )
        .body("Prefer rebase.")
        .build()
        .expect("valid"),
    ]
}

fn original() -> Vec<InCodeSkill> {
    animals("Feed twice a day.", "Horses and donkeys are equids.\n")
}

/// The skill names in a search result, in order.
fn hits(session: &mut Session, query: &str) -> Vec<String> {
    let text = call_ok(session, "search_skills", json!({ "query": query }));
    text.lines()
        .filter_map(|line| line.strip_prefix("<skill name=\""))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn an_edited_body_is_reindexed() {
    let (builder, provider) = builder_with(original());
    let agent = builder.search(true).build().expect("builds");
    let mut session = start_agent(&agent);
    assert!(hits(&mut session, "quagga").is_empty());
    // Same metadata, new body: the catalog does not change.
    provider.set_skills(animals(
        "Feed twice a day. Quagga foals need extra hay.",
        "Horses and donkeys are equids.\n",
    ));
    let delta = pollster::block_on(session.refresh_catalog()).expect("lists");
    assert_eq!(delta, None, "the catalog is unchanged");
    assert_eq!(hits(&mut session, "quagga"), ["zebra-care"]);
    // A session started now sees the edit too.
    let mut fresh = start_agent(&agent);
    assert_eq!(hits(&mut fresh, "quagga"), ["zebra-care"]);
    assert_eq!(agent.search_cache().builds(), 2);
}

#[test]
fn an_edited_doc_is_reindexed() {
    let (builder, provider) = builder_with(original());
    let agent = builder.search(true).build().expect("builds");
    let mut session = start_agent(&agent);
    assert!(hits(&mut session, "okapi").is_empty());
    provider.set_skills(animals(
        "Feed twice a day.",
        "Horses, donkeys and the okapi's cousins are equids.\n",
    ));
    pollster::block_on(session.refresh_catalog()).expect("lists");
    assert_eq!(hits(&mut session, "okapi"), ["animal-facts"]);
}

#[test]
fn an_unchanged_library_is_checked_but_not_rebuilt() {
    let (builder, provider) = builder_with(original());
    let agent = builder.search(true).build().expect("builds");
    let mut session = start_agent(&agent);
    hits(&mut session, "zebra");
    provider.set_skills(original());
    pollster::block_on(session.refresh_catalog()).expect("lists");
    hits(&mut session, "zebra");
    assert_eq!(agent.search_cache().checks(), 2);
    assert_eq!(agent.search_cache().builds(), 1);
}

/// Yields once before completing, so concurrent futures interleave.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Counts `get` and `read_resource` calls; every call yields once first.
/// While `failing` is set, `get` fails with an I/O error.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn SkillProvider>,
    gets: AtomicUsize,
    reads: AtomicUsize,
    failing: AtomicBool,
}

impl Counting {
    fn new(skills: Vec<InCodeSkill>) -> Arc<Self> {
        Arc::new(Self {
            inner: swap_provider(skills),
            gets: AtomicUsize::new(0),
            reads: AtomicUsize::new(0),
            failing: AtomicBool::new(false),
        })
    }

    fn gets(&self) -> usize {
        self.gets.load(Ordering::SeqCst)
    }

    fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl SkillProvider for Counting {
    async fn list(&self) -> skills_core::Result<Catalog> {
        self.inner.list().await
    }

    async fn get(&self, name: &str) -> skills_core::Result<Arc<Skill>> {
        self.gets.fetch_add(1, Ordering::SeqCst);
        YieldOnce(false).await;
        if self.failing.load(Ordering::SeqCst) {
            return Err(Error::new(ErrorKind::Io, "disk unplugged"));
        }
        self.inner.get(name).await
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> skills_core::Result<ResourceContent> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        YieldOnce(false).await;
        self.inner.read_resource(name, path, range).await
    }
}

fn search_agent(provider: &Arc<Counting>, cache: Option<Arc<SearchCache>>) -> Agent {
    let mut builder =
        Agent::builder("assistant", provider.clone() as Arc<dyn SkillProvider>).search(true);
    if let Some(cache) = cache {
        builder = builder.search_cache(cache);
    }
    builder.build().expect("builds")
}

#[test]
fn sessions_share_one_build() {
    let provider = Counting::new(original());
    let agent = search_agent(&provider, None);
    let mut first = start_agent(&agent);
    let mut second = start_agent(&agent);
    assert_eq!(hits(&mut first, "zebra"), ["zebra-care"]);
    assert_eq!(provider.gets(), 3, "one get per skill");
    // In-code docs have sizes, so the check reads none; the build reads the
    // one doc once.
    assert_eq!(provider.reads(), 1);
    let reads_after_build = provider.reads();
    // The second session started before the check: it reuses it.
    assert_eq!(hits(&mut second, "zebra"), ["zebra-care"]);
    assert_eq!(hits(&mut first, "equids"), ["animal-facts"]);
    assert_eq!(provider.gets(), 3, "no fetch for later searches");
    assert_eq!(provider.reads(), reads_after_build);
    assert_eq!(agent.search_cache().builds(), 1);
}

#[test]
fn agents_sharing_a_cache_share_one_build() {
    let provider = Counting::new(original());
    let cache = Arc::new(SearchCache::new());
    let one = search_agent(&provider, Some(cache.clone()));
    let two = search_agent(&provider, Some(cache.clone()));
    let mut first = start_agent(&one);
    let mut second = start_agent(&two);
    hits(&mut first, "zebra");
    hits(&mut second, "zebra");
    assert_eq!(provider.gets(), 3);
    assert_eq!(cache.builds(), 1);
    // A session that starts later checks the library again (3 gets), but
    // the content is the same: no doc is read and nothing is built.
    let reads = provider.reads();
    let mut third = start_agent(&two);
    hits(&mut third, "zebra");
    assert_eq!(provider.gets(), 6);
    assert_eq!(provider.reads(), reads);
    assert_eq!(cache.builds(), 1);
    assert_eq!(cache.checks(), 2);
}

#[test]
fn concurrent_first_searches_build_once() {
    let provider = Counting::new(original());
    let agent = search_agent(&provider, None);
    let mut sessions: Vec<Session> = (0..4).map(|_| start_agent(&agent)).collect();
    let calls: Vec<_> = (0..4)
        .map(|i| {
            skills_agent::ToolCall::new(
                format!("c{i}"),
                "search_skills",
                json!({"query": "equids zebra"}),
            )
        })
        .collect();
    let results = pollster::block_on(futures_util::future::join_all(
        sessions
            .iter_mut()
            .zip(&calls)
            .map(|(session, call)| session.handle_tool_call(call)),
    ));
    for result in results {
        let Dispatch::Handled(message) = result else {
            panic!("search is a skill tool");
        };
        assert!(
            message.content.contains("animal-facts"),
            "{}",
            message.content
        );
    }
    assert_eq!(provider.gets(), 3, "one check for four concurrent searches");
    assert_eq!(agent.search_cache().checks(), 1);
    assert_eq!(agent.search_cache().builds(), 1);
}

#[test]
fn a_provider_failure_falls_back_to_metadata_and_recovers() {
    let provider = Counting::new(original());
    let agent = search_agent(&provider, None);
    provider.failing.store(true, Ordering::SeqCst);
    let mut session = start_agent(&agent);
    // The description is still indexed; the body ("twice") is not.
    assert_eq!(hits(&mut session, "feeding schedules"), ["zebra-care"]);
    assert!(hits(&mut session, "twice").is_empty());
    provider.failing.store(false, Ordering::SeqCst);
    pollster::block_on(session.refresh_catalog()).expect("lists");
    assert_eq!(hits(&mut session, "twice"), ["zebra-care"]);
    assert_eq!(agent.search_cache().builds(), 2);
}
