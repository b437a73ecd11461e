//! Trigger evals driven by a scripted model (every path, in order) and a
//! routed one (concurrency, timeouts).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use skills_agent::{
    ModelError, ModelErrorKind, ModelResponse, Retry, ScriptStep, ScriptedModel, ToolCall, Usage,
};
use skills_eval::{
    EvalErrorKind, NONE, QueryOptions, QuerySet, Split, TriggerEval, TriggerQuery, compare,
};

use crate::support::{Routed, agent};

fn load(name: &str) -> ScriptStep {
    ScriptStep::Respond(Box::new(
        ModelResponse::tool_calls(
            "",
            vec![ToolCall::new("c", "load_skill", json!({ "name": name }))],
        )
        .with_usage(Usage::new(1000, 10, 900, 0)),
    ))
}

fn answer() -> ScriptStep {
    ScriptStep::Respond(Box::new(
        ModelResponse::text("No skill needed.").with_usage(Usage::new(1000, 10, 900, 0)),
    ))
}

fn set(json: &str) -> QuerySet {
    QuerySet::from_json(json, &QueryOptions::default()).unwrap()
}

const FOUR: &str = r#"[
    {"query": "merge these two PDFs", "skill": "pdf", "should_trigger": true, "split": "train"},
    {"query": "plot this CSV by month", "skill": "csv", "should_trigger": true, "split": "validation"},
    {"query": "what is 2 + 2?", "should_trigger": false, "split": "train"},
    {"query": "summarise the PDF spec of CSV", "skill": "csv", "should_trigger": false, "split": "validation"}
]"#;

/// The right skill, the wrong one, none, and a false trigger: every count,
/// rate and confusion, and each run stops at its first load.
#[tokio::test]
async fn right_wrong_and_no_skill_make_the_rates() {
    let model = Arc::new(ScriptedModel::with_steps([
        load("pdf"),
        load("pdf"), // q1: right twice
        load("pdf"),
        answer(), // q2: wrong skill, then none
        answer(),
        answer(), // q3: none, as it should
        load("csv"),
        answer(), // q4: a false trigger once
    ]));
    let report = TriggerEval::new(agent(), model.clone())
        .runs(2)
        .concurrency(1)
        .run(&set(FOUR))
        .await
        .unwrap();
    // One model call per run: a load ends the run.
    assert_eq!(model.requests().len(), 8);
    let catalog = model.requests()[0].system_text();
    for skill in ["pdf", "csv", "weather"] {
        assert!(catalog.contains(skill), "{catalog}");
    }
    assert_eq!(report.catalog, ["csv", "pdf", "weather"]);
    let q: Vec<_> = report
        .queries
        .iter()
        .map(|q| (q.triggered, q.none, q.passed))
        .collect();
    assert_eq!(
        q,
        [(2, 0, true), (0, 1, false), (0, 2, true), (1, 1, false)]
    );
    assert_eq!(
        report.queries[1].confusions(),
        [("pdf".to_owned(), 1), (NONE.to_owned(), 1)]
            .into_iter()
            .collect()
    );
    let rates = report.rates(None);
    let pdf = rates.iter().find(|r| r.skill == "pdf").unwrap();
    assert_eq!(pdf.trigger_rate(), Some(1.0));
    assert_eq!(pdf.precision(), Some(2.0 / 3.0));
    assert_eq!(pdf.false_trigger_rate(), None);
    let csv = rates.iter().find(|r| r.skill == "csv").unwrap();
    assert_eq!(csv.recall(), Some(0.0));
    assert_eq!(csv.false_trigger_rate(), Some(0.5));
    assert_eq!(csv.precision(), Some(0.0));
    assert_eq!(csv.confusions.get("pdf"), Some(&1));
    assert_eq!(csv.failed_queries, 2);
    assert_eq!(report.pass_counts(None), (2, 2));
    assert_eq!(report.pass_counts(Some(Split::Train)), (2, 0));
    assert_eq!(report.pass_counts(Some(Split::Validation)), (0, 2));
    assert_eq!(report.usage.requests, 8);
    assert_eq!(report.usage.input_tokens, 8000);
    assert!((report.usage.cache_share() - 0.9).abs() < 1e-9);
    // The JSON round-trips, for baselines.
    let text = serde_json::to_string(&report).unwrap();
    assert_eq!(
        skills_eval::TriggerReport::from_json(&text).unwrap(),
        report
    );
}

/// Retries the adapter made are counted; a call that failed after them is a
/// failed run (kept with its message), not a "loaded none".
#[tokio::test]
async fn retries_are_counted_and_failures_are_not_misses() {
    let retried = ModelResponse::tool_calls(
        "",
        vec![ToolCall::new("c", "load_skill", json!({"name": "pdf"}))],
    )
    .with_retries(vec![
        Retry::new(1, Duration::from_millis(10), "HTTP 429: rate limited"),
        Retry::new(2, Duration::from_millis(20), "HTTP 429: rate limited"),
    ]);
    let model = Arc::new(ScriptedModel::with_steps([
        ScriptStep::Respond(Box::new(retried)),
        ScriptStep::Fail(ModelError::new(
            ModelErrorKind::RateLimited,
            "HTTP 429 after 3 retries",
        )),
    ]));
    let report = TriggerEval::new(agent(), model)
        .runs(2)
        .concurrency(1)
        .run(&set(
            r#"[{"query": "merge PDFs", "skill": "pdf", "should_trigger": true}]"#,
        ))
        .await
        .unwrap();
    let q = &report.queries[0];
    assert_eq!(report.retries, 2);
    assert_eq!((q.runs, q.triggered, q.none, q.errors), (2, 1, 0, 1));
    assert_eq!(q.trigger_rate, Some(1.0));
    assert!(
        q.error_messages[0].contains("HTTP 429 after 3 retries"),
        "{:?}",
        q.error_messages
    );

    // A query whose every run failed does not pass, whatever it expects.
    let model = Arc::new(ScriptedModel::with_steps([ScriptStep::Fail(
        ModelError::new(ModelErrorKind::Server, "HTTP 500"),
    )]));
    let report = TriggerEval::new(agent(), model)
        .runs(1)
        .run(&set(r#"[{"query": "hello", "should_trigger": false}]"#))
        .await
        .unwrap();
    assert_eq!(report.queries[0].trigger_rate, None);
    assert!(!report.queries[0].passed);
}

/// A model that never answers is stopped by the timeout; the other runs go on.
#[tokio::test]
async fn a_stalled_run_times_out_and_the_rest_finish() {
    let model = Routed::new();
    let report = TriggerEval::new(agent(), model)
        .runs(2)
        .concurrency(4)
        .timeout(Duration::from_millis(300))
        .run(&set(
            r#"[{"query": "please stall", "skill": "pdf", "should_trigger": true},
                {"query": "load:pdf now", "skill": "pdf", "should_trigger": true}]"#,
        ))
        .await
        .unwrap();
    assert_eq!(report.queries[0].timeouts, 2);
    assert!(report.queries[0].error_messages[0].contains("timed out"));
    assert!(!report.queries[0].passed);
    assert_eq!(report.queries[1].triggered, 2);
    assert!(report.queries[1].passed);
}

/// Concurrency changes nothing but the time: the same counts as one at a
/// time, in the set's order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_gives_the_same_report() {
    let queries: Vec<TriggerQuery> = (0..60)
        .map(|i| {
            let skill = ["pdf", "csv", "weather"][i % 3];
            let said = if i % 4 == 0 { "csv" } else { skill };
            TriggerQuery {
                query: format!("query {i}: load:{said}"),
                skill: Some(skill.to_owned()),
                should_trigger: true,
                split: Split::Train,
            }
        })
        .collect();
    let set = QuerySet::new(queries).unwrap();
    let run = |concurrency| {
        let set = set.clone();
        async move {
            let model = Routed::new();
            let mut report = TriggerEval::new(agent(), model.clone())
                .runs(3)
                .concurrency(concurrency)
                .run(&set)
                .await
                .unwrap();
            // One model call per run: each stops at its load.
            assert_eq!(model.calls.load(std::sync::atomic::Ordering::Relaxed), 180);
            report.elapsed_ms = 0;
            report
        }
    };
    let one = run(1).await;
    let eight = run(8).await;
    assert_eq!(one, eight);
    assert_eq!(one.usage.requests, 180);
    let failing = one.queries.iter().filter(|q| !q.passed).count();
    // i % 4 == 0 and the skill is not csv: i in 0, 4, 8, … with i % 3 != 1.
    let expected = (0..60).filter(|i| i % 4 == 0 && i % 3 != 1).count();
    assert_eq!(failing, expected);
}

/// Bad settings and skills the model cannot see are refused before any
/// model call, naming what is wrong and what there is.
#[tokio::test]
async fn refuses_before_calling_the_model() {
    let model = Arc::new(ScriptedModel::new([]));
    let err = TriggerEval::new(agent(), model.clone())
        .run(&set(
            r#"[{"query": "x", "skill": "docx", "should_trigger": true}]"#,
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), EvalErrorKind::UnknownSkill);
    assert!(err.message().contains("docx"), "{err}");
    assert!(err.message().contains("csv, pdf, weather"), "{err}");
    for (eval, what) in [
        (TriggerEval::new(agent(), model.clone()).runs(0), "runs"),
        (
            TriggerEval::new(agent(), model.clone()).concurrency(0),
            "concurrency",
        ),
        (
            TriggerEval::new(agent(), model.clone()).threshold(1.5),
            "threshold",
        ),
        (
            TriggerEval::new(agent(), model.clone()).max_steps(0),
            "max_steps",
        ),
    ] {
        let err = eval.run(&set(FOUR)).await.unwrap_err();
        assert_eq!(err.kind(), EvalErrorKind::Config);
        assert!(err.message().contains(what), "{err}");
    }
    assert!(model.requests().is_empty());
}

/// A baseline comparison on the validation split: what was fixed, what broke.
#[tokio::test]
async fn a_comparison_shows_what_a_change_did() {
    let before = TriggerEval::new(
        agent(),
        Arc::new(ScriptedModel::with_steps([
            load("pdf"),
            load("pdf"),
            answer(),
            answer(),
        ])),
    )
    .runs(1)
    .concurrency(1)
    .run(&set(FOUR))
    .await
    .unwrap();
    let after = TriggerEval::new(
        agent(),
        Arc::new(ScriptedModel::with_steps([
            load("pdf"),
            load("csv"),
            answer(),
            load("csv"),
        ])),
    )
    .runs(1)
    .concurrency(1)
    .run(&set(FOUR))
    .await
    .unwrap();
    let cmp = compare(&before, &after, Some(Split::Validation));
    assert_eq!(cmp.baseline_passes, (1, 1));
    assert_eq!(cmp.current_passes, (1, 1));
    let flips: Vec<_> = cmp
        .flipped
        .iter()
        .map(|f| (f.query.as_str(), f.now_passes))
        .collect();
    assert_eq!(
        flips,
        [
            ("plot this CSV by month", true),
            ("summarise the PDF spec of CSV", false)
        ]
    );
    let csv = cmp.skills.iter().find(|s| s.skill == "csv").unwrap();
    assert_eq!(csv.trigger_rate_change(), Some(1.0));
    assert_eq!(csv.false_trigger_rate_change(), Some(1.0));
}

/// The model's load counts however the skill got there: a `$mention` in the
/// query loaded it first, several calls in one answer (an unknown skill,
/// then the right one), the trpc surface's `skill_load`.
#[tokio::test]
async fn loads_count_on_every_surface_and_after_a_mention() {
    let mention = Arc::new(ScriptedModel::with_steps([load("pdf")]));
    let report = TriggerEval::new(agent(), mention)
        .runs(1)
        .run(&set(
            r#"[{"query": "$pdf merge these", "skill": "pdf", "should_trigger": true}]"#,
        ))
        .await
        .unwrap();
    assert_eq!(
        report.queries[0].loaded.get("pdf"),
        Some(&1),
        "{:?}",
        report.queries[0]
    );

    let two_calls = ModelResponse::tool_calls(
        "",
        vec![
            ToolCall::new("c1", "load_skill", json!({"name": "docx"})),
            ToolCall::new("c2", "load_skill", json!({"name": "pdf"})),
        ],
    );
    let model = Arc::new(ScriptedModel::new([two_calls]));
    let report = TriggerEval::new(agent(), model)
        .runs(1)
        .run(&set(
            r#"[{"query": "merge", "skill": "pdf", "should_trigger": true}]"#,
        ))
        .await
        .unwrap();
    assert_eq!(report.queries[0].loaded.get("pdf"), Some(&1));

    let trpc = skills_agent::Agent::builder("eval", crate::support::provider())
        .surface(skills_agent::Surface::Trpc)
        .build()
        .unwrap();
    let model = Arc::new(ScriptedModel::new([ModelResponse::tool_calls(
        "",
        vec![ToolCall::new("c1", "skill_load", json!({"skill": "pdf"}))],
    )]));
    let report = TriggerEval::new(trpc, model)
        .runs(1)
        .run(&set(
            r#"[{"query": "merge", "skill": "pdf", "should_trigger": true}]"#,
        ))
        .await
        .unwrap();
    assert_eq!(report.queries[0].loaded.get("pdf"), Some(&1));
}

/// A model that keeps calling tools without loading reaches the step limit:
/// that run loaded nothing (it is not an error).
#[tokio::test]
async fn the_step_limit_means_no_skill() {
    let read = || {
        ScriptStep::Respond(Box::new(ModelResponse::tool_calls(
            "",
            vec![ToolCall::new(
                "r",
                "read_skill_file",
                json!({"name": "pdf", "path": "x.md"}),
            )],
        )))
    };
    let model = Arc::new(ScriptedModel::with_steps([read(), read()]));
    let report = TriggerEval::new(agent(), model.clone())
        .runs(1)
        .max_steps(2)
        .run(&set(
            r#"[{"query": "merge", "skill": "pdf", "should_trigger": true}]"#,
        ))
        .await
        .unwrap();
    let q = &report.queries[0];
    assert_eq!((q.none, q.errors), (1, 0));
    assert_eq!(model.requests().len(), 2);
}

/// A skill the policy keeps from the model cannot be evaluated: the error
/// says so rather than reporting a 0 % recall.
#[tokio::test]
async fn a_skill_the_model_is_not_told_about_is_refused() {
    let policy =
        skills_core::VisibilityPolicy::new().with_tier("weather", skills_core::Tier::Manual);
    let agent = skills_agent::Agent::builder("eval", crate::support::provider())
        .visibility(policy)
        .build()
        .unwrap();
    let err = TriggerEval::new(agent, Arc::new(ScriptedModel::new([])))
        .run(&set(
            r#"[{"query": "rain?", "skill": "weather", "should_trigger": true}]"#,
        ))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), EvalErrorKind::UnknownSkill);
    assert!(
        err.message()
            .contains("weather the model is not told about"),
        "{err}"
    );
    assert!(
        err.message().contains("the catalog lists csv, pdf"),
        "{err}"
    );
}
