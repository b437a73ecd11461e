//! The config file (`docs/config.md`): tiers, priorities and the catalog
//! budget from the user's and the project's files, `--config` and
//! `$SKILLS_CONFIG`, as `skills catalog` shows them.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills").to_owned()
}

/// `skills ARGS` in `cwd`, with `config_home` as `$XDG_CONFIG_HOME`.
fn skills(cwd: &Path, config_home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills"));
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("SKILLS_ROOT")
        .env_remove("SKILLS_CONFIG")
        .env_remove("RUST_LOG")
        .env("XDG_CONFIG_HOME", config_home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The names listed, with whether each has its description.
fn listed(catalog: &str) -> Vec<(String, bool)> {
    catalog
        .lines()
        .filter_map(|l| l.strip_prefix("<skill name=\""))
        .map(|l| {
            let end = l.find('"').unwrap();
            (l[..end].to_owned(), l.ends_with("</skill>"))
        })
        .collect()
}

#[test]
fn the_project_file_beats_the_user_file_skill_by_skill() {
    let repo = tempfile::tempdir().unwrap();
    fs::create_dir(repo.path().join(".git")).unwrap();
    let deep = repo.path().join("src/deep");
    fs::create_dir_all(&deep).unwrap();
    let home = tempfile::tempdir().unwrap();
    fs::create_dir_all(home.path().join("skills")).unwrap();
    fs::write(
        home.path().join("skills/config.toml"),
        "[skills.csv-insights]\ntier = \"off\"\n\n[skills.release-notes]\ntier = \"off\"\n",
    )
    .unwrap();
    fs::write(
        repo.path().join("skills.toml"),
        "# The team's choices.\n[skills.release-notes]\ntier = \"name-only\"\n\n\
         [skills.commit-message]\ntier = \"manual\"\n",
    )
    .unwrap();
    // Found from a subfolder, up to the repository root.
    let out = skills(&deep, home.path(), &["catalog", &examples()], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        listed(&text(&out.stdout)),
        [
            ("api-docs-review".to_owned(), true),
            ("incident-postmortem".to_owned(), true),
            ("release-notes".to_owned(), false),
        ]
    );
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));

    // A skills.toml above the repository root is not this project's.
    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("skills.toml"),
        "[skills.csv-insights]\ntier = \"off\"\n",
    )
    .unwrap();
    let inner = outside.path().join("repo");
    fs::create_dir_all(inner.join(".git")).unwrap();
    let out = skills(&inner, &inner.join("none"), &["catalog", &examples()], &[]);
    assert_eq!(listed(&text(&out.stdout)).len(), 5, "{}", text(&out.stdout));
    // Nor one above a folder outside any repository.
    let plain = outside.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    let out = skills(&plain, &plain.join("none"), &["catalog", &examples()], &[]);
    assert_eq!(listed(&text(&out.stdout)).len(), 5, "{}", text(&out.stdout));
    fs::write(
        plain.join("skills.toml"),
        "[skills.csv-insights]\ntier = \"off\"\n",
    )
    .unwrap();
    let out = skills(&plain, &plain.join("none"), &["catalog", &examples()], &[]);
    assert_eq!(listed(&text(&out.stdout)).len(), 4, "{}", text(&out.stdout));
}

#[test]
fn config_flag_and_env_name_one_file_that_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    fs::write(
        &file,
        "[skills.csv-insights]\ntier = \"off\"\n[skills.gone-skill]\ntier = \"pinned\"\n",
    )
    .unwrap();
    // The project file is ignored when one file is named.
    fs::write(
        dir.path().join("skills.toml"),
        "[skills.commit-message]\ntier = \"off\"\n",
    )
    .unwrap();
    let file_arg = file.to_str().unwrap();
    for (args, env) in [
        (vec!["catalog", "--config", file_arg], vec![]),
        (vec!["catalog"], vec![("SKILLS_CONFIG", file_arg)]),
    ] {
        let mut args = args;
        let examples = examples();
        args.push(&examples);
        let out = skills(dir.path(), dir.path(), &args, &env);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let names: Vec<String> = listed(&text(&out.stdout))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(names.contains(&"commit-message".to_owned()), "{names:?}");
        assert!(!names.contains(&"csv-insights".to_owned()), "{names:?}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("[tier-unknown-skill]") && stderr.contains("gone-skill"),
            "{stderr}"
        );
    }
    let out = skills(
        dir.path(),
        dir.path(),
        &["catalog", "--config", "/no/such/file.toml", &examples()],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/no/such/file.toml does not exist (from --config)"));
}

#[test]
fn a_bad_config_exits_2_naming_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    for (content, expected) in [
        (
            "[skills.pdf]\ntier = \"sometimes\"\n",
            "[skills.pdf] tier: unknown tier `sometimes`",
        ),
        ("[catalog]\nbugdet = 10\n", "unknown field `bugdet`"),
        ("[catalog]\nbudget = \"ten\"\n", "invalid budget `ten`"),
        ("[skills\n", "skills.toml"),
    ] {
        fs::write(dir.path().join("skills.toml"), content).unwrap();
        let out = skills(dir.path(), dir.path(), &["catalog", &examples()], &[]);
        assert_eq!(out.status.code(), Some(2), "{content}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("skills.toml") && stderr.contains(expected),
            "{content}: {stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn the_budget_comes_from_the_config_and_flags_beat_it() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("skills.toml"),
        "[catalog]\nbudget = 1000\n\n[skills.release-notes]\ntier = \"pinned\"\n\n\
         [skills.commit-message]\npriority = 10\n",
    )
    .unwrap();
    let out = skills(dir.path(), dir.path(), &["catalog", &examples()], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.chars().count() <= 1000, "{stdout}");
    let shown = listed(&stdout);
    // Pinned keeps its description; the highest priority keeps its own
    // longest among the rest.
    assert!(
        shown.contains(&("release-notes".to_owned(), true)),
        "{stdout}"
    );
    assert!(
        shown.contains(&("commit-message".to_owned(), true)),
        "{stdout}"
    );
    assert!(
        text(&out.stderr).contains("listed by name only"),
        "{}",
        text(&out.stderr)
    );
    let out = skills(
        dir.path(),
        dir.path(),
        &["catalog", "--budget", "100000", &examples()],
        &[],
    );
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    assert!(
        listed(&text(&out.stdout))
            .iter()
            .all(|(_, described)| *described)
    );
}

#[test]
fn the_catalog_leaves_out_skills_this_machine_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    for (name, extra) in [
        (
            "needs-jq",
            "metadata:\n  requires:\n    bins: [skills-test-no-such-bin]\n",
        ),
        ("needs-env", "requires:\n  env: [SKILLS_TEST_UNSET_VAR]\n"),
        ("plain", ""),
    ] {
        fs::create_dir_all(root.join(name)).unwrap();
        fs::write(
            root.join(name).join("SKILL.md"),
            format!(
                "---\nname: {name}\ndescription: The {name} skill. Use it.\n{extra}---\nBody.\n"
            ),
        )
        .unwrap();
    }
    let out = skills(
        dir.path(),
        dir.path(),
        &["catalog", root.to_str().unwrap()],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(listed(&text(&out.stdout)), [("plain".to_owned(), true)]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("`needs-jq` needs setup: bin skills-test-no-such-bin")
            && stderr.contains("`needs-env` needs setup: env SKILLS_TEST_UNSET_VAR"),
        "{stderr}"
    );
    // Set the variable and the skill is back.
    let out = skills(
        dir.path(),
        dir.path(),
        &["catalog", root.to_str().unwrap()],
        &[("SKILLS_TEST_UNSET_VAR", "1")],
    );
    let names: Vec<String> = listed(&text(&out.stdout))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["needs-env", "plain"]);
}
