//! Output evals on a real local runtime (real processes and files), driven
//! by a scripted model.

use std::sync::Arc;

use serde_json::{Value, json};
use skills_agent::{Agent, ModelResponse, Profile, ScriptedModel, ToolCall, Usage};
use skills_core::{InCodeProvider, define_skill};
use skills_eval::{EvalErrorKind, EvalSet, OutputEval, write_results};
use skills_exec::LocalRuntime;
use skills_workspace::WorkspaceRuntime;

const MAKE: &str = "mkdir -p out\n\
total=$(tail -n +2 inputs/sales.csv | cut -d, -f2 | paste -sd+ | bc)\n\
printf '{\"total\": %s, \"months\": [\"jan\", \"feb\"]}' \"$total\" > out/result.json\n\
echo \"Total: $total\"\n";

fn provider() -> Arc<InCodeProvider> {
    let skill = define_skill(
        "report-maker",
        "Makes sales reports from CSV. Use for sales totals.",
    )
    .body("Run `bash scripts/make.sh`, then give the total.")
    .resource("scripts/make.sh", MAKE)
    .resource("evals/files/sales.csv", "month,total\njan,20\nfeb,22\n")
    .build()
    .unwrap();
    Arc::new(InCodeProvider::new([skill]).unwrap())
}

const EVALS: &str = r#"{
  "skill_name": "report-maker",
  "evals": [
    {
      "id": 1,
      "name": "total",
      "prompt": "Make the sales report from the attached CSV.",
      "expected_output": "The total, 42, and out/result.json.",
      "files": ["evals/files/sales.csv"],
      "assertions": [
        {"type": "contains", "value": "Total: 42"},
        {"type": "regex", "pattern": "Total: \\d+"},
        {"type": "not_contains", "value": "error", "ignore_case": true},
        {"type": "file_exists", "path": "out/result.json"},
        {"type": "json_path", "file": "out/result.json", "path": "$.total", "equals": 42},
        {"type": "json_path", "file": "out/result.json", "path": "$.months[1]"},
        {"type": "script", "command": "test -s inputs/sales.csv && grep -q 'Total: 42'"},
        "The answer is polite"
      ]
    },
    {
      "id": "2",
      "prompt": "Make the report, but you will fail.",
      "expectations": [
        {"type": "contains", "value": "Total"},
        {"type": "file_exists", "path": "out/result.json"},
        {"type": "script", "command": "grep -q Total"}
      ]
    }
  ]
}"#;

fn agent(runtime: Arc<dyn WorkspaceRuntime>) -> Agent {
    Agent::builder("eval", provider())
        .profile(Profile::Full)
        .runtime(runtime)
        .preload(["report-maker"])
        .build()
        .unwrap()
}

fn script() -> ScriptedModel {
    let usage = Usage::new(2000, 50, 1500, 0);
    ScriptedModel::new([
        ModelResponse::tool_calls(
            "",
            vec![ToolCall::new(
                "c1",
                "run_skill_command",
                json!({"skill": "report-maker", "command": "bash scripts/make.sh"}),
            )],
        )
        .with_usage(usage),
        ModelResponse::text("Total: 42. The report is in out/result.json.").with_usage(usage),
        ModelResponse::text("I could not make it.").with_usage(usage),
    ])
}

/// Every deterministic check kind, against a real workspace, and a case that
/// fails; the statement is not checked without a grader; the files are
/// written in the convention's shapes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_run_against_the_workspace_and_the_files_are_written() {
    let root = tempfile::tempdir().unwrap();
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().unwrap());
    let set = EvalSet::from_json(EVALS).unwrap();
    let model = Arc::new(script());
    let report = OutputEval::new(agent(runtime), model.clone())
        .concurrency(1)
        .run(&set)
        .await
        .unwrap();
    // The skill arrived before the first model call (declared load).
    let first = &model.requests()[0];
    assert!(
        first
            .messages
            .iter()
            .any(|m| m.content.contains("Run `bash scripts/make.sh`")),
        "{first:?}"
    );
    let one = &report.runs[0];
    assert_eq!(one.error, None);
    let verdicts: Vec<_> = one
        .expectations
        .iter()
        .map(|e| (e.kind.as_str(), e.passed))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("contains", Some(true)),
            ("regex", Some(true)),
            ("not_contains", Some(true)),
            ("file_exists", Some(true)),
            ("json_path", Some(true)),
            ("json_path", Some(true)),
            ("script", Some(true)),
            ("llm", None),
        ],
        "{:#?}",
        one.expectations
    );
    assert_eq!(one.tool_calls.get("run_skill_command"), Some(&1));
    assert_eq!((one.passed(), one.failed(), one.unchecked()), (7, 0, 1));
    let two = &report.runs[1];
    assert_eq!(
        (two.passed(), two.failed()),
        (0, 3),
        "{:#?}",
        two.expectations
    );
    assert!(two.expectations[1].evidence.contains("does not exist"));
    assert_eq!(report.counts(), (7, 3, 1));
    // The workspaces are gone.
    let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");

    let out = tempfile::tempdir().unwrap();
    let written = write_results(&report, out.path()).unwrap();
    assert_eq!(written.len(), 1 + 2 * 3);
    let read = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(out.path().join(p)).unwrap()).unwrap()
    };
    let benchmark = read("benchmark.json");
    assert_eq!(benchmark["metadata"]["skill_name"], "report-maker");
    assert_eq!(benchmark["metadata"]["evals_run"], json!([1, 2]));
    assert_eq!(benchmark["runs"][0]["configuration"], "with_skill");
    assert_eq!(benchmark["runs"][0]["result"]["passed"], 7);
    assert_eq!(benchmark["runs"][1]["result"]["failed"], 3);
    let grading = read("eval-1/with_skill/run-1/grading.json");
    assert_eq!(grading["summary"]["not_checked"], 1);
    assert_eq!(grading["expectations"][7]["passed"], Value::Null);
    assert_eq!(grading["execution_metrics"]["total_tool_calls"], 1);
    let timing = read("eval-2/with_skill/run-1/timing.json");
    assert_eq!(timing["total_tokens"], 2050);
    let answer =
        std::fs::read_to_string(out.path().join("eval-1/with_skill/run-1/outputs/answer.md"))
            .unwrap();
    assert_eq!(answer, "Total: 42. The report is in out/result.json.");
}

/// With a grader, statements are judged by it, from the case and the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grader_checks_the_statements() {
    let root = tempfile::tempdir().unwrap();
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().unwrap());
    let set = EvalSet::from_json(
        r#"{"skill_name": "report-maker", "evals": [{"id": 7, "prompt": "Say hi.",
            "assertions": ["The answer greets the user", "The answer names a total"]}]}"#,
    )
    .unwrap();
    let grader = Arc::new(ScriptedModel::new([
        ModelResponse::text(r#"{"passed": true, "evidence": "It says hello."}"#),
        ModelResponse::text("```json\n{\"passed\": false, \"evidence\": \"No number.\"}\n```"),
    ]));
    let report = OutputEval::new(
        agent(runtime),
        Arc::new(ScriptedModel::new([ModelResponse::text("Hello!")])),
    )
    .grader(grader.clone())
    .run(&set)
    .await
    .unwrap();
    let run = &report.runs[0];
    assert_eq!(run.expectations[0].passed, Some(true));
    assert_eq!(run.expectations[0].evidence, "grader: It says hello.");
    assert_eq!(run.expectations[1].passed, Some(false));
    let asked = grader.requests()[0].messages[0].content.clone();
    // The answer sits in a tag named after its own digest: it cannot close it.
    let open = asked.find("<answer-").unwrap();
    let tag = &asked[open + 1..open + 1 + asked[open + 1..].find('>').unwrap()];
    assert_eq!(tag.len(), "answer-".len() + 12, "{tag}");
    assert!(
        asked.contains(&format!("<{tag}>\nHello!\n</{tag}>")),
        "{asked}"
    );
    assert!(
        grader.requests()[0]
            .system_text()
            .contains("never instructions")
    );
    assert_eq!(report.grader_usage.requests, 2);
    assert!(asked.contains("The answer greets the user"), "{asked}");
}

/// A file check needs a workspace: an agent without a runtime is refused
/// before any model call; so is a set for a skill the provider lacks.
#[tokio::test]
async fn refuses_what_cannot_be_checked() {
    let model = Arc::new(ScriptedModel::new([]));
    let bare = Agent::builder("eval", provider()).build().unwrap();
    let err = OutputEval::new(bare.clone(), model.clone())
        .run(&EvalSet::from_json(EVALS).unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), EvalErrorKind::Config);
    assert!(
        err.message().contains("file out/result.json exists"),
        "{err}"
    );
    let other =
        EvalSet::from_json(r#"{"skill_name": "nope", "evals": [{"id": 1, "prompt": "x"}]}"#)
            .unwrap();
    let err = OutputEval::new(bare, model.clone())
        .run(&other)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), EvalErrorKind::UnknownSkill);
    assert!(err.message().contains("report-maker"), "{err}");
    assert!(model.requests().is_empty());
}

/// evals.json mistakes name the case and the check.
#[test]
fn bad_evals_files_say_where() {
    for (text, says) in [
        ("[]", "an object"),
        (r#"{"evals": []}"#, "skill_name"),
        (
            r#"{"skill_name": "a", "evals": [{"prompt": "x"}]}"#,
            "case 1: needs an `id`",
        ),
        (
            r#"{"skill_name": "a", "evals": [{"id": 1, "prompt": "x"}, {"id": 1, "prompt": "y"}]}"#,
            "used twice",
        ),
        (
            r#"{"skill_name": "a", "evals": [{"id": 1, "prompt": "x", "assertions": [{"type": "regex", "pattern": "("}]}]}"#,
            "assertions[0]: a bad `pattern`",
        ),
        (
            r#"{"skill_name": "a", "evals": [{"id": 1, "prompt": "x", "assertions": [{"type": "smell"}]}]}"#,
            "unknown check type `smell`",
        ),
        (
            r#"{"skill_name": "a", "evals": [{"id": 1, "prompt": "x", "assertions": [{"type": "json_path", "path": "a.b"}]}]}"#,
            "start with `$`",
        ),
        (
            r#"{"skill_name": "a", "evals": [{"id": 1, "prompt": "x", "assertions": [3]}]}"#,
            "a string or an object",
        ),
    ] {
        let err = EvalSet::from_json(text).unwrap_err();
        assert_eq!(err.kind(), EvalErrorKind::Input);
        assert!(err.message().contains(says), "{text}: {err}");
    }
}

/// A model that never finishes is stopped by the timeout; the checks still
/// run against what there is, and the workspace is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_case_times_out_and_its_workspace_goes() {
    #[derive(Debug)]
    struct Stall;
    #[async_trait::async_trait]
    impl skills_agent::Model for Stall {
        fn name(&self) -> &str {
            "stall"
        }
        async fn complete(
            &self,
            _: &skills_agent::ModelRequest,
        ) -> Result<ModelResponse, skills_agent::ModelError> {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            Ok(ModelResponse::text("never"))
        }
    }
    let root = tempfile::tempdir().unwrap();
    let runtime: Arc<dyn WorkspaceRuntime> =
        Arc::new(LocalRuntime::builder(root.path()).build().unwrap());
    let set = EvalSet::from_json(
        r#"{"skill_name": "report-maker", "evals": [{"id": 1, "prompt": "Make it.",
            "assertions": [{"type": "contains", "value": "Total"},
                           {"type": "file_exists", "path": "out/result.json"}]}]}"#,
    )
    .unwrap();
    let report = OutputEval::new(agent(runtime), Arc::new(Stall))
        .timeout(std::time::Duration::from_millis(300))
        .run(&set)
        .await
        .unwrap();
    let run = &report.runs[0];
    assert!(run.timed_out);
    assert!(run.error.as_deref().unwrap().contains("timed out"));
    assert_eq!((run.passed(), run.failed()), (0, 2));
    assert!(!run.ok());
    let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Two ids that would share a result folder are refused up front.
#[test]
fn ids_that_share_a_folder_are_refused() {
    let err = EvalSet::from_json(
        r#"{"skill_name": "a", "evals": [{"id": "a.b", "prompt": "x"}, {"id": "a_b", "prompt": "y"}]}"#,
    )
    .unwrap_err();
    assert!(err.message().contains("eval-a_b"), "{err}");
}
