//! Spans: request builds, tool dispatch and every operation carry the fields
//! a log needs (skill, path, bytes), and the search index build reports what
//! it did. Captured with a real subscriber.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::json;
use skills_agent::Surface;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

use super::support::{builder, call_err, call_ok, start, user};

/// A closed span: its name, fields and parent's name.
#[derive(Debug, Clone)]
struct Closed {
    name: &'static str,
    parent: Option<&'static str>,
    fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// Collects every span with its fields when it closes.
#[derive(Clone, Default)]
struct Collect(Arc<Mutex<Vec<Closed>>>);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Collect {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(fields);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(fields) = span.extensions_mut().get_mut::<Fields>()
        {
            values.record(fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let fields = span
            .extensions()
            .get::<Fields>()
            .map(|f| f.0.clone())
            .unwrap_or_default();
        self.0.lock().expect("not poisoned").push(Closed {
            name: span.name(),
            parent: span.parent().map(|p| p.name()),
            fields,
        });
    }
}

/// Runs `run` under a collecting subscriber and returns the spans that
/// closed. Another test thread may register a callsite while this
/// subscriber is being registered and cache "never" for it before seeing the
/// subscriber (a known race in tracing-core's interest cache; rebuilding the
/// cache once inside narrows it but cannot close it). So when a span named
/// in `expected` is missing, the run is tried again, up to five times: a
/// span the code never opens is missing every time and still fails the test.
fn capture(expected: &[&str], mut run: impl FnMut()) -> Vec<Closed> {
    let mut spans = Vec::new();
    for _ in 0..5 {
        let collect = Collect::default();
        let subscriber = tracing_subscriber::registry().with(collect.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::callsite::rebuild_interest_cache();
            run()
        });
        spans = collect.0.lock().expect("not poisoned").clone();
        if expected
            .iter()
            .all(|name| spans.iter().any(|s| s.name == *name))
        {
            break;
        }
    }
    spans
}

fn find<'a>(spans: &'a [Closed], name: &str) -> &'a Closed {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span {name} in {spans:#?}"))
}

#[test]
fn operations_have_spans_with_skill_path_and_bytes() {
    let mut read_text = String::new();
    let mut load_text = String::new();
    let mut search_text = String::new();
    let expected = [
        "skills.start_session",
        "skills.build_request",
        "skills.load",
        "skills.read_file",
        "skills.search",
        "skills.search_index",
        "skills.tool_call",
        "skills.compact",
    ];
    let spans = capture(&expected, || {
        let mut session = start(builder().search(true));
        user(&mut session, "fill the form");
        session.build_request();
        load_text = call_ok(&mut session, "load_skill", json!({"name": "pdf-forms"}));
        read_text = call_ok(
            &mut session,
            "read_skill_file",
            json!({"skill": "pdf-forms", "path": "references/fields.md"}),
        );
        search_text = call_ok(
            &mut session,
            "search_skills",
            json!({"query": "csv report"}),
        );
        call_err(&mut session, "load_skill", json!({"name": "no-such-skill"}));
        session.compact("summary");
    });

    let start = find(&spans, "skills.start_session");
    assert_eq!(start.fields["skills"], "4", "{start:?}");

    let request = find(&spans, "skills.build_request");
    assert_eq!(request.fields["messages"], "1", "{request:?}");
    assert!(request.fields["bytes"].parse::<usize>().expect("number") > 0);

    let load = find(&spans, "skills.load");
    assert_eq!(load.fields["skill"], "pdf-forms");
    assert_eq!(load.fields["bytes"], load_text.len().to_string());
    assert_eq!(load.parent, Some("skills.tool_call"));

    let read = find(&spans, "skills.read_file");
    assert_eq!(read.fields["skill"], "pdf-forms");
    assert_eq!(read.fields["path"], "references/fields.md");
    assert_eq!(read.fields["bytes"], read_text.len().to_string());

    let search = find(&spans, "skills.search");
    assert_eq!(search.fields["query_bytes"], "10");
    let hits = search_text.matches("<skill name=").count();
    assert!(hits > 0, "{search_text}");
    assert_eq!(search.fields["hits"], hits.to_string(), "{search:?}");
    let index = find(&spans, "skills.search_index");
    assert_eq!(index.fields["built"], "true", "{index:?}");
    assert_eq!(index.parent, Some("skills.search"));

    let calls: Vec<&Closed> = spans
        .iter()
        .filter(|s| s.name == "skills.tool_call")
        .collect();
    assert_eq!(calls.len(), 4);
    let failed = calls
        .iter()
        .find(|c| c.fields.get("is_error").map(String::as_str) == Some("true"))
        .expect("the unknown skill is an error result");
    assert_eq!(failed.fields["tool"], "load_skill");

    let compact = find(&spans, "skills.compact");
    assert_eq!(compact.fields["reattached"], "1", "{compact:?}");
}

#[test]
fn doc_operations_have_spans() {
    let expected = [
        "skills.list_docs",
        "skills.select_docs",
        "skills.list_tools",
        "skills.list",
        "skills.refresh_catalog",
    ];
    let spans = capture(&expected, || {
        let mut session = start(builder().surface(Surface::Trpc));
        call_ok(&mut session, "skill_load", json!({"skill": "pdf-forms"}));
        call_ok(
            &mut session,
            "skill_list_docs",
            json!({"skill": "pdf-forms"}),
        );
        call_ok(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-forms", "docs": ["references/fields.md"]}),
        );
        call_ok(
            &mut session,
            "skill_list_tools",
            json!({"skill": "pdf-forms"}),
        );
        call_ok(&mut session, "skill_list", json!({}));
        pollster::block_on(session.refresh_catalog()).expect("lists");
    });
    assert_eq!(
        find(&spans, "skills.list_docs").fields["skill"],
        "pdf-forms"
    );
    let select = find(&spans, "skills.select_docs");
    assert_eq!(select.fields["skill"], "pdf-forms");
    assert_eq!(select.fields["docs"], "1");
    assert_eq!(
        find(&spans, "skills.list_tools").fields["skill"],
        "pdf-forms"
    );
    assert!(find(&spans, "skills.list").fields.contains_key("bytes"));
    assert_eq!(
        find(&spans, "skills.refresh_catalog").fields["changed"],
        "false"
    );
}
