//! F-AGT-1: skills are a no-op when none are configured. An agent over an
//! empty provider sends, through the agent loop, the same bytes a plain
//! agent (instructions, its tools, the conversation) would: no skills
//! system block, no skill tools, on every wire format.

use std::sync::Arc;

use serde_json::json;
use skills_agent::{
    Agent, CacheStrategy, Message, ModelRequest, ModelResponse, RunEvent, Runner, ScriptedModel,
    SystemBlock, ToolCall, ToolSpec, tool_fn,
};
use skills_core::{InCodeProvider, SkillProvider};
use skills_models::wire;

const INSTRUCTIONS: &str = "You are a terse assistant.";

fn weather() -> ToolSpec {
    ToolSpec::new(
        "get_weather",
        "The weather in a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )
}

fn clock() -> ToolSpec {
    ToolSpec::new("clock", "The time.", json!({"type": "object"}))
}

/// What a plain agent without any skills support sends: its instructions
/// as the one system block, its tools sorted by name, the messages.
fn plain(messages: Vec<Message>, strategy: CacheStrategy, previous: Option<usize>) -> ModelRequest {
    let mut request = ModelRequest {
        system: vec![SystemBlock {
            text: INSTRUCTIONS.to_owned(),
            stable: true,
        }],
        tools: vec![clock(), weather()],
        messages,
        cache_breakpoints: Vec::new(),
    };
    request.place_breakpoints(strategy, previous);
    request
}

fn assert_same_bytes(got: &ModelRequest, want: &ModelRequest) {
    assert_eq!(
        wire::openai_chat(got, "m"),
        wire::openai_chat(want, "m"),
        "openai chat"
    );
    assert_eq!(
        wire::anthropic_messages(got, "m"),
        wire::anthropic_messages(want, "m"),
        "anthropic messages"
    );
    assert_eq!(got, want);
}

#[tokio::test]
async fn an_agent_with_an_empty_provider_sends_a_plain_agents_bytes() {
    let empty: Arc<dyn SkillProvider> =
        Arc::new(InCodeProvider::new(Vec::new()).expect("empty provider"));
    let agent = Agent::builder("assistant", empty)
        .instructions(INSTRUCTIONS)
        .tool(weather())
        .tool(clock())
        .build()
        .expect("agent");
    let weather_call = ToolCall::new("c1", "get_weather", json!({"city": "Oslo"}));
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::tool_calls("", vec![weather_call.clone()]),
        ModelResponse::text("Sunny."),
    ]));
    let runner = Runner::builder(model.clone())
        .handler("get_weather", tool_fn(|_| async { Ok("sunny".to_owned()) }))
        .build();
    let mut session = agent.start_session().await.expect("session");
    let events: Vec<RunEvent> =
        futures_util::StreamExt::collect(runner.run(&mut session, "Weather in Oslo?")).await;
    assert!(
        matches!(events.last(), Some(RunEvent::Finished { .. })),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, RunEvent::Skill { .. })),
        "no skill events: {events:?}"
    );

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let strategy = skills_agent::Model::cache_strategy(model.as_ref());
    let first = plain(vec![Message::user("Weather in Oslo?")], strategy, None);
    assert_same_bytes(&requests[0], &first);
    let second = plain(
        vec![
            Message::user("Weather in Oslo?"),
            requests[1].messages[1].clone(),
            requests[1].messages[2].clone(),
        ],
        strategy,
        Some(0),
    );
    assert_same_bytes(&requests[1], &second);
    // The two appended messages are the answer and the tool result, nothing
    // skills-related.
    assert_eq!(requests[1].messages[1].tool_calls, [weather_call]);
    assert_eq!(requests[1].messages[2].content, "sunny");
    for request in &requests {
        for name in [
            "load_skill",
            "read_skill_file",
            "skill_load",
            "search_skills",
        ] {
            assert!(request.tool(name).is_none(), "{name} offered");
        }
        assert!(!request.system_text().contains("skill"));
    }
}
