//! The Eino surface: one load tool whose description may carry the catalog.

use std::sync::Arc;

use serde_json::json;
use skills_agent::{EinoOptions, Surface};

use super::{builder, pretty, run, start};

async fn snapshot_variant(label: &str, options: EinoOptions) {
    let tool = options.tool_name.clone();
    let mut session = start(builder().surface(Surface::Eino(options))).await;
    snap!(format!("eino_{label}_spec"), pretty(&session.tools()));
    let system = session.build_request().system_text();
    snap!(format!("eino_{label}_system"), system);
    let load = run(&mut session, &tool, json!({"skill": "pdf-tools"})).await;
    snap!(format!("eino_{label}_load"), load);
}

#[test]
fn default_options() {
    pollster::block_on(snapshot_variant("default", EinoOptions::default()));
}

#[test]
fn custom_name_and_description_hook() {
    let options = EinoOptions::default()
        .with_tool_name("use_skill")
        .with_description_hook(Arc::new(|catalog: &str, default: &str| {
            format!(
                "Office skills ({} characters of catalog follow).\n{catalog}\n\nDefault text was: {default}",
                catalog.len()
            )
        }));
    pollster::block_on(snapshot_variant("custom", options));
}

#[test]
fn catalog_in_system_prompt() {
    let options = EinoOptions::default().with_catalog_in_description(false);
    pollster::block_on(snapshot_variant("prompt_catalog", options));
}

#[test]
fn errors() {
    pollster::block_on(async {
        let mut session = start(builder().surface(Surface::Eino(EinoOptions::default()))).await;
        let unknown = run(&mut session, "skill", json!({"skill": "pdf"})).await;
        snap!("eino_load_unknown", unknown);
        let wrong_arg = run(&mut session, "skill", json!({"name": "pdf-tools"})).await;
        snap!("eino_load_bad_arguments", wrong_arg);
    });
}
