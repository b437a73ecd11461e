//! The prefix-stability invariants, on the scripted conversation of
//! `examples/prefix_stability` (shared, so the test and the printed tables
//! measure the same requests), on the default tool surface and on trpc's.
//!
//! In the default mode every request body extends the previous one byte for
//! byte (only the closing `]}` moves), so at least 99 % of the previous
//! request's o200k tokens are an exact prefix of the next; the legacy
//! system-message mode loses more right after each fresh load; and the
//! catalog's per-skill wrapper costs at most 15 tokens. On trpc the load of
//! the skill added mid-session names a doc, and its result carries that doc.

#[path = "../examples/prefix_stability/scenario.rs"]
mod scenario;

use serde_json::json;
use skills_agent::Surface;

use scenario::{Outcome, Share};

fn measured(surface: &Surface) -> (Outcome, Vec<Share>, Vec<Share>) {
    let outcome = scenario::run(surface);
    let (default, legacy) = scenario::measure(&scenario::tokenizer(), &outcome);
    (outcome, default, legacy)
}

/// The invariants every surface's run must meet. `transcript` lists text the
/// last default-mode request must contain (JSON-escaped).
fn assert_invariants(surface: &Surface, transcript: &[&str]) -> Outcome {
    let (outcome, default, legacy) = measured(surface);
    let steps = &outcome.steps;
    assert_eq!(
        steps.len(),
        12,
        "{surface:?}: the script makes twelve model requests"
    );

    // The script does what the table says it does.
    let last = &steps[steps.len() - 1].default_json;
    for expected in [
        "no skill is named `terraform-plan-review`",
        "is already loaded; its instructions are earlier in this conversation",
        "<skills_update>",
        "<skill name=\\\"log-query-builder\\\">",
    ]
    .iter()
    .chain(transcript)
    {
        assert!(
            last.contains(expected),
            "{surface:?}: the transcript lacks {expected:?}"
        );
    }

    // Default mode: each body is the previous one minus its closing `]}`,
    // plus new messages.
    for (i, pair) in steps.windows(2).enumerate() {
        let head = pair[0]
            .default_json
            .strip_suffix("]}")
            .expect("an OpenAI body ends with the messages array");
        assert!(
            pair[1].default_json.starts_with(head),
            "{surface:?}: request {} does not extend request {} byte for byte",
            i + 2,
            i + 1
        );
        assert!(pair[1].default_json.len() > pair[0].default_json.len());
    }

    // Default mode keeps at least 99 % of the previous request's tokens.
    let min = default
        .iter()
        .filter_map(|s| s.percent)
        .fold(f64::INFINITY, f64::min);
    assert!(
        min >= 99.0,
        "{surface:?}: min default-mode share {min:.2} % is below 99 %"
    );

    // Legacy mode loses more right after each fresh load.
    let after_load: Vec<usize> = (0..steps.len())
        .filter(|&i| steps[i].after_fresh_load)
        .collect();
    assert_eq!(
        after_load.len(),
        2,
        "{surface:?}: two fresh loads in the script"
    );
    for i in after_load {
        let (d, l) = (
            default[i].percent.expect("not the first request"),
            legacy[i].percent.expect("not the first request"),
        );
        assert!(
            l < d,
            "{surface:?}, step {}: legacy {l:.2} % is not below default {d:.2} %",
            i + 1
        );
    }
    outcome
}

#[test]
fn prefix_stability_invariants_default_surface() {
    let outcome = assert_invariants(
        &Surface::Default,
        &[
            "path=\\\"references/syntax.md\\\"",
            "path=\\\"references/style-guide.md\\\"",
        ],
    );

    // The default surface's load takes no docs.
    assert!(
        outcome
            .calls
            .iter()
            .all(|c| c.tool != "load_skill" || c.arguments.get("docs").is_none())
    );

    // The catalog wrapper is cheap.
    let overhead = scenario::catalog_overhead(
        &scenario::tokenizer(),
        &outcome.stable_system,
        &outcome.pinned,
    );
    assert_eq!(overhead.skills, 6);
    assert!(
        overhead.per_skill() <= 15.0,
        "wrapper costs {:.1} tokens per skill",
        overhead.per_skill()
    );
    assert!(overhead.max_per_skill <= 15);
}

#[test]
fn prefix_stability_invariants_trpc_surface() {
    let outcome = assert_invariants(
        &Surface::Trpc,
        &[
            "<skill_doc skill=\\\"changelog-writer\\\" path=\\\"references/style-guide.md\\\">",
            "<skill_doc skill=\\\"log-query-builder\\\" path=\\\"references/syntax.md\\\">",
            "<skill_doc skill=\\\"log-query-builder\\\" path=\\\"references/recipes.md\\\">",
        ],
    );

    // The stable block (instructions and catalog) is the default surface's,
    // with the load tool's name changed, so the catalog costs the same.
    let helix = scenario::run(&Surface::Default);
    assert_eq!(
        outcome.stable_system,
        helix.stable_system.replace("load_skill", "skill_load")
    );

    // Only trpc tools were called, with trpc argument names.
    for call in &outcome.calls {
        assert!(
            ["skill_load", "skill_select_docs"].contains(&call.tool.as_str()),
            "unexpected tool {}",
            call.tool
        );
        assert!(call.arguments.get("skill").is_some(), "{}", call.arguments);
    }

    // The load with docs: exactly one, and its result carries the doc after
    // the body (in the legacy mode after the stub), in both modes.
    let with_docs: Vec<_> = outcome
        .calls
        .iter()
        .filter(|c| c.tool == "skill_load" && c.arguments.get("docs").is_some())
        .collect();
    assert_eq!(with_docs.len(), 1, "one load with docs in the script");
    let load = with_docs[0];
    assert_eq!(
        load.arguments,
        json!({"skill": "log-query-builder", "docs": ["references/syntax.md"]})
    );
    let doc_open = "<skill_doc skill=\"log-query-builder\" path=\"references/syntax.md\">\n";
    let doc = format!(
        "{doc_open}{}\n</skill_doc>",
        scenario::LOGS_SYNTAX.trim_end()
    );
    for (mode, result) in [
        ("default", &load.default_result),
        ("legacy", &load.legacy_result),
    ] {
        assert!(
            result.contains(&doc),
            "{mode} mode: the load with docs lacks the doc: {result}"
        );
    }
    assert!(
        load.default_result
            .starts_with("<skill name=\"log-query-builder\">"),
        "default mode: the body comes first"
    );

    // The first fresh load stays plain, and the turn-6 read selects the other
    // doc rather than the one the load brought.
    assert_eq!(
        outcome.calls[0].arguments,
        json!({"skill": "changelog-writer"})
    );
    let last_call = outcome.calls.last().expect("the script calls tools");
    assert_eq!(last_call.tool, "skill_select_docs");
    assert_eq!(
        last_call.arguments,
        json!({"skill": "log-query-builder", "docs": ["references/recipes.md"], "mode": "add"})
    );
    assert!(
        !last_call.default_result.contains(doc_open),
        "the select sends syntax.md a second time"
    );
}
