//! The default (Helix) surface: `load_skill`, `read_skill_file` and
//! `search_skills`.

use serde_json::json;

use super::{builder, run, start};

#[test]
fn load_ok_then_again() {
    pollster::block_on(async {
        let mut session = start(builder()).await;
        let first = run(&mut session, "load_skill", json!({"name": "pdf-tools"})).await;
        snap!("default_load_ok", first);
        let again = run(&mut session, "load_skill", json!({"name": "pdf-tools"})).await;
        snap!("default_load_again", again);
    });
}

#[test]
fn load_errors() {
    pollster::block_on(async {
        let mut session = start(builder()).await;
        let unknown = run(&mut session, "load_skill", json!({"name": "pdf"})).await;
        snap!("default_load_unknown", unknown);
        let hidden = run(&mut session, "load_skill", json!({"name": "deploy-prod"})).await;
        snap!("default_load_hidden", hidden);
        let bad_args = run(&mut session, "load_skill", json!({"skill": "pdf-tools"})).await;
        snap!("default_load_bad_arguments", bad_args);
    });
}

#[test]
fn read_files() {
    pollster::block_on(async {
        let mut session = start(builder()).await;
        run(&mut session, "load_skill", json!({"name": "pdf-tools"})).await;
        let whole = run(
            &mut session,
            "read_skill_file",
            json!({"skill": "pdf-tools", "path": "references/guide.md"}),
        )
        .await;
        snap!("default_read_ok", whole);
        let range = run(
            &mut session,
            "read_skill_file",
            json!({"skill": "pdf-tools", "path": "references/guide.md", "start_line": 2, "end_line": 3}),
        )
        .await;
        snap!("default_read_range", range);
        let script = run(
            &mut session,
            "read_skill_file",
            json!({"skill": "pdf-tools", "path": "scripts/run.sh"}),
        )
        .await;
        snap!("default_read_script", script);
    });
}

#[test]
fn read_errors() {
    pollster::block_on(async {
        let mut session = start(builder()).await;
        run(&mut session, "load_skill", json!({"name": "pdf-tools"})).await;
        let missing = run(
            &mut session,
            "read_skill_file",
            json!({"skill": "pdf-tools", "path": "references/missing.md"}),
        )
        .await;
        snap!("default_read_missing", missing);
        let traversal = run(
            &mut session,
            "read_skill_file",
            json!({"skill": "pdf-tools", "path": "../x"}),
        )
        .await;
        snap!("default_read_traversal", traversal);
        let bad_range = run(
            &mut session,
            "read_skill_file",
            json!({"skill": "pdf-tools", "path": "references/guide.md", "start_line": 4, "end_line": 2}),
        )
        .await;
        snap!("default_read_bad_range", bad_range);
        let past_end = run(
            &mut session,
            "read_skill_file",
            json!({"skill": "pdf-tools", "path": "references/guide.md", "start_line": 40}),
        )
        .await;
        snap!("default_read_past_end", past_end);
        let hidden = run(
            &mut session,
            "read_skill_file",
            json!({"skill": "deploy-prod", "path": "SKILL.md"}),
        )
        .await;
        snap!("default_read_hidden_skill", hidden);
    });
}

#[test]
fn search() {
    pollster::block_on(async {
        let mut session = start(builder().search(true)).await;
        let hits = run(
            &mut session,
            "search_skills",
            json!({"query": "extract tables from a pdf"}),
        )
        .await;
        snap!("default_search_hits", hits);
        let none = run(
            &mut session,
            "search_skills",
            json!({"query": "quantum chromodynamics"}),
        )
        .await;
        snap!("default_search_no_hits", none);
        let hidden = run(
            &mut session,
            "search_skills",
            json!({"query": "deploy production release"}),
        )
        .await;
        snap!("default_search_hidden_only", hidden);
    });
}

#[test]
fn unknown_tool() {
    pollster::block_on(async {
        let mut session = start(builder()).await;
        let text = run(&mut session, "skill_load", json!({"skill": "pdf-tools"})).await;
        snap!("default_unknown_tool", text);
    });
}
