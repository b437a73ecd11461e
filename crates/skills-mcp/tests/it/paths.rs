//! Skill paths as rmcp's folder catalog has them: multi-segment skills
//! (`acme/billing`), skills nested in other skills (`acme/billing/refunds`),
//! and skills that cannot be listed left out without failing the listing.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::{
    GetSkillRequestParams, ReadResourceDirectoryRequestParams, ReadResourceRequestParams,
    SkillResources,
};
use rmcp::service::RunningService;
use skills_core::SkillProvider as _;
use skills_fs::{FsOptions, FsProvider};
use skills_testkit::fixture::SkillDir;

use crate::{assert_like_oracle, bytes_of, connect, server_for, write};

/// Multi-segment and nested skills, a folder of groups, a file name that
/// needs percent-encoding:
///
/// ```text
/// acme/billing/SKILL.md                 billing
/// acme/billing/references/rates.md
/// acme/billing/refunds/SKILL.md         refunds (nested in billing)
/// acme/billing/refunds/scripts/refund.sh
/// acme/billing/refunds/policy notes.md
/// acme/shipping/SKILL.md                shipping
/// solo/SKILL.md                         solo
/// solo/assets/logo.png
/// ```
pub(crate) fn nested_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let skill = |path: &str, name: &str, extra: &str| {
        extra
            .lines()
            .fold(
                SkillDir::new(name, &format!("The {name} skill. Use it for {name}.")),
                SkillDir::frontmatter_line,
            )
            .in_folder(path)
            .body(format!("# {name}\n"))
            .write_in(root)
            .unwrap();
    };
    skill(
        "acme/billing",
        "billing",
        "license: MIT\nmetadata:\n  team: money\n",
    );
    write(&root.join("acme/billing/references/rates.md"), b"# Rates\n");
    skill(
        "acme/billing/refunds",
        "refunds",
        "allowed-tools: Read Grep\n",
    );
    write(
        &root.join("acme/billing/refunds/scripts/refund.sh"),
        b"#!/bin/sh\necho refund\n",
    );
    write(
        &root.join("acme/billing/refunds/policy notes.md"),
        b"30 days\n",
    );
    skill("acme/shipping", "shipping", "");
    skill("solo", "solo", "");
    write(&root.join("solo/assets/logo.png"), crate::PNG);
    dir
}

/// A client of a server over `provider`.
async fn serve(provider: FsProvider) -> RunningService<RoleClient, ()> {
    let server = skills_mcp::SkillsServer::builder(Arc::new(provider))
        .build()
        .await
        .unwrap();
    connect(&server, ()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_and_multi_segment_skills_answer_like_rmcps_folder_catalog() {
    let dir = nested_tree();
    let oracle = SkillCatalog::from_dir(dir.path()).unwrap();
    let server = server_for(dir.path(), 100).await;
    let client = connect(&server, ()).await;

    let ours = assert_like_oracle(
        &client,
        &oracle,
        &[
            "skill://acme/billing",
            "skill://acme/billing/references",
            "skill://acme/billing/refunds",
            "skill://acme/billing/refunds/scripts",
            "skill://acme/shipping",
            "skill://solo",
            "skill://solo/assets",
        ],
    )
    .await;
    let uris: Vec<&str> = ours.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/SKILL.md",
            "skill://acme/billing/refunds/SKILL.md",
            "skill://acme/shipping/SKILL.md",
            "skill://solo/SKILL.md",
        ]
    );
    // The nested skill's files are also the enclosing skill's.
    let billing = &ours[0];
    let SkillResources::Files(files) = &billing.resources else {
        panic!("a static manifest");
    };
    assert!(
        files
            .iter()
            .any(|f| f.uri == "skill://acme/billing/refunds/scripts/refund.sh")
    );

    // A group folder is no skill's folder, for either server.
    for uri in ["skill://acme", "skill://billing"] {
        assert!(oracle.read_resource_directory(uri).is_err());
        assert!(
            client
                .read_resource_directory(ReadResourceDirectoryRequestParams::new(uri))
                .await
                .is_err(),
            "{uri}"
        );
    }
    // The old single-segment spelling names nothing.
    assert!(
        client
            .get_skill(GetSkillRequestParams::new("skill://billing/SKILL.md"))
            .await
            .is_err()
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_follows_the_uris() {
    let dir = nested_tree();
    let server = server_for(dir.path(), 3).await;
    let client = connect(&server, ()).await;
    let first = client.list_skills(None).await.unwrap();
    let names: Vec<&str> = first.skills.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["billing", "refunds", "shipping"]);
    assert_eq!(
        first.next_cursor.as_deref(),
        Some("skill://acme/shipping/SKILL.md")
    );
    let second = client
        .list_skills(Some(
            rmcp::model::PaginatedRequestParams::default().with_cursor(first.next_cursor),
        ))
        .await
        .unwrap();
    let names: Vec<&str> = second.skills.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["solo"]);
    assert_eq!(second.next_cursor, None);
    client.cancel().await.unwrap();
}

/// A skill whose name the extension forbids (over 64 characters: lenient
/// loading lets it load) and one whose `SKILL.md` gives a title as its name:
/// left out of `skills/list` and `resources/list`, refused by `skills/get`
/// with the reason, still read by `resources/read` and `load_skill`. The
/// others are listed as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_that_cannot_be_listed_is_left_out_and_the_rest_listed() {
    let dir = nested_tree();
    let long = "a".repeat(70);
    write(
        &dir.path().join(&long).join("SKILL.md"),
        format!("---\nname: {long}\ndescription: A name too long for MCP.\n---\nLong.\n")
            .as_bytes(),
    );
    write(
        &dir.path().join("pdf-tools/SKILL.md"),
        b"---\nname: PDF Tools\ndescription: Works with PDFs.\n---\nPDF.\n",
    );
    let provider = FsProvider::new(
        vec![dir.path().to_path_buf()],
        FsOptions::default().with_cooldown(Duration::ZERO),
    );
    let catalog = provider.list().await.unwrap();
    assert!(catalog.contains(&long), "lenient loading loads it");
    assert!(catalog.contains("pdf-tools"), "under its folder name");
    let client = serve(provider).await;

    let skills = client.list_all_skills().await.unwrap();
    let names: Vec<&str> = skills.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["billing", "refunds", "shipping", "solo"]);
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources.len(), 4);

    for (uri, why) in [
        (format!("skill://{long}/SKILL.md"), "invalid skill name"),
        ("skill://pdf-tools/SKILL.md".to_owned(), "PDF Tools"),
    ] {
        let err = client
            .get_skill(GetSkillRequestParams::new(uri.clone()))
            .await
            .unwrap_err();
        let rmcp::ServiceError::McpError(err) = err else {
            panic!("not an MCP error: {err}");
        };
        assert_eq!(err.code.0, -32602, "{uri}");
        assert!(err.message.contains(why), "{uri}: {}", err.message);
        let read = client
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        assert!(!bytes_of(&read.contents[0]).is_empty());
    }
    let loaded = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("load_skill").with_arguments(
                serde_json::json!({"name": "pdf-tools"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    assert_ne!(loaded.is_error, Some(true));
    client.cancel().await.unwrap();
}

/// Two skills of one name at different paths: the provider's rule (the
/// first found wins, with a `skill-duplicate` warning) decides which one the
/// server lists; the other's URIs name nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_used_twice_follows_the_providers_rule() {
    let dir = nested_tree();
    write(
        &dir.path().join("zeta/billing/SKILL.md"),
        b"---\nname: billing\ndescription: Another billing.\n---\nOther.\n",
    );
    let provider = FsProvider::new(vec![dir.path().to_path_buf()], FsOptions::default());
    let warnings: Vec<String> = provider
        .diagnostics()
        .await
        .into_iter()
        .filter(|d| d.code == skills_core::Code::SkillDuplicate)
        .map(|d| d.message)
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("zeta/billing"), "{warnings:?}");
    let client = serve(provider).await;
    let skills = client.list_all_skills().await.unwrap();
    let billing: Vec<&str> = skills
        .iter()
        .filter(|s| s.name() == "billing")
        .map(|s| s.uri.as_str())
        .collect();
    assert_eq!(billing, ["skill://acme/billing/SKILL.md"]);
    assert!(
        client
            .read_resource(ReadResourceRequestParams::new(
                "skill://zeta/billing/SKILL.md"
            ))
            .await
            .is_err()
    );
    client.cancel().await.unwrap();
}

/// A folder path the server could not serve back as a URI gets the name.
#[test]
fn skill_paths_end_in_the_name() {
    let meta = |name: &str, path: &str| {
        skills_core::SkillMetadata::new(skills_core::SkillName::parse(name).unwrap(), "x")
            .with_path(path)
    };
    assert_eq!(
        skills_mcp::skill_path(&meta("billing", "acme/billing")),
        "acme/billing"
    );
    assert_eq!(
        skills_mcp::skill_path(&meta("pdf-tools", "docs/pdf")),
        "docs/pdf-tools"
    );
}

/// Two roots put different files at one URI: `billing` (first root) has a
/// plain folder `refunds/` with `notes.md`, the second root has the skill
/// `refunds` at the same path with its own `notes.md`. The URI serves the
/// nested skill's file, so `billing`'s manifest leaves its copy out (with a
/// warning): every digest listed matches what `resources/read` serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_two_roots_put_at_one_uri_is_listed_once() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    write(
        &first.path().join("acme/billing/SKILL.md"),
        b"---\nname: billing\ndescription: Bills.\n---\nBilling.\n",
    );
    write(
        &first.path().join("acme/billing/refunds/notes.md"),
        b"first\n",
    );
    write(&first.path().join("acme/billing/rates.md"), b"rates\n");
    write(
        &second.path().join("acme/billing/refunds/SKILL.md"),
        b"---\nname: refunds\ndescription: Refunds.\n---\nRefunds.\n",
    );
    write(
        &second.path().join("acme/billing/refunds/notes.md"),
        b"second\n",
    );
    let provider = FsProvider::new(
        [first.path().to_path_buf(), second.path().to_path_buf()],
        FsOptions::default(),
    );
    let client = serve(provider).await;
    let skills = client.list_all_skills().await.unwrap();
    let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/SKILL.md",
            "skill://acme/billing/refunds/SKILL.md"
        ]
    );
    let notes = "skill://acme/billing/refunds/notes.md";
    for skill in &skills {
        let SkillResources::Files(files) = &skill.resources else {
            panic!("a static manifest");
        };
        let listed: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
        // billing keeps its own files, not the one the URI does not serve.
        if skill.name() == "billing" {
            assert_eq!(
                listed,
                [
                    "skill://acme/billing/SKILL.md",
                    "skill://acme/billing/rates.md"
                ]
            );
        }
        for file in files {
            let read = client
                .read_resource(ReadResourceRequestParams::new(file.uri.clone()))
                .await
                .unwrap();
            file.verify(&bytes_of(&read.contents[0])).unwrap();
        }
    }
    let read = client
        .read_resource(ReadResourceRequestParams::new(notes))
        .await
        .unwrap();
    assert_eq!(bytes_of(&read.contents[0]), b"second\n");
    client.cancel().await.unwrap();
}
