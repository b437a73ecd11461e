//! The `workspace.*` spans (F-EXE-10) of a real run, captured with a real
//! subscriber, in the local runtime and in the sandbox: their names, which
//! span each opens under, and the fields a log needs (session, skill,
//! runtime, counts).

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use skills_exec::{CommandPolicy, LocalRuntime};
use skills_workspace::{InputSpec, RunRequest, WorkspaceRuntime};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

use crate::common::{generated_skill, sid};

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
        self.0.lock().unwrap().push(Closed {
            name: span.name(),
            parent: span.parent().map(|p| p.name()),
            fields,
        });
    }
}

/// Every span the run below must open.
const EXPECTED: [&str; 7] = [
    "workspace.create",
    "workspace.stage.skill",
    "workspace.run",
    "workspace.stage.inputs",
    "workspace.collect",
    "workspace.inline",
    "workspace.cleanup",
];

/// Stages a skill, runs a command with a `host://` input and an output
/// glob, cleans up: all under a `test.root` span, on a current-thread tokio
/// runtime inside a collecting subscriber (set for this thread only, so
/// other tests' spans stay out). Another test thread may register a
/// callsite while the subscriber is being set and cache "never" for it (a
/// known race in tracing-core's interest cache): when a span is missing the
/// run is tried again, up to five times; a span the code never opens is
/// missing every time and still fails the test.
/// Builds a runtime with its root and the allowed host-input folder, on the
/// capture's tokio runtime (the container runtime's client lives there).
type Build = dyn Fn(PathBuf, PathBuf) -> Pin<Box<dyn Future<Output = Arc<dyn WorkspaceRuntime>>>>;

fn capture(dir: &Path, build: &Build) -> Vec<Closed> {
    let host = dir.join("host");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("in.txt"), "input\n").unwrap();
    let skill = generated_skill(dir, "traced");
    let mut spans = Vec::new();
    for attempt in 0..5 {
        let root_dir = dir.join(format!("ws{attempt}"));
        let collect = Collect::default();
        let subscriber = tracing_subscriber::registry().with(collect.clone());
        tracing::subscriber::with_default(subscriber, || {
            tracing::callsite::rebuild_interest_cache();
            let tokio = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let root = tracing::info_span!("test.root");
            tokio.block_on(tracing::Instrument::instrument(
                async {
                    let rt = build(root_dir, host.clone()).await;
                    let session = sid("traced-session");
                    rt.stage_skill(&session, &skill).await.unwrap();
                    let input = format!("host://{}", host.join("in.txt").display());
                    let r = rt
                        .run(
                            &session,
                            &RunRequest::new("traced", "cp $WORK_DIR/inputs/in.txt out/copy.txt")
                                .input(InputSpec::new(input))
                                .output_file("out/*.txt"),
                        )
                        .await
                        .unwrap();
                    assert!(r.success(), "{r:?}");
                    assert_eq!(r.output_files.len(), 1, "{r:?}");
                    rt.cleanup(&session).await.unwrap();
                },
                root,
            ));
        });
        spans = collect.0.lock().unwrap().clone();
        if EXPECTED
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

/// Checks names, parents and fields; `runtime` is the runtime's name.
fn check(spans: &[Closed], runtime: &str) {
    let session = "traced-session";
    let field = |span: &Closed, key: &str| {
        span.fields
            .get(key)
            .cloned()
            .unwrap_or_else(|| panic!("{} has no field {key}: {span:?}", span.name))
    };
    let create = find(spans, "workspace.create");
    assert_eq!(create.parent, Some("test.root"), "{create:?}");
    assert_eq!(field(create, "session"), session);
    assert_eq!(field(create, "runtime"), runtime);
    let stage = find(spans, "workspace.stage.skill");
    assert_eq!(stage.parent, Some("test.root"), "{stage:?}");
    assert_eq!(field(stage, "session"), session);
    assert_eq!(field(stage, "skill"), "traced");
    let run = find(spans, "workspace.run");
    assert_eq!(run.parent, Some("test.root"), "{run:?}");
    assert_eq!(field(run, "session"), session);
    assert_eq!(field(run, "skill"), "traced");
    assert_eq!(field(run, "runtime"), runtime);
    let inputs = find(spans, "workspace.stage.inputs");
    assert_eq!(inputs.parent, Some("workspace.run"), "{inputs:?}");
    assert_eq!(field(inputs, "count"), "1");
    let collect = find(spans, "workspace.collect");
    assert_eq!(collect.parent, Some("workspace.run"), "{collect:?}");
    assert_eq!(field(collect, "session"), session);
    let inline = find(spans, "workspace.inline");
    assert_eq!(inline.parent, Some("workspace.collect"), "{inline:?}");
    assert_eq!(field(inline, "files"), "1");
    let cleanup = find(spans, "workspace.cleanup");
    assert_eq!(cleanup.parent, Some("test.root"), "{cleanup:?}");
    assert_eq!(field(cleanup, "session"), session);
    // Each step once: the run's own steps are not repeated.
    for name in EXPECTED {
        let n = spans.iter().filter(|s| s.name == name).count();
        assert_eq!(n, 1, "{name} closed {n} times: {spans:#?}");
    }
}

#[test]
fn local_run_has_the_workspace_spans() {
    let dir = tempfile::tempdir().unwrap();
    let spans = capture(dir.path(), &|ws, host| {
        Box::pin(async move {
            Arc::new(
                LocalRuntime::builder(ws)
                    .policy(CommandPolicy::unrestricted())
                    .allow_host_inputs(host)
                    .build()
                    .unwrap(),
            ) as Arc<dyn WorkspaceRuntime>
        })
    });
    check(&spans, "local");
}

#[test]
fn sandbox_run_has_the_workspace_spans() {
    let dir = tempfile::tempdir().unwrap();
    crate::sandbox::traversable(dir.path());
    let spans = capture(dir.path(), &|ws, host| {
        Box::pin(async move {
            Arc::new(
                skills_exec::SandboxRuntime::builder(ws)
                    .policy(CommandPolicy::unrestricted())
                    .sandbox_options(crate::sandbox::options(false))
                    .allow_host_inputs(host)
                    .build_sandbox()
                    .unwrap_or_else(|e| panic!("the sandbox cannot run on this machine: {e}")),
            ) as Arc<dyn WorkspaceRuntime>
        })
    });
    check(&spans, "sandbox");
}

/// The container runtime opens the same spans, and its own under the run:
/// the container's creation, start and removal.
#[cfg(feature = "container")]
#[test]
fn container_run_has_the_workspace_spans() {
    let dir = tempfile::tempdir().unwrap();
    let spans = capture(dir.path(), &|ws, host| {
        Box::pin(async move {
            Arc::new(crate::common::container_runtime(&ws, |b| b.allow_host_inputs(&host)).await)
                as Arc<dyn WorkspaceRuntime>
        })
    });
    check(&spans, "container");
    for name in [
        "workspace.container.create",
        "workspace.container.start",
        "workspace.container.remove",
    ] {
        let span = find(&spans, name);
        assert_eq!(span.parent, Some("workspace.run"), "{span:?}");
    }
}
