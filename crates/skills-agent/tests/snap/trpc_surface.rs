//! The trpc surface: `skill_list`, `skill_load`, `skill_list_docs`,
//! `skill_select_docs`, `skill_list_tools` and `skill_select_tools`.

use serde_json::json;
use skills_agent::Surface;

use super::{builder, pool_tools, run, start};

fn trpc() -> skills_agent::AgentBuilder {
    let mut builder = builder().surface(Surface::Trpc);
    for tool in pool_tools() {
        builder = builder.pool_tool(tool);
    }
    builder
}

#[test]
fn list() {
    pollster::block_on(async {
        let mut session = start(trpc()).await;
        let text = run(&mut session, "skill_list", json!({})).await;
        snap!("trpc_skill_list", text);
    });
}

#[test]
fn load_variants() {
    pollster::block_on(async {
        let mut session = start(trpc()).await;
        let plain = run(&mut session, "skill_load", json!({"skill": "pdf-tools"})).await;
        snap!("trpc_load_plain", plain);

        let mut session = start(trpc()).await;
        let docs = run(
            &mut session,
            "skill_load",
            json!({"skill": "pdf-tools", "docs": ["references/guide.md"]}),
        )
        .await;
        snap!("trpc_load_with_docs", docs);
        let more = run(
            &mut session,
            "skill_load",
            json!({"skill": "pdf-tools", "docs": ["references/guide.md", "references/faq.txt"]}),
        )
        .await;
        snap!("trpc_load_again_with_more_docs", more);

        let mut session = start(trpc()).await;
        let all = run(
            &mut session,
            "skill_load",
            json!({"skill": "pdf-tools", "include_all_docs": true}),
        )
        .await;
        snap!("trpc_load_all_docs", all);

        let mut session = start(trpc()).await;
        let no_docs = run(&mut session, "skill_load", json!({"skill": "weather"})).await;
        snap!("trpc_load_tools_skill", no_docs);
    });
}

#[test]
fn docs() {
    pollster::block_on(async {
        let mut session = start(trpc()).await;
        let before = run(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-tools", "docs": ["references/guide.md"]}),
        )
        .await;
        snap!("trpc_select_docs_before_load", before);

        run(&mut session, "skill_load", json!({"skill": "pdf-tools"})).await;
        let listed = run(
            &mut session,
            "skill_list_docs",
            json!({"skill": "pdf-tools"}),
        )
        .await;
        snap!("trpc_list_docs", listed.clone());

        // No mode: replace, as in trpc-agent.
        let default = run(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-tools", "docs": ["references/guide.md"]}),
        )
        .await;
        snap!("trpc_select_docs_default_replace", default);
        let add = run(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-tools", "docs": ["references/faq.txt"], "mode": "ADD"}),
        )
        .await;
        snap!("trpc_select_docs_add", add);
        // The listing names the docs, selected or not.
        let again = run(
            &mut session,
            "skill_list_docs",
            json!({"skill_name": "pdf-tools"}),
        )
        .await;
        assert_eq!(
            again.split_once("---\n").map(|r| r.1),
            listed.split_once("---\n").map(|r| r.1)
        );

        let replace = run(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-tools", "docs": ["references/faq.txt"], "mode": "replace"}),
        )
        .await;
        snap!("trpc_select_docs_replace", replace);

        let clear = run(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-tools", "mode": "clear"}),
        )
        .await;
        snap!("trpc_select_docs_clear", clear);

        let all = run(
            &mut session,
            "skill_select_docs",
            json!({"skill_name": "pdf-tools", "include_all_docs": true, "mode": "bogus"}),
        )
        .await;
        snap!("trpc_select_docs_all", all);

        let unknown = run(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-tools", "docs": ["references/api.md"]}),
        )
        .await;
        snap!("trpc_select_docs_unknown", unknown);

        let script = run(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-tools", "docs": ["scripts/run.sh"]}),
        )
        .await;
        snap!("trpc_select_docs_not_a_doc", script);

        let none = run(&mut session, "skill_list_docs", json!({"skill": "weather"})).await;
        snap!("trpc_list_docs_no_docs", none);
    });
}

#[test]
fn tools() {
    pollster::block_on(async {
        let mut session = start(trpc()).await;
        let before = run(
            &mut session,
            "skill_list_tools",
            json!({"skill": "weather"}),
        )
        .await;
        snap!("trpc_list_tools_before_load", before);
        let early = run(
            &mut session,
            "skill_select_tools",
            json!({"skill": "weather", "tools": ["geocode"]}),
        )
        .await;
        snap!("trpc_select_tools_before_load", early);

        run(&mut session, "skill_load", json!({"skill": "weather"})).await;
        let listed = run(
            &mut session,
            "skill_list_tools",
            json!({"skill": "weather"}),
        )
        .await;
        snap!("trpc_list_tools", listed.clone());

        let add = run(
            &mut session,
            "skill_select_tools",
            json!({"skill": "weather", "tools": ["send_alert"], "mode": "add"}),
        )
        .await;
        snap!("trpc_select_tools_add", add);
        // The listing names the declared tools, selected or not.
        let again = run(
            &mut session,
            "skill_list_tools",
            json!({"skill_name": "weather"}),
        )
        .await;
        assert_eq!(
            again.split_once("---\n").map(|r| r.1),
            listed.split_once("---\n").map(|r| r.1)
        );

        let default = run(
            &mut session,
            "skill_select_tools",
            json!({"skill_name": "weather", "tools": ["get_forecast"]}),
        )
        .await;
        snap!("trpc_select_tools_default_replace", default);

        let replace = run(
            &mut session,
            "skill_select_tools",
            json!({"skill": "weather", "tools": ["geocode"], "mode": "replace"}),
        )
        .await;
        snap!("trpc_select_tools_replace", replace);

        let clear = run(
            &mut session,
            "skill_select_tools",
            json!({"skill": "weather", "mode": "clear"}),
        )
        .await;
        snap!("trpc_select_tools_clear", clear);

        let all = run(
            &mut session,
            "skill_select_tools",
            json!({"skill": "weather", "include_all_tools": true, "mode": "bogus"}),
        )
        .await;
        snap!("trpc_select_tools_all", all);

        let unknown = run(
            &mut session,
            "skill_select_tools",
            json!({"skill": "weather", "tools": ["teleport"]}),
        )
        .await;
        snap!("trpc_select_tools_unknown", unknown);

        let none = run(
            &mut session,
            "skill_list_tools",
            json!({"skill": "pdf-tools"}),
        )
        .await;
        snap!("trpc_list_tools_none_declared", none);
    });
}

#[test]
fn hidden_pool_tool_call() {
    pollster::block_on(async {
        let mut session = start(trpc()).await;
        let declared = run(&mut session, "get_forecast", json!({"lat": 1, "lon": 2})).await;
        snap!("trpc_pool_tool_not_active", declared);
        let undeclared = run(&mut session, "send_alert", json!({"text": "hi"})).await;
        snap!("trpc_pool_tool_undeclared", undeclared);
    });
}
