//! Hostile and malformed input from the model: every tool of every preset
//! answers with a short error result that says what was wrong and what is
//! available, and never panics.

use serde_json::{Value, json};
use skills_agent::{AgentBuilder, Dispatch, EinoOptions, Session, Surface};

use super::support::{builder_with, call_ok, dispatch_in_turn, full_library, plain_tool, start};

/// Error texts stay short whatever the input size.
const MAX_ERROR_CHARS: usize = 2_000;

fn huge(len: usize) -> String {
    "a".repeat(len)
}

fn megabyte() -> String {
    huge(1 << 20)
}

/// A builder over the full library with two pool tools (one declared by the
/// `weather` skill, one declared by nobody).
fn preset(surface: Surface, search: bool) -> AgentBuilder {
    builder_with(full_library())
        .0
        .surface(surface)
        .search(search)
        .pool_tool(plain_tool("get_weather"))
        .pool_tool(plain_tool("send_email"))
}

/// Dispatches `args` to `tool` and checks the error contract; returns the text.
fn expect_error(session: &mut Session, tool: &str, args: Value, needles: &[&str]) -> String {
    let shown = {
        let text = args.to_string();
        if text.len() > 120 {
            let head: String = text.chars().take(120).collect();
            format!("{head}… ({} bytes)", text.len())
        } else {
            text
        }
    };
    let Dispatch::Handled(message) = dispatch_in_turn(session, tool, args) else {
        panic!("`{tool}` with {shown} was not handled by the session");
    };
    assert!(
        message.is_error,
        "`{tool}` with {shown} should fail, got: {}",
        message.content
    );
    assert!(
        message.content.starts_with("Error: "),
        "`{tool}`: {}",
        message.content
    );
    assert!(
        message.content.chars().count() < MAX_ERROR_CHARS,
        "`{tool}` with {shown}: the error is {} characters long",
        message.content.chars().count()
    );
    for needle in needles {
        assert!(
            message.content.contains(needle),
            "`{tool}` with {shown}: expected {needle:?} in: {}",
            message.content
        );
    }
    message.content
}

/// Argument values of the wrong shape altogether.
fn wrong_shapes() -> Vec<Value> {
    vec![
        json!(5),
        json!(-1),
        json!(true),
        json!([1, 2]),
        json!("pdf-forms"),
        json!("{\"nope\": 1}"),
        json!("{not json"),
        Value::String(megabyte()),
    ]
}

#[test]
fn every_skill_tool_of_every_preset_rejects_wrong_shapes() {
    let presets = [
        ("default", preset(Surface::Default, false)),
        ("trpc", preset(Surface::Trpc, false)),
        ("eino", preset(Surface::Eino(EinoOptions::default()), false)),
        ("search", preset(Surface::Default, true)),
    ];
    for (label, builder) in presets {
        let agent = builder.build().expect("preset builds");
        let mut session = super::support::start_agent(&agent);
        for tool in agent.reserved_tool_names() {
            for args in wrong_shapes() {
                if tool == "skill_list" && args == json!("{\"nope\": 1}") {
                    // Decodes to `{"nope": 1}`: extra fields are ignored.
                    continue;
                }
                let text = expect_error(&mut session, &tool, args, &["Expected"]);
                assert!(text.contains("invalid arguments"), "{label}/{tool}: {text}");
            }
        }
        assert!(
            session.loaded().is_empty(),
            "{label}: a bad call loaded a skill"
        );
    }
}

#[test]
fn load_tools_reject_bad_names() {
    let presets = [
        (preset(Surface::Default, false), "load_skill", "name"),
        (preset(Surface::Trpc, false), "skill_load", "skill"),
        (
            preset(Surface::Eino(EinoOptions::default()), false),
            "skill",
            "skill",
        ),
        (
            preset(
                Surface::Eino(EinoOptions::default().with_tool_name("use_skill")),
                false,
            ),
            "use_skill",
            "skill",
        ),
    ];
    for (builder, tool, field) in presets {
        let mut session = start(builder);
        let invalid = ["invalid arguments", "Expected", field];
        for value in [json!(5), json!(["pdf-forms"]), Value::Null, json!({"a": 1})] {
            expect_error(&mut session, tool, json!({ field: value }), &invalid);
        }
        expect_error(&mut session, tool, json!({}), &["missing field", field]);
        expect_error(&mut session, tool, Value::Null, &["missing field", field]);
        expect_error(
            &mut session,
            tool,
            json!({"wrong": "pdf-forms"}),
            &["missing field", field],
        );
        let available = ["Available skills: csv-report, git-commit"];
        expect_error(&mut session, tool, json!({ field: megabyte() }), &available);
        expect_error(
            &mut session,
            tool,
            json!({ field: "no-such-skill", "extra": [1, 2, 3] }),
            &["no skill is named `no-such-skill`", available[0]],
        );
        expect_error(
            &mut session,
            tool,
            json!({ field: "" }),
            &["no skill is named", available[0]],
        );
        let hidden = expect_error(
            &mut session,
            tool,
            json!({ field: "deploy-prod" }),
            &["only be invoked by the user", available[0]],
        );
        assert!(
            !hidden.contains("DEPLOY-PROD-BODY"),
            "a refused load leaked the body"
        );
        assert!(session.loaded().is_empty());
    }
}

#[test]
fn available_skill_hint_omits_hidden_skills() {
    let mut session = start(preset(Surface::Default, false));
    let text = expect_error(
        &mut session,
        "load_skill",
        json!({"name": "nope"}),
        &["Available skills:"],
    );
    assert!(!text.contains("deploy-prod"), "{text}");
    assert!(text.contains("internal-notes"), "{text}");
}

#[test]
fn read_skill_file_rejects_bad_arguments() {
    let mut session = start(preset(Surface::Default, false));
    let tool = "read_skill_file";
    let invalid = ["invalid arguments", "Expected"];
    let cases = [
        json!({"skill": "pdf-forms"}),
        json!({"path": "references/fields.md"}),
        json!({"skill": 5, "path": "references/fields.md"}),
        json!({"skill": "pdf-forms", "path": ["references/fields.md"]}),
        json!({"skill": "pdf-forms", "path": null}),
        json!({"skill": "pdf-forms", "path": "references/fields.md", "start_line": -1}),
        json!({"skill": "pdf-forms", "path": "references/fields.md", "end_line": -3}),
        json!({"skill": "pdf-forms", "path": "references/fields.md", "start_line": "2"}),
        json!({"skill": "pdf-forms", "path": "references/fields.md", "start_line": 1.5}),
    ];
    for args in cases {
        expect_error(&mut session, tool, args, &invalid);
    }
    let fields = |extra: Value| {
        let mut args = json!({"skill": "pdf-forms", "path": "references/fields.md"});
        if let (Value::Object(a), Value::Object(b)) = (&mut args, extra) {
            a.extend(b);
        }
        args
    };
    expect_error(
        &mut session,
        tool,
        fields(json!({"start_line": 0})),
        &["bad line range", "start at 1"],
    );
    expect_error(
        &mut session,
        tool,
        fields(json!({"start_line": 0, "end_line": 0})),
        &["bad line range"],
    );
    expect_error(
        &mut session,
        tool,
        fields(json!({"start_line": 3, "end_line": 1})),
        &["bad line range", "before it starts"],
    );
    expect_error(
        &mut session,
        tool,
        fields(json!({"start_line": 50})),
        &["line"],
    );
    let files = "references/fields.md, references/signing.md, scripts/fill.py";
    expect_error(
        &mut session,
        tool,
        json!({"skill": "pdf-forms", "path": "missing.md"}),
        &["missing.md", files],
    );
    expect_error(
        &mut session,
        tool,
        json!({"skill": "csv-report", "path": "references/fields.md"}),
        &["references/columns.md"],
    );
    for path in [
        "../../etc/passwd",
        "references/../../../outside.md",
        "/etc/passwd",
        "",
        "C:\\Windows\\win.ini",
    ] {
        expect_error(
            &mut session,
            tool,
            json!({"skill": "pdf-forms", "path": path}),
            &[
                "is not a valid path inside the skill `pdf-forms`",
                "Files of `pdf-forms`: references/fields.md",
            ],
        );
    }
    expect_error(
        &mut session,
        tool,
        json!({"skill": "pdf-forms", "path": megabyte()}),
        &["too long"],
    );
    expect_error(
        &mut session,
        tool,
        json!({"skill": megabyte(), "path": "references/fields.md"}),
        &["no skill is named", "Available skills:"],
    );
    expect_error(
        &mut session,
        tool,
        json!({"skill": "no-such-skill", "path": "SKILL.md", "extra": 1}),
        &["no skill is named `no-such-skill`", "Available skills:"],
    );
    expect_error(
        &mut session,
        tool,
        json!({"skill": "deploy-prod", "path": "references/checklist.md"}),
        &["only be invoked by the user"],
    );
}

#[test]
fn trpc_tools_reject_bad_arguments() {
    let mut session = start(preset(Surface::Trpc, false));
    let invalid = ["invalid arguments", "Expected"];
    // Nothing loaded yet: selecting needs a loaded skill.
    expect_error(
        &mut session,
        "skill_select_docs",
        json!({"skill": "pdf-forms", "docs": ["references/fields.md"]}),
        &["not loaded", "skill_load"],
    );
    expect_error(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["get_weather"]}),
        &["not loaded", "skill_load"],
    );
    for tool in ["skill_list_docs", "skill_list_tools"] {
        expect_error(&mut session, tool, json!({"skill": 5}), &invalid);
        expect_error(&mut session, tool, json!({}), &["missing field `skill`"]);
        expect_error(
            &mut session,
            tool,
            json!({"skill": megabyte()}),
            &["Available skills:"],
        );
        expect_error(
            &mut session,
            tool,
            json!({"skill": "no-such-skill"}),
            &["no skill is named `no-such-skill`", "Available skills:"],
        );
    }
    // skill_load with bad docs.
    let docs_hint = "Available docs: references/fields.md, references/signing.md";
    expect_error(
        &mut session,
        "skill_load",
        json!({"skill": "pdf-forms", "docs": ["nope.md"]}),
        &["has no doc `nope.md`", docs_hint],
    );
    expect_error(
        &mut session,
        "skill_load",
        json!({"skill": "pdf-forms", "docs": [megabyte()]}),
        &["has no doc", docs_hint],
    );
    expect_error(
        &mut session,
        "skill_load",
        json!({"skill": "pdf-forms", "docs": "references/fields.md"}),
        &invalid,
    );
    expect_error(
        &mut session,
        "skill_load",
        json!({"skill": "pdf-forms", "include_all_docs": "yes"}),
        &invalid,
    );
    let many: Vec<String> = (0..40).map(|i| format!("d{i}.md")).collect();
    expect_error(
        &mut session,
        "skill_load",
        json!({"skill": "pdf-forms", "docs": many}),
        &["at most 32 docs"],
    );
    assert!(session.loaded().is_empty(), "a failed load must not load");

    call_ok(&mut session, "skill_load", json!({"skill": "pdf-forms"}));
    call_ok(&mut session, "skill_load", json!({"skill": "weather"}));
    expect_error(
        &mut session,
        "skill_select_docs",
        json!({"skill": "pdf-forms", "docs": ["nope.md"]}),
        &["has no doc `nope.md`", docs_hint],
    );
    // As in trpc-agent, an unknown mode (however long) means `replace`.
    for mode in [json!("sideways"), json!(megabyte())] {
        let text = call_ok(
            &mut session,
            "skill_select_docs",
            json!({"skill": "pdf-forms", "mode": mode}),
        );
        assert!(
            text.starts_with(r#"{"skill":"pdf-forms","mode":"replace""#),
            "{text}"
        );
    }
    expect_error(
        &mut session,
        "skill_select_docs",
        json!({"skill": "pdf-forms", "docs": 5}),
        &invalid,
    );
    expect_error(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": ["nope"]}),
        &[
            "no selectable tool `nope`",
            "Selectable tools: get_weather, send_email",
        ],
    );
    expect_error(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": [megabyte()]}),
        &["no selectable tool", "Selectable tools:"],
    );
    expect_error(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "tools": "get_weather"}),
        &invalid,
    );
    expect_error(
        &mut session,
        "skill_select_tools",
        json!({"skill": "weather", "mode": 3}),
        &invalid,
    );
    // skill_list takes no arguments; wrong shapes are refused, extras ignored.
    for args in [json!(5), json!("list"), json!([1])] {
        expect_error(&mut session, "skill_list", args, &invalid);
    }
    for args in [Value::Null, json!({}), json!({"verbose": true})] {
        let text = call_ok(&mut session, "skill_list", args);
        assert!(text.contains(r#""pdf-forms""#), "{text}");
    }
}

#[test]
fn search_skills_rejects_bad_queries() {
    let mut session = start(preset(Surface::Default, true));
    let tool = "search_skills";
    let invalid = ["invalid arguments", "Expected"];
    for args in [
        json!({}),
        json!({"query": 5}),
        json!({"query": ["pdf"]}),
        json!({"query": null}),
        json!({"query": "pdf", "limit": -1}),
        json!({"query": "pdf", "limit": "five"}),
    ] {
        expect_error(&mut session, tool, args, &invalid);
    }
    let text = expect_error(
        &mut session,
        tool,
        json!({"query": megabyte()}),
        &["too long", "at most"],
    );
    assert!(!text.contains(&huge(200)), "the query was echoed: {text}");
    // Edge values that are fine: clamped limits and an empty query.
    for args in [
        json!({"query": "pdf", "limit": 0}),
        json!({"query": "pdf", "limit": 1_000_000}),
        json!({"query": ""}),
    ] {
        call_ok(&mut session, tool, args);
    }
}

#[test]
fn unknown_tools_list_what_is_available() {
    let presets = [
        (
            preset(Surface::Default, false),
            "load_skill, read_skill_file",
        ),
        (preset(Surface::Trpc, false), "skill_list, skill_list_docs"),
        (
            preset(Surface::Eino(EinoOptions::default()), false),
            "skill",
        ),
        (preset(Surface::Default, true), "search_skills"),
    ];
    for (builder, listed) in presets {
        let mut session = start(builder);
        for name in ["no_such_tool", "", "bash"] {
            let text = expect_error(
                &mut session,
                name,
                json!({}),
                &["there is no tool named", "Available tools:", listed],
            );
            assert!(
                !text.contains("get_weather"),
                "hidden pool tool listed: {text}"
            );
        }
        expect_error(
            &mut session,
            &megabyte(),
            json!({}),
            &["there is no tool named", "Available tools:"],
        );
    }
    // A tool of another preset is unknown here.
    let mut session = start(preset(Surface::Trpc, false));
    expect_error(
        &mut session,
        "load_skill",
        json!({"name": "pdf-forms"}),
        &["there is no tool named `load_skill`", "skill_load"],
    );
}

#[test]
fn hidden_pool_tools_are_refused_with_a_reason() {
    for surface in [
        Surface::Default,
        Surface::Trpc,
        Surface::Eino(EinoOptions::default()),
    ] {
        let mut session = start(preset(surface, false));
        expect_error(
            &mut session,
            "get_weather",
            json!({"city": "Oslo"}),
            &["`get_weather` is not active", "weather"],
        );
        expect_error(
            &mut session,
            "send_email",
            json!({}),
            &["`send_email` is not active", "No skill declares it"],
        );
    }
}

#[test]
fn double_encoded_arguments_are_decoded() {
    let mut session = start(preset(Surface::Default, false));
    let text = call_ok(
        &mut session,
        "load_skill",
        Value::String("{\"name\": \"pdf-forms\"}".to_owned()),
    );
    assert!(text.contains("PDF-FORMS-BODY"), "{text}");
}

#[test]
fn extra_fields_beside_valid_arguments_are_ignored() {
    let mut session = start(preset(Surface::Default, false));
    let text = call_ok(
        &mut session,
        "load_skill",
        json!({"name": "pdf-forms", "reason": "the user asked"}),
    );
    assert!(text.contains("PDF-FORMS-BODY"), "{text}");
}
