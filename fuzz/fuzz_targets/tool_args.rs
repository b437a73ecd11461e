//! Tool calls as a model sends them: any tool name of every surface preset
//! (and unknown ones) with any JSON arguments, dispatched through the public
//! `Session::handle_tool_call` over an in-code provider, then a request is
//! built. Nothing may panic and every handled call gets a tool result.
//!
//! Input: up to eight calls, each `[selector][length][length bytes of JSON]`;
//! the first byte of the input picks the agent configuration. Arguments that
//! are not JSON are sent as a JSON string.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use skills_agent::{
    Agent, Dispatch, EinoOptions, Lifetime, Materialization, Message, Role, Surface, ToolCall,
    ToolSpec,
};
use skills_core::{InCodeProvider, InCodeSkill, SkillProvider, define_skill};

/// Tool names a call may use; the selector byte picks one.
const TOOLS: &[&str] = &[
    "load_skill",
    "read_skill_file",
    "skill_list",
    "skill_load",
    "skill_list_docs",
    "skill_select_docs",
    "skill_list_tools",
    "skill_select_tools",
    "search_skills",
    "skill",
    "get_weather",
    "user_tool",
    "no_such_tool",
    "",
];

fn skills() -> Vec<InCodeSkill> {
    vec![
        define_skill(
            "pdf-forms",
            "Fills PDF forms. Use when the user shares a PDF form.",
        )
        .body("# PDF forms\n\nList the fields first.\n")
        .resource(
            "references/fields.md",
            "Field names are case sensitive.\nDates use ISO 8601.\n",
        )
        .resource("references/signing.md", "Never sign.\n")
        .resource("scripts/fill.py", "print('fill')\n")
        .resource("assets/form.txt", "NAME: ____\n")
        .build()
        .expect("valid skill"),
        define_skill("weather", "Answers weather questions. Use for weather.")
            .body("Look the city up.\n\nTools:\n- get_weather\n")
            .build()
            .expect("valid skill"),
        define_skill(
            "git-commit",
            "Writes commit messages. Use for commit messages.",
        )
        .body("Summarise the diff.\n")
        .build()
        .expect("valid skill"),
    ]
}

fn agents() -> &'static Vec<Agent> {
    static AGENTS: OnceLock<Vec<Agent>> = OnceLock::new();
    AGENTS.get_or_init(|| {
        let provider: Arc<dyn SkillProvider> =
            Arc::new(InCodeProvider::new(skills()).expect("distinct names"));
        let schema = serde_json::json!({"type": "object", "properties": {}});
        let configs: Vec<(Surface, Materialization, Lifetime)> = vec![
            (
                Surface::Default,
                Materialization::ToolResult,
                Lifetime::Session,
            ),
            (Surface::Trpc, Materialization::ToolResult, Lifetime::Turn),
            (
                Surface::Eino(EinoOptions::default()),
                Materialization::ToolResult,
                Lifetime::Session,
            ),
            (
                Surface::Default,
                Materialization::SystemMessage,
                Lifetime::Once,
            ),
            (
                Surface::Trpc,
                Materialization::SystemMessage,
                Lifetime::Session,
            ),
        ];
        configs
            .into_iter()
            .map(|(surface, materialization, lifetime)| {
                Agent::builder("fuzz", Arc::clone(&provider))
                    .instructions("You are a fuzzing target.")
                    .surface(surface)
                    .materialization(materialization)
                    .lifetime(lifetime)
                    .search(true)
                    .tool(ToolSpec::new("user_tool", "A user tool.", schema.clone()))
                    .pool_tool(ToolSpec::new("get_weather", "Weather.", schema.clone()))
                    .build()
                    .expect("agent builds")
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, mut rest)) = data.split_first() else {
        return;
    };
    let agents = agents();
    let agent = &agents[usize::from(first) % agents.len()];
    let mut session = pollster::block_on(agent.start_session()).expect("session starts");
    pollster::block_on(session.push_user("help me")).expect("user message");
    let mut n = 0;
    while let [selector, len, tail @ ..] = rest {
        if n == 8 {
            break;
        }
        n += 1;
        let len = usize::from(*len).min(tail.len());
        let (json, next) = tail.split_at(len);
        rest = next;
        let name = TOOLS[usize::from(*selector) % TOOLS.len()];
        let arguments = serde_json::from_slice::<Value>(json)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(json).into_owned()));
        let call = ToolCall::new(format!("call_{n}"), name, arguments);
        session.push_assistant(Message::assistant_with_calls("", vec![call.clone()]));
        match pollster::block_on(session.handle_tool_call(&call)) {
            Dispatch::Handled(message) => {
                assert_eq!(message.role, Role::Tool);
            }
            Dispatch::External => {
                session.push_tool_result(&call.id, &call.name, "external result", false);
            }
            _ => {}
        }
        if selector & 0x80 != 0 {
            let _ = session.build_request();
        }
    }
    let request = session.build_request();
    let _ = serde_json::to_string(&request).expect("requests serialize");
});
