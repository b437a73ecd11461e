//! Whole requests after each step of a short conversation, in the default
//! mode and in the legacy system-message mode, and the wire bodies of one
//! request with Anthropic cache breakpoints.

use std::sync::Arc;

use serde_json::json;
use skills_agent::{
    Agent, AgentBuilder, CacheStrategy, CatalogMode, Materialization, Message, Session,
};
use skills_core::SkillProvider;

use super::{
    INSTRUCTIONS, SwappableProvider, builder, call_tool, changed_provider, pretty, provider,
    reindent, start, user_tool,
};

fn swappable() -> (Arc<SwappableProvider>, AgentBuilder) {
    let swappable = Arc::new(SwappableProvider::new(provider()));
    let dynamic: Arc<dyn SkillProvider> = swappable.clone();
    let builder = Agent::builder("assistant", dynamic)
        .instructions(INSTRUCTIONS)
        .tool(user_tool());
    (swappable, builder)
}

/// Runs the conversation up to the catalog change, calling `step` with a
/// label after each step.
async fn converse(
    session: &mut Session,
    provider: &SwappableProvider,
    mut step: impl FnMut(&str, &mut Session),
) {
    session
        .push_user("Please pull the tables out of q3-report.pdf.")
        .await
        .expect("user turn");
    step("1_user", session);
    call_tool(session, "load_skill", json!({"name": "pdf-tools"})).await;
    step("2_load", session);
    call_tool(
        session,
        "read_skill_file",
        json!({"skill": "pdf-tools", "path": "references/guide.md"}),
    )
    .await;
    step("3_read", session);
    session.push_assistant(Message::assistant(
        "Here are the three tables from q3-report.pdf.",
    ));
    session
        .push_user("Thanks. Now draft a commit message for them with $commit-message.")
        .await
        .expect("user turn with a mention");
    step("4_mention", session);
    provider.replace(changed_provider());
    let delta = session.refresh_catalog().await.expect("list works");
    assert!(delta.is_some(), "the skill set changed");
    step("5_delta", session);
}

async fn conversation(label: &str, materialization: Materialization) {
    let (provider, builder) = swappable();
    let mut session = start(builder.materialization(materialization)).await;
    converse(&mut session, &provider, |step, session| {
        snap!(
            format!("request_{label}_{step}"),
            pretty(&session.build_request())
        );
    })
    .await;
    let report = session.compact(
        "The user asked for the tables of q3-report.pdf and got them, then asked for a commit message.",
    );
    let order: Vec<String> = session.state().in_use_order().map(str::to_owned).collect();
    let request = pretty(&session.build_request());
    snap!(
        format!("request_{label}_6_compact"),
        format!("report: {report:?}\nloaded, least recently used first: {order:?}\n---\n{request}")
    );
}

#[test]
fn default_mode() {
    pollster::block_on(conversation("default", Materialization::ToolResult));
}

#[test]
fn system_message_mode() {
    pollster::block_on(conversation(
        "system_message",
        Materialization::SystemMessage,
    ));
}

#[test]
fn on_demand_first_request() {
    pollster::block_on(async {
        let mut session = start(builder().catalog(CatalogMode::OnDemand)).await;
        session
            .push_user("Please pull the tables out of q3-report.pdf.")
            .await
            .expect("user turn");
        snap!("request_on_demand_1_user", pretty(&session.build_request()));
    });
}

#[test]
fn wire_bodies_with_anthropic_breakpoints() {
    pollster::block_on(async {
        let (provider, builder) = swappable();
        let mut session = start(builder.cache(CacheStrategy::Anthropic)).await;
        converse(&mut session, &provider, |step, session| {
            // Requests go out after the user turn and after each tool result.
            // The previous-request breakpoint of the last one sits at the end
            // of the request the latest answer (message 5) replied to: index
            // 4. (Request 4_mention was built but never answered, so nothing
            // says the provider cached it.)
            if step != "5_delta" {
                session.build_request();
            }
        })
        .await;
        let request = session.build_request();
        snap!(
            "wire_anthropic_breakpoints",
            format!("{:?}", request.cache_breakpoints)
        );
        snap!(
            "wire_openai_chat",
            reindent(&skills_models::wire::openai_chat(&request, "gpt-test"))
        );
        snap!(
            "wire_anthropic_messages",
            reindent(&skills_models::wire::anthropic_messages(
                &request,
                "claude-test"
            ))
        );
    });
}
