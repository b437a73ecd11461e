//! Skills defined in code have no `SKILL.md` file and no path: they sit at
//! their name, and the server writes a `SKILL.md` from their fields whose
//! frontmatter any YAML parser reads back as the listed frontmatter.

use std::sync::Arc;

use rmcp::model::{ReadResourceRequestParams, SkillResources};
use skills_core::{InCodeProvider, Origin, ValidationOptions, define_skill, parse_skill_md};

use crate::{bytes_of, connect};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_code_skill_is_served_at_its_name_with_a_written_skill_md() {
    let provider = InCodeProvider::new([define_skill(
        "weather",
        "Answers weather questions: \"rain\" or 'sun'. Use for weather.",
    )
    .body("Look the city up, then answer.")
    .license("MIT")
    .metadata("team", "forecasts")
    .resource("references/cities.md", "Paris\nOslo\n")
    .build()
    .unwrap()])
    .unwrap();
    let server = skills_mcp::SkillsServer::builder(Arc::new(provider))
        .build()
        .await
        .unwrap();
    let client = connect(&server, ()).await;

    let skills = client.list_all_skills().await.unwrap();
    assert_eq!(skills.len(), 1);
    let skill = &skills[0];
    assert_eq!(skill.uri, "skill://weather/SKILL.md");
    let frontmatter = serde_json::to_value(&skill.frontmatter).unwrap();
    assert_eq!(
        frontmatter,
        serde_json::json!({
            "name": "weather",
            "description": "Answers weather questions: \"rain\" or 'sun'. Use for weather.",
            "license": "MIT",
            "metadata": {"team": "forecasts"},
        })
    );
    let SkillResources::Files(files) = &skill.resources else {
        panic!("a static manifest");
    };
    assert_eq!(files.len(), 2);
    for file in files {
        let read = client
            .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
            .await
            .unwrap();
        file.verify(&bytes_of(&read.contents[0])).unwrap();
    }
    // The written SKILL.md parses back to the same skill, also under the
    // strict (StrictYAML) rules.
    let read = client
        .read_resource(ReadResourceRequestParams::new(skill.uri.clone()))
        .await
        .unwrap();
    let text = String::from_utf8(bytes_of(&read.contents[0])).unwrap();
    let parsed = parse_skill_md(
        &text,
        Origin::new(Some("weather/SKILL.md"), Some("weather")),
        &ValidationOptions::strict(),
    );
    assert!(parsed.is_valid(), "{text}\n{:#?}", parsed.diagnostics);
    let document = parsed.document.expect("parses");
    assert_eq!(document.metadata.name.as_str(), "weather");
    assert_eq!(
        document.metadata.description,
        "Answers weather questions: \"rain\" or 'sun'. Use for weather."
    );
    assert_eq!(document.metadata.license.as_deref(), Some("MIT"));
    assert_eq!(document.metadata.metadata["team"], "forecasts");
    assert_eq!(document.body, "Look the city up, then answer.");
    client.cancel().await.unwrap();
}
