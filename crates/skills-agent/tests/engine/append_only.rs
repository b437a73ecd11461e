//! Property tests: in the default mode every request extends the previous one,
//! and after every step the loaded set is a pure replay of the transcript.

use proptest::prelude::*;
use serde_json::{Value, json};
use skills_agent::{Lifetime, LoadState, Session, Surface};
use skills_core::collect_loaded_skill_names;

use super::support::{assert_extends, builder_with, call, full_library, reply, start, user};

/// Skill names the model and the user use: known, hidden, not user-invocable
/// and unknown.
const NAMES: [&str; 7] = [
    "pdf-forms",
    "csv-report",
    "weather",
    "git-commit",
    "deploy-prod",
    "internal-notes",
    "no-such-skill",
];

/// Paths for `read_skill_file`: valid for some skills, missing, traversal.
const PATHS: [&str; 6] = [
    "references/fields.md",
    "references/columns.md",
    "scripts/fill.py",
    "missing.md",
    "../../etc/passwd",
    "references/../../../outside.md",
];

/// Doc names for the trpc doc tools: real, ambiguous, unknown.
const DOCS: [&str; 5] = [
    "references/fields.md",
    "references/signing.md",
    "references/columns.md",
    "fields.md",
    "nope.md",
];

const MODES: [&str; 3] = ["add", "replace", "clear"];

#[derive(Debug, Clone)]
enum Op {
    /// A user turn, optionally mentioning `$NAMES[i]`.
    User(Option<usize>),
    /// The model loads `NAMES[skill]` (trpc: optionally with `DOCS[doc]`).
    Load { skill: usize, doc: Option<usize> },
    /// The model reads `PATHS[path]` of `NAMES[skill]`, maybe a line range.
    Read {
        skill: usize,
        path: usize,
        range: Option<(usize, usize)>,
    },
    /// trpc: the model selects docs (`MODES[mode]`).
    SelectDocs {
        skill: usize,
        docs: Vec<usize>,
        all: bool,
        mode: usize,
    },
    /// trpc: the model lists a skill's docs.
    ListDocs(usize),
    /// The model answers without calling a tool.
    Assistant,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let name = 0..NAMES.len();
    prop_oneof![
        3 => proptest::option::weighted(0.5, 0..NAMES.len()).prop_map(Op::User),
        4 => (name.clone(), proptest::option::weighted(0.3, 0..DOCS.len()))
            .prop_map(|(skill, doc)| Op::Load { skill, doc }),
        2 => (
            name.clone(),
            0..PATHS.len(),
            proptest::option::weighted(0.3, (0usize..4, 0usize..5))
        )
            .prop_map(|(skill, path, range)| Op::Read { skill, path, range }),
        2 => (
            name.clone(),
            proptest::collection::vec(0..DOCS.len(), 0..3),
            proptest::bool::weighted(0.2),
            0..MODES.len()
        )
            .prop_map(|(skill, docs, all, mode)| Op::SelectDocs {
                skill,
                docs,
                all,
                mode
            }),
        1 => name.prop_map(Op::ListDocs),
        2 => Just(Op::Assistant),
    ]
}

fn ops_strategy() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op_strategy(), 1..28)
}

#[derive(Debug, Clone, Copy)]
enum Config {
    Default,
    Turn,
    Once,
    Cap2,
}

fn session_for(trpc: bool, config: Config) -> Session {
    let (mut builder, _provider) = builder_with(full_library());
    if trpc {
        builder = builder.surface(Surface::Trpc);
    }
    builder = match config {
        Config::Default => builder,
        Config::Turn => builder.lifetime(Lifetime::Turn),
        Config::Once => builder.lifetime(Lifetime::Once),
        Config::Cap2 => builder.max_loaded(2),
    };
    start(builder)
}

fn apply(session: &mut Session, op: &Op, trpc: bool) {
    match op {
        Op::User(None) => user(session, "Please help with the next part."),
        Op::User(Some(i)) => user(session, &format!("Use ${} for this, please.", NAMES[*i])),
        Op::Load { skill, doc } => {
            if trpc {
                let mut args = json!({"skill": NAMES[*skill]});
                if let Some(d) = doc {
                    args["docs"] = json!([DOCS[*d]]);
                }
                call(session, "skill_load", args);
            } else {
                call(session, "load_skill", json!({"name": NAMES[*skill]}));
            }
        }
        Op::Read { skill, path, range } => {
            let mut args = json!({"skill": NAMES[*skill], "path": PATHS[*path]});
            if let Some((start, end)) = range {
                args["start_line"] = json!(start);
                args["end_line"] = json!(end);
            }
            call(session, "read_skill_file", args);
        }
        Op::SelectDocs {
            skill,
            docs,
            all,
            mode,
        } => {
            let docs: Vec<Value> = docs.iter().map(|d| json!(DOCS[*d])).collect();
            call(
                session,
                "skill_select_docs",
                json!({
                    "skill": NAMES[*skill],
                    "docs": docs,
                    "include_all_docs": all,
                    "mode": MODES[*mode],
                }),
            );
        }
        Op::ListDocs(skill) => {
            call(session, "skill_list_docs", json!({"skill": NAMES[*skill]}));
        }
        Op::Assistant => reply(session, "Done."),
    }
}

fn assert_loaded_is_replayable(session: &Session) {
    let loaded = session.loaded();
    assert_eq!(
        loaded,
        collect_loaded_skill_names(session.transcript()),
        "session.loaded() differs from the transcript's injection tags"
    );
    let replayed = LoadState::from_transcript(session.transcript());
    assert_eq!(loaded, replayed.loaded());
    assert_eq!(
        session.state(),
        &replayed,
        "the incremental load state differs from a replay"
    );
}

/// Runs `ops`, checking the loaded set after every step and, when
/// `append_only`, that every request extends the previous one.
fn run(ops: &[Op], trpc: bool, config: Config, append_only: bool) {
    let mut session = session_for(trpc, config);
    let mut previous = session.build_request();
    for op in ops {
        apply(&mut session, op, trpc);
        assert_loaded_is_replayable(&session);
        let next = session.build_request();
        if append_only {
            assert_extends(&previous, &next);
            assert_eq!(
                next.system.len(),
                1,
                "the default mode has one system block"
            );
        }
        previous = next;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn default_mode_requests_only_grow(ops in ops_strategy(), trpc in any::<bool>()) {
        run(&ops, trpc, Config::Default, true);
    }

    #[test]
    fn turn_lifetime_keeps_loaded_set_replayable(ops in ops_strategy(), trpc in any::<bool>()) {
        run(&ops, trpc, Config::Turn, false);
    }

    #[test]
    fn once_lifetime_keeps_loaded_set_replayable(ops in ops_strategy(), trpc in any::<bool>()) {
        run(&ops, trpc, Config::Once, false);
    }

    #[test]
    fn cap_of_two_keeps_loaded_set_replayable(ops in ops_strategy(), trpc in any::<bool>()) {
        run(&ops, trpc, Config::Cap2, false);
    }

    /// Releases are tags on new messages, never edits: with tool-result
    /// bodies the prefix keeps growing under every lifetime and the cap.
    #[test]
    fn releases_never_rewrite_the_prefix(
        ops in ops_strategy(),
        trpc in any::<bool>(),
        config in prop_oneof![Just(Config::Turn), Just(Config::Once), Just(Config::Cap2)],
    ) {
        run(&ops, trpc, config, true);
    }
}

#[test]
fn cap_never_exceeded_after_many_loads() {
    let mut session = session_for(false, Config::Cap2);
    for name in [
        "pdf-forms",
        "csv-report",
        "weather",
        "git-commit",
        "pdf-forms",
    ] {
        call(&mut session, "load_skill", json!({ "name": name }));
        assert!(session.loaded().len() <= 2, "{:?}", session.loaded());
        assert_loaded_is_replayable(&session);
    }
    let loaded: Vec<String> = session.loaded().into_iter().collect();
    assert_eq!(loaded, vec!["git-commit", "pdf-forms"]);
}

/// The checker itself can fail: the legacy mode moves the system region and
/// a history limit drops messages, and both are caught.
#[test]
fn the_extension_check_catches_a_moved_prefix() {
    use std::panic::{AssertUnwindSafe, catch_unwind};

    let (builder, _provider) = builder_with(full_library());
    let mut legacy = start(builder.materialization(skills_agent::Materialization::SystemMessage));
    user(&mut legacy, "go");
    let before = legacy.build_request();
    call(&mut legacy, "load_skill", json!({"name": "pdf-forms"}));
    let after = legacy.build_request();
    assert!(catch_unwind(AssertUnwindSafe(|| assert_extends(&before, &after))).is_err());

    let mut limited = session_for(false, Config::Default);
    user(&mut limited, "one");
    reply(&mut limited, "two");
    let before = limited.build_request();
    user(&mut limited, "three");
    limited.set_history_limit(Some(2));
    let after = limited.build_request();
    assert!(catch_unwind(AssertUnwindSafe(|| assert_extends(&before, &after))).is_err());
}
