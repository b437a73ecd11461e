//! The tool specs of every preset (`Session::tools()`), so that any change to
//! a name, a description or an argument schema shows up in review.

use std::sync::Arc;

use serde_json::json;
use skills_agent::{CatalogMode, EinoOptions, Profile, Surface};
use skills_exec::LocalRuntime;

use super::{builder, call_tool, pool_tools, pretty, start, user_tool};

#[test]
fn every_preset() {
    let root = tempfile::tempdir().expect("temp dir");
    let runtime = Arc::new(LocalRuntime::builder(root.path()).build().expect("runtime"));
    pollster::block_on(async {
        let presets = [
            ("default", builder()),
            ("default_search", builder().search(true)),
            ("trpc", builder().surface(Surface::Trpc)),
            ("trpc_search", builder().surface(Surface::Trpc).search(true)),
            (
                "eino",
                builder().surface(Surface::Eino(EinoOptions::default())),
            ),
            ("on_demand", builder().catalog(CatalogMode::OnDemand)),
            // The run tools' names, descriptions and argument schemas.
            (
                "full",
                builder().profile(Profile::Full).runtime(runtime.clone()),
            ),
            (
                "trpc_full",
                builder()
                    .surface(Surface::Trpc)
                    .profile(Profile::Full)
                    .runtime(runtime.clone()),
            ),
        ];
        for (label, builder) in presets {
            let session = start(builder).await;
            snap!(format!("tools_{label}"), pretty(&session.tools()));
        }
    });
}

#[test]
fn pool_tools_appear_after_load() {
    pollster::block_on(async {
        let mut builder = builder().tool(user_tool());
        for tool in pool_tools() {
            builder = builder.pool_tool(tool);
        }
        let mut session = start(builder).await;
        let before: Vec<String> = session.tools().into_iter().map(|t| t.name).collect();
        call_tool(&mut session, "load_skill", json!({"name": "weather"})).await;
        let after: Vec<String> = session.tools().into_iter().map(|t| t.name).collect();
        snap!(
            "tools_pool_before_and_after_load",
            format!(
                "before: {}\nafter:  {}",
                before.join(", "),
                after.join(", ")
            )
        );
    });
}
