//! End-to-end tests of the `skills` binary: exit codes, text and JSON output,
//! and the byte stability of the catalog.
//!
//! Every test runs the real binary (`CARGO_BIN_EXE_skills`) on a temporary
//! skills root, except where the shipped `examples/skills` are the subject.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skills_testkit::fixture::{self, SkillDir};
use tempfile::TempDir;

/// What one run of the binary produced.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    #[track_caller]
    fn expect_code(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "expected exit code {code}, got {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// The binary with `args`, in `cwd`, without `RUST_BACKTRACE` and `SKILLS_ROOT`.
fn command_in(cwd: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_skills"));
    command
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .env_remove("SKILLS_ROOT");
    command
}

fn run_in(cwd: &Path, args: &[&str]) -> Run {
    output_of(&mut command_in(cwd, args))
}

fn output_of(command: &mut Command) -> Run {
    let output = command.output().expect("the skills binary runs");
    Run {
        code: output
            .status
            .code()
            .expect("exited normally, not by a signal"),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// Runs in a fresh empty folder, so the `examples/skills` default never applies.
fn run(args: &[&str]) -> Run {
    let cwd = tempfile::tempdir().expect("temp cwd");
    run_in(cwd.path(), args)
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills").to_owned()
}

/// A temporary skills root.
#[derive(Debug)]
struct Root {
    dir: TempDir,
}

impl Root {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("temp root"),
        }
    }

    /// The root path as a string argument.
    fn arg(&self) -> String {
        self.dir.path().display().to_string()
    }

    fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Self {
        fixture::write_file(&self.join(rel), contents).expect("write");
        self
    }

    /// A valid skill `name` in the folder `name`.
    fn skill(&self, name: &str, description: &str, body: &str) -> &Self {
        SkillDir::new(name, description)
            .body(format!("{body}\n"))
            .write_in(self.dir.path())
            .expect("write skill");
        self
    }

    /// `alpha` (with files) and `beta`, both valid in strict mode.
    fn with_two_skills() -> Self {
        let root = Self::new();
        root.skill(
            "alpha",
            "Alpha does the first thing. Use it for tests.",
            "# Alpha\n\nAlpha body.",
        )
        .write("alpha/references/guide.md", "one\ntwo\nthree\n")
        .write("alpha/scripts/run.sh", "echo run\n")
        .skill(
            "beta",
            "Beta does the second thing. Use it for tests.",
            "Beta body.",
        );
        root
    }
}

/// `args` followed by the root path.
fn with_root<'a>(args: &[&'a str], root: &'a str) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.push(root);
    all
}

// ---------------------------------------------------------------- validate

#[test]
fn validate_examples_exits_0() {
    let examples = examples();
    let out = run(&["validate", &examples]).expect_code(0);
    assert!(
        out.stdout.contains(" 0 invalid; 0 error(s)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("INVALID"), "{}", out.stdout);
}

#[test]
fn validate_without_path_uses_examples_from_the_workspace_root() {
    let out = run_in(&workspace(), &["validate"]).expect_code(0);
    assert!(
        out.stdout.contains("examples/skills/"),
        "the default root shows in the output: {}",
        out.stdout
    );
}

#[test]
fn validate_without_path_elsewhere_is_a_usage_error() {
    let out = run(&["validate"]).expect_code(2);
    assert!(out.stderr.contains("examples/skills"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
}

#[test]
fn validate_broken_skill_exits_1_with_located_diagnostics() {
    let root = Root::new();
    root.skill("good", "Good. Use it for tests.", "Body.")
        .write(
            "broken/SKILL.md",
            "# Broken\n\nNo frontmatter, so it cannot load.\n",
        );
    let arg = root.arg();

    let out = run(&["validate", &arg]).expect_code(1);
    let file = root.join("broken/SKILL.md").display().to_string();
    let line = out
        .stdout
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(&file))
        .unwrap_or_else(|| panic!("no diagnostic for {file}:\n{}", out.stdout));
    // `file:line: error[code]: message`
    let rest = &line[file.len()..];
    let (number, rest) = rest
        .strip_prefix(':')
        .and_then(|r| r.split_once(':'))
        .unwrap_or_else(|| panic!("no line number: {line}"));
    assert!(number.parse::<u32>().is_ok_and(|n| n >= 1), "{line}");
    let message = rest
        .strip_prefix(" error[frontmatter-missing]: ")
        .unwrap_or_else(|| panic!("not `error[code]: message`: {line}"));
    assert!(message.contains("frontmatter"), "{line}");
    assert!(out.stdout.contains("INVALID  broken"), "{}", out.stdout);
    assert!(out.stdout.contains("ok       good"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("2 skill(s) checked: 1 valid, 1 invalid; 1 error(s)"),
        "{}",
        out.stdout
    );
}

#[test]
fn validate_yaml_error_has_column_and_indented_excerpt() {
    let root = Root::new();
    root.write(
        "tabbed/SKILL.md",
        "---\nname: tabbed\n\tdescription: d\n---\nBody.\n",
    );
    let out = run(&["validate", &root.arg()]).expect_code(1);
    let file = root.join("tabbed/SKILL.md").display().to_string();
    let expected = format!(
        "INVALID  tabbed  ({dir})\n    {file}:3:1: error[yaml-invalid]: tab character used for indentation: YAML indents with spaces; replace the tab with spaces\n       3 |     description: d\n         | ^\n",
        dir = root.join("tabbed").display()
    );
    assert!(out.stdout.contains(&expected), "{}", out.stdout);
    let report = run(&["validate", "--json", &root.arg()])
        .expect_code(1)
        .json();
    let d = &report["skills"][0]["diagnostics"][0];
    check_diagnostic(d);
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(3), Some(1)),
        "{d}"
    );
}

/// Checks one diagnostic object has exactly the documented keys.
#[track_caller]
fn check_diagnostic(d: &Value) {
    let object = d.as_object().expect("a diagnostic is an object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["code", "column", "file", "line", "message", "severity"],
        "{d}"
    );
    assert!(
        matches!(d["severity"].as_str(), Some("error" | "warning")),
        "{d}"
    );
    assert!(d["code"].as_str().is_some_and(|c| !c.is_empty()), "{d}");
    assert!(d["message"].as_str().is_some_and(|m| !m.is_empty()), "{d}");
    assert!(d["file"].is_string() || d["file"].is_null(), "{d}");
    assert!(d["line"].is_u64() || d["line"].is_null(), "{d}");
    assert!(d["column"].is_u64() || d["column"].is_null(), "{d}");
}

#[test]
fn validate_json_has_the_documented_shape() {
    let root = Root::with_two_skills();
    root.write("broken/SKILL.md", "# Broken\n\nNo frontmatter.\n")
        .write("orphan/references/x.md", "x\n");
    let arg = root.arg();

    let out = run(&["validate", "--json", &arg]).expect_code(1);
    let report = out.json();
    let object = report.as_object().expect("an object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "counts",
            "diagnostics",
            "errors",
            "mode",
            "skills",
            "valid",
            "warnings"
        ]
    );
    assert_eq!(report["valid"], Value::Bool(false));

    let root_diags = report["diagnostics"].as_array().expect("diagnostics array");
    root_diags.iter().for_each(check_diagnostic);
    assert!(
        root_diags.iter().any(|d| d["code"] == "skill-md-missing"),
        "{root_diags:#?}"
    );

    let skills = report["skills"].as_array().expect("skills array");
    assert_eq!(skills.len(), 3);
    let mut errors = 0;
    let mut warnings = root_diags
        .iter()
        .filter(|d| d["severity"] == "warning")
        .count();
    errors += root_diags.len() - warnings;
    for s in skills {
        let mut keys: Vec<&str> = s
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["diagnostics", "dir", "name", "portable", "valid"],
            "{s}"
        );
        assert!(s["dir"].is_string(), "{s}");
        assert!(s["valid"].is_boolean(), "{s}");
        let diags = s["diagnostics"].as_array().expect("array");
        diags.iter().for_each(check_diagnostic);
        let e = diags.iter().filter(|d| d["severity"] == "error").count();
        errors += e;
        warnings += diags.len() - e;
        assert_eq!(s["valid"], Value::Bool(e == 0), "{s}");
    }
    assert_eq!(report["errors"].as_u64(), Some(errors as u64));
    assert_eq!(report["warnings"].as_u64(), Some(warnings as u64));

    let broken = skills
        .iter()
        .find(|s| s["dir"].as_str().is_some_and(|d| d.ends_with("broken")))
        .expect("broken is reported");
    assert_eq!(broken["name"], Value::Null, "an unparsed skill has no name");
    assert_eq!(broken["valid"], Value::Bool(false));
    let d = &broken["diagnostics"][0];
    assert_eq!(d["code"], "frontmatter-missing");
    assert_eq!(d["severity"], "error");
    assert!(
        d["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("broken/SKILL.md")),
        "{d}"
    );
    assert!(d["line"].is_u64(), "{d}");
    let alpha = skills.iter().find(|s| s["name"] == "alpha").expect("alpha");
    assert_eq!(alpha["valid"], Value::Bool(true));
    // Only lint advice: `scripts/run.sh` has no `#!` line.
    let codes: Vec<&Value> = alpha["diagnostics"]
        .as_array()
        .expect("array")
        .iter()
        .map(|d| &d["code"])
        .collect();
    assert_eq!(codes, [&Value::from("lint-script-no-shebang")]);
}

#[test]
fn validate_json_on_examples_is_valid() {
    let examples = examples();
    let report = run(&["validate", "--json", &examples])
        .expect_code(0)
        .json();
    assert_eq!(report["valid"], Value::Bool(true));
    assert_eq!(report["errors"], 0);
    assert!(!report["skills"].as_array().expect("skills").is_empty());
}

#[test]
fn validate_strict_turns_an_unknown_field_into_an_error() {
    let root = Root::new();
    root.write(
        "extra/SKILL.md",
        "---\nname: extra\ndescription: Extra field. Use it for tests.\nflavour: mint\n---\nBody.\n",
    );
    let arg = root.arg();

    let lenient = run(&["validate", &arg]).expect_code(0);
    assert!(
        lenient.stdout.contains("ok       extra"),
        "{}",
        lenient.stdout
    );
    let strict = run(&["validate", "--strict", &arg]).expect_code(1);
    assert!(
        strict.stdout.contains("SKILL.md:4: error[field-unknown]: "),
        "{}",
        strict.stdout
    );
    assert!(strict.stdout.contains("flavour"), "{}", strict.stdout);
}

#[test]
fn validate_nonexistent_path_exits_2() {
    let out = run(&["validate", "/definitely/not/here"]).expect_code(2);
    assert!(
        out.stderr.contains("/definitely/not/here"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
}

#[test]
fn validate_reserved_words_are_refused() {
    let examples = examples();
    let out = run(&["validate", "--reserved", "CSV", &examples]).expect_code(1);
    assert!(
        out.stdout.contains("error[name-reserved]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("csv-insights"), "{}", out.stdout);
    run(&["validate", "--reserved", "anthropic", &examples]).expect_code(0);
}

#[test]
fn validate_a_plain_file_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "hello").expect("write");
    let out = run(&["validate", &file.display().to_string()]).expect_code(2);
    assert!(out.stderr.contains("is a file"), "{}", out.stderr);
}

#[test]
fn bad_flags_exit_2() {
    let examples = examples();
    for args in [
        vec!["validate", "--frobnicate", examples.as_str()],
        vec!["catalog", "--format", "yaml", examples.as_str()],
        vec!["list", "--json=maybe", examples.as_str()],
        vec!["no-such-command"],
        vec![],
    ] {
        let out = run(&args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(!out.stderr.is_empty(), "{args:?} explains itself");
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
}

#[test]
fn validate_path_to_skill_md_validates_that_skill() {
    let root = Root::with_two_skills();
    root.write("broken/SKILL.md", "# Broken\n\nNo frontmatter.\n");
    let md = root.join("alpha/SKILL.md").display().to_string();

    let out = run(&["validate", &md]).expect_code(0);
    assert!(out.stdout.contains("ok       alpha"), "{}", out.stdout);
    assert!(out.stdout.contains("1 skill(s) checked"), "{}", out.stdout);
    assert!(!out.stdout.contains("broken"), "{}", out.stdout);

    let bad = root.join("broken/SKILL.md").display().to_string();
    let out = run(&["validate", &bad]).expect_code(1);
    assert!(
        out.stdout.contains("error[frontmatter-missing]"),
        "{}",
        out.stdout
    );
}

/// `skills validate SKILL.md` (or `.`) run inside the skill folder must still
/// check the name against the folder's real name, as it does from outside.
#[test]
fn validate_skill_md_in_the_current_folder_checks_the_folder_name() {
    let root = Root::new();
    root.write(
        "folder/SKILL.md",
        "---\nname: declared\ndescription: Mismatch. Use it for tests.\n---\nBody.\n",
    );
    let from_outside = run_in(
        root.dir.path(),
        &["validate", "--strict", "folder/SKILL.md"],
    );
    let from_outside = from_outside.expect_code(1);
    assert!(
        from_outside.stdout.contains("error[name-dir-mismatch]"),
        "{}",
        from_outside.stdout
    );
    for arg in ["SKILL.md", "."] {
        let inside = run_in(&root.join("folder"), &["validate", "--strict", arg]);
        assert!(
            inside.stdout.contains("error[name-dir-mismatch]") && inside.code == 1,
            "`validate --strict {arg}` inside `folder/` accepts the name `declared`: {inside:?}"
        );
    }

    let ok = Root::new();
    ok.skill("matching", "Matches. Use it for tests.", "Body.");
    run_in(&ok.join("matching"), &["validate", "--strict", "SKILL.md"]).expect_code(0);
    run_in(&ok.join("matching"), &["validate", "--strict", "."]).expect_code(0);
}

#[test]
fn validate_folder_without_skills_exits_1_with_skill_md_missing() {
    let root = Root::new();
    root.write("notes/readme.txt", "not a skill\n");
    let arg = root.arg();

    let out = run(&["validate", &arg]).expect_code(1);
    assert!(
        out.stdout.contains("error[skill-md-missing]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("0 skill(s) checked"), "{}", out.stdout);
    let json = run(&["validate", "--json", &arg]).expect_code(1).json();
    assert_eq!(json["valid"], Value::Bool(false));
    assert_eq!(json["diagnostics"][0]["code"], "skill-md-missing");
}

#[test]
fn validate_folder_that_looks_like_a_skill_warns() {
    let root = Root::new();
    root.skill("good", "Good. Use it for tests.", "Body.")
        .write("orphan/references/x.md", "x\n");
    let arg = root.arg();

    let out = run(&["validate", &arg]).expect_code(0);
    assert!(
        out.stdout.contains("warning[skill-md-missing]"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("orphan"), "{}", out.stdout);
}

#[test]
fn validate_reports_duplicates_as_warnings() {
    let root = Root::new();
    root.write(
        "a-first/SKILL.md",
        "---\nname: same\ndescription: First. Use it for tests.\n---\nBody.\n",
    )
    .write(
        "b-second/SKILL.md",
        "---\nname: same\ndescription: Second. Use it for tests.\n---\nBody.\n",
    );
    let arg = root.arg();

    let out = run(&["validate", &arg]).expect_code(0);
    assert!(
        out.stdout.contains("warning[skill-duplicate]"),
        "{}",
        out.stdout
    );
    let json = run(&["validate", "--json", &arg]).expect_code(0).json();
    let second = &json["skills"][1];
    assert!(
        second["dir"]
            .as_str()
            .is_some_and(|d| d.ends_with("b-second"))
    );
    assert!(
        second["diagnostics"]
            .as_array()
            .expect("array")
            .iter()
            .any(|d| d["code"] == "skill-duplicate"),
        "{second}"
    );
}

// -------------------------------------------------------------------- list

#[test]
fn list_prints_names_sorted() {
    let root = Root::new();
    for name in ["zeta", "alpha", "mid-way"] {
        root.skill(
            name,
            &format!("The {name} skill. Use it for tests."),
            "Body.",
        );
    }
    let arg = root.arg();

    let out = run(&["list", &arg]).expect_code(0);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().next().expect("a name"))
        .collect();
    assert_eq!(names, ["alpha", "mid-way", "zeta"]);
    assert!(
        out.stdout
            .contains("alpha    The alpha skill. Use it for tests."),
        "{}",
        out.stdout
    );
    assert!(out.stderr.is_empty(), "{}", out.stderr);

    let examples = examples();
    let out = run(&["list", &examples]).expect_code(0);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert!(!names.is_empty());
}

#[test]
fn list_aligns_descriptions_for_non_ascii_names() {
    let root = Root::new();
    root.skill("café", "Coffee. Use it for tests.", "Body.")
        .skill("tea", "Tea. Use it for tests.", "Body.");
    let arg = root.arg();

    let out = run(&["list", &arg]).expect_code(0);
    let columns: Vec<usize> = out
        .stdout
        .lines()
        .map(|l| {
            let byte = l.find(char::is_uppercase).expect("a description");
            l[..byte].chars().count()
        })
        .collect();
    assert_eq!(columns.len(), 2, "{}", out.stdout);
    assert_eq!(
        columns[0], columns[1],
        "descriptions start in different columns:\n{}",
        out.stdout
    );
}

#[test]
fn list_json_is_an_array_of_metadata() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let json = run(&["list", "--json", &arg]).expect_code(0).json();
    let entries = json.as_array().expect("an array");
    let names: Vec<&str> = entries.iter().filter_map(|e| e["name"].as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert_eq!(
        entries[0]["description"],
        "Alpha does the first thing. Use it for tests."
    );
}

#[test]
fn list_warns_on_stderr_about_skipped_skills() {
    let root = Root::with_two_skills();
    root.write("broken/SKILL.md", "# Broken\n\nNo frontmatter.\n");
    let arg = root.arg();

    let out = run(&["list", &arg]).expect_code(0);
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
    assert!(
        out.stderr.contains("1 skill skipped: no frontmatter"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("skills validate"), "{}", out.stderr);
}

#[test]
fn list_accepts_root_flags() {
    let first = Root::new();
    first.skill("one", "One. Use it for tests.", "Body.");
    let second = Root::new();
    second.skill("two", "Two. Use it for tests.", "Body.");
    let (a, b) = (first.arg(), second.arg());

    let out = run(&["list", "--root", &a, &b]).expect_code(0);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["one", "two"]);
}

/// Runs `skills ARGS` in a fresh folder with `PATH` set to `path` and the
/// variables in `env` set (and `SKILLS_TEST_UNSET_7F3A` unset).
#[cfg(unix)]
fn run_with_path(args: &[&str], path: &Path, env: &[(&str, &str)]) -> Run {
    let cwd = tempfile::tempdir().expect("temp cwd");
    output_of(
        command_in(cwd.path(), args)
            .env_remove("SKILLS_TEST_UNSET_7F3A")
            .env("PATH", path)
            .envs(env.iter().copied()),
    )
}

/// `needy` (a program and a variable this machine lacks) and `ready` (an
/// OpenClaw-style declaration of `fake-tool`, which the returned `PATH`
/// folder holds, and `SKILLS_TEST_SET_7F3A`).
#[cfg(unix)]
fn root_with_requirements() -> (Root, TempDir) {
    use std::os::unix::fs::PermissionsExt as _;
    let root = Root::new();
    root.write(
        "needy/SKILL.md",
        "---\nname: needy\ndescription: Needs what is missing. Use it for tests.\nmetadata:\n  requires:\n    bins:\n      - surely-missing-tool-7f3a\n    env:\n      - SKILLS_TEST_UNSET_7F3A\n---\nBody.\n",
    )
    .write(
        "ready/SKILL.md",
        "---\nname: ready\ndescription: Has what it needs. Use it for tests.\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [\"fake-tool\"], \"env\": [\"SKILLS_TEST_SET_7F3A\"]}}}\n---\nBody.\n",
    );
    let bin = tempfile::tempdir().expect("temp PATH folder");
    let tool = bin.path().join("fake-tool");
    fs::write(&tool, "#!/bin/sh\n").expect("write fake-tool");
    fs::set_permissions(&tool, fs::Permissions::from_mode(0o755)).expect("chmod");
    (root, bin)
}

#[cfg(unix)]
#[test]
fn list_marks_skills_that_need_setup() {
    let (root, bin) = root_with_requirements();
    let arg = root.arg();
    let env = [("SKILLS_TEST_SET_7F3A", "1")];

    let out = run_with_path(&["list", &arg], bin.path(), &env).expect_code(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "needy  [needs setup: bin surely-missing-tool-7f3a; env SKILLS_TEST_UNSET_7F3A] Needs what is missing. Use it for tests.",
            "ready  Has what it needs. Use it for tests.",
        ]
    );
    assert_eq!(
        out.stderr.trim_end(),
        "warning[requirement-unmet]: `needy` needs setup: bin surely-missing-tool-7f3a; env SKILLS_TEST_UNSET_7F3A; it is left out of the model's catalog"
    );

    let out = run_with_path(&["list", "--json", &arg], bin.path(), &env).expect_code(0);
    let json = out.json();
    let entries = json.as_array().expect("an array");
    assert_eq!(
        entries[0]["needs_setup"],
        serde_json::json!([
            {"kind": "bin", "name": "surely-missing-tool-7f3a"},
            {"kind": "env", "name": "SKILLS_TEST_UNSET_7F3A"},
        ])
    );
    assert_eq!(entries[1]["name"], "ready");
    assert!(entries[1].get("needs_setup").is_none(), "{}", entries[1]);
    assert_eq!(
        entries[1]["parsed"]["extensions"]["requires"],
        serde_json::json!({"bins": ["fake-tool"], "env": ["SKILLS_TEST_SET_7F3A"]})
    );
    assert!(out.stderr.contains("requirement-unmet"), "{}", out.stderr);

    // Without the variable, `ready` needs setup too.
    let out = run_with_path(&["list", &arg], bin.path(), &[]).expect_code(0);
    assert!(
        out.stdout
            .contains("ready  [needs setup: env SKILLS_TEST_SET_7F3A] Has what it needs."),
        "{}",
        out.stdout
    );
}

// ----------------------------------------------------------------- catalog

#[test]
fn catalog_defaults_to_xml() {
    let examples = examples();
    let out = run(&["catalog", &examples]).expect_code(0);
    assert!(out.stdout.contains("<available_skills>"), "{}", out.stdout);
    assert!(out.stdout.contains("</available_skills>"), "{}", out.stdout);
    assert!(out.stdout.contains("<skill name=\""), "{}", out.stdout);

    let root = Root::with_two_skills();
    let arg = root.arg();
    let out = run(&["catalog", &arg]).expect_code(0);
    let alpha = out.stdout.find("<skill name=\"alpha\">").expect("alpha");
    let beta = out.stdout.find("<skill name=\"beta\">").expect("beta");
    assert!(alpha < beta, "sorted by name");
}

#[test]
fn catalog_markdown_and_json_formats() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let md = run(&["catalog", "--format", "markdown", &arg]).expect_code(0);
    assert!(!md.stdout.contains("<available_skills>"), "{}", md.stdout);
    assert!(md.stdout.contains("alpha"), "{}", md.stdout);
    assert!(
        md.stdout.contains("Beta does the second thing."),
        "{}",
        md.stdout
    );

    let json = run(&["catalog", "--format", "json", &arg])
        .expect_code(0)
        .json();
    assert!(json["instructions"].is_string(), "{json}");
    let names: Vec<&str> = json["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert!(json.get("note").is_none(), "nothing left out: {json}");

    let examples = examples();
    run(&["catalog", "--format", "json", &examples])
        .expect_code(0)
        .json();
}

#[test]
fn catalog_budget_in_characters_prints_the_not_listed_note() {
    let examples = examples();
    let out = run(&["catalog", "--budget", "300", &examples]).expect_code(0);
    assert!(out.stdout.contains("not listed here"), "{}", out.stdout);
    assert!(out.stdout.contains("<available_skills>"), "{}", out.stdout);
    let full = run(&["catalog", &examples]).expect_code(0);
    assert!(out.stdout.len() < full.stdout.len());
}

#[test]
fn catalog_budget_in_tokens_works() {
    let examples = examples();
    let out = run(&["catalog", "--budget", "50t", &examples]).expect_code(0);
    assert!(out.stdout.contains("not listed here"), "{}", out.stdout);
    let json = run(&["catalog", "--format", "json", "--budget", "50t", &examples])
        .expect_code(0)
        .json();
    let note = json["note"]
        .as_str()
        .expect("a note naming what was left out");
    assert!(note.contains("not listed here"), "{note}");
}

#[test]
fn catalog_bad_budget_exits_2() {
    let examples = examples();
    for bad in ["abc", "t", "12x", "-5"] {
        let out = run(&["catalog", "--budget", bad, &examples]);
        assert_eq!(out.code, 2, "--budget {bad}: {out:?}");
        assert!(out.stdout.is_empty());
    }
    let out = run(&["catalog", "--budget", "abc", &examples]);
    assert!(
        out.stderr.contains("invalid budget `abc`"),
        "{}",
        out.stderr
    );
}

#[test]
fn catalog_is_byte_identical_across_runs() {
    let examples = examples();
    for format in ["xml", "markdown", "json"] {
        let args = ["catalog", "--format", format, examples.as_str()];
        let first = run(&args).expect_code(0);
        let second = run(&args).expect_code(0);
        assert_eq!(first.stdout, second.stdout, "{format}");
    }
}

#[test]
fn catalog_is_byte_identical_for_roots_in_either_order() {
    let first = Root::new();
    first
        .skill("zulu", "Zulu. Use it for tests.", "Body.")
        .skill("alpha", "Alpha. Use it for tests.", "Body.");
    let second = Root::new();
    second
        .skill("mike", "Mike. Use it for tests.", "Body.")
        .skill("bravo", "Bravo. Use it for tests.", "Body.");
    let (a, b) = (first.arg(), second.arg());

    for format in ["xml", "markdown", "json"] {
        let ab = run(&["catalog", "--format", format, &a, &b]).expect_code(0);
        let ba = run(&["catalog", "--format", format, &b, &a]).expect_code(0);
        assert_eq!(ab.stdout, ba.stdout, "{format}");
        let roots = run(&["catalog", "--format", format, "--root", &b, &a]).expect_code(0);
        assert_eq!(ab.stdout, roots.stdout, "{format}");
    }
}

// -------------------------------------------------------------------- show

#[test]
fn show_prints_metadata_files_and_body() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let out = run(&["show", "alpha", &arg]).expect_code(0);
    assert!(
        out.stdout.starts_with("name:        alpha\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("description: Alpha does the first thing. Use it for tests."),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("files:\n  references/guide.md (14 bytes)\n  scripts/run.sh (9 bytes)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("---\n# Alpha\n\nAlpha body.\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn show_json_parses() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let json = run(&["show", "--json", "alpha", &arg])
        .expect_code(0)
        .json();
    assert_eq!(json["metadata"]["name"], "alpha");
    assert_eq!(json["body"], "# Alpha\n\nAlpha body.");
    assert_eq!(
        json["resources"]["entries"][0]["path"],
        "references/guide.md"
    );
}

#[test]
fn show_unknown_skill_exits_1_listing_names() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let out = run(&["show", "gamma", &arg]).expect_code(1);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        out.stderr.contains("no skill named `gamma`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("available: alpha, beta"),
        "{}",
        out.stderr
    );
}

/// Errors are not mistaken for a closed output pipe because of their text.
#[test]
fn an_error_mentioning_a_broken_pipe_still_fails() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let out = run(&["show", "Broken pipe", &arg]);
    assert_eq!(
        out.code, 1,
        "`show \"Broken pipe\"` must fail like any unknown name: {out:?}"
    );
    assert!(out.stderr.contains("no skill named"), "{out:?}");
    let out = run(&["read", "alpha", "Broken pipe", &arg]);
    assert_eq!(out.code, 1, "{out:?}");
}

/// A single-file skill (`<root>/<name>.md`, opencode's shape) is listed,
/// shown with no files and a `file:` location, reads as its `SKILL.md` only,
/// and `skills run` refuses it: it has no folder to run in.
#[test]
fn single_file_skill_in_list_show_read_and_run() {
    let root = Root::with_two_skills();
    root.write(
        "notes.md",
        "---\ndescription: Keeps meeting notes. Use when asked to take notes.\n---\nWrite notes.\n",
    )
    .write("README.md", "# Skills\n");
    let arg = root.arg();

    let out = run(&["list", &arg]).expect_code(0);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["alpha", "beta", "notes"], "{}", out.stdout);
    assert!(out.stderr.is_empty(), "{}", out.stderr);

    let out = run(&["show", "notes", &arg]).expect_code(0);
    assert!(
        out.stdout.starts_with("name:        notes\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("location:    file:///"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("/notes.md\n"), "{}", out.stdout);
    assert!(!out.stdout.contains("references/"), "{}", out.stdout);
    assert!(
        out.stdout.ends_with("---\nWrite notes.\n"),
        "{}",
        out.stdout
    );

    let out = run(&["read", "notes", "SKILL.md", &arg]).expect_code(0);
    assert!(
        out.stdout.starts_with("---\ndescription:"),
        "{}",
        out.stdout
    );
    let out = run(&["read", "notes", "references/guide.md", &arg]).expect_code(1);
    assert!(
        out.stderr.contains("single Markdown file"),
        "{}",
        out.stderr
    );

    let out = run(&["run", "notes", &arg, "--", "true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("no local folder"), "{out:?}");
}

// -------------------------------------------------------------------- read

#[test]
fn read_prints_the_file() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let out = run(&["read", "alpha", "references/guide.md", &arg]).expect_code(0);
    assert_eq!(out.stdout, "one\ntwo\nthree\n");
    let out = run(&["read", "alpha", "SKILL.md", &arg]).expect_code(0);
    assert!(
        out.stdout.starts_with("---\nname: alpha\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn read_with_lines_prints_the_range() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let out = run(&[
        "read",
        "alpha",
        "references/guide.md",
        "--lines",
        "1:2",
        &arg,
    ])
    .expect_code(0);
    assert_eq!(out.stdout, "one\ntwo\n");
    let out = run(&[
        "read",
        "alpha",
        "references/guide.md",
        "--lines",
        "2:",
        &arg,
    ])
    .expect_code(0);
    assert_eq!(out.stdout, "two\nthree\n");
    let out = run(&["read", "alpha", "references/guide.md", "--lines", "3", &arg]).expect_code(0);
    assert_eq!(out.stdout, "three\n");
}

#[test]
fn read_traversal_exits_1_with_a_refusal() {
    let root = Root::with_two_skills();
    root.write("secret.txt", "top secret\n");
    let arg = root.arg();

    for path in [
        "../x",
        "../secret.txt",
        "/etc/passwd",
        "a/../../secret.txt",
        "C:/x",
    ] {
        let out = run(&["read", "alpha", path, &arg]);
        assert_eq!(out.code, 1, "{path}: {out:?}");
        assert!(out.stdout.is_empty(), "{path}: {}", out.stdout);
        assert!(
            out.stderr.contains("refused resource path"),
            "{path}: {}",
            out.stderr
        );
    }
}

#[cfg(unix)]
#[test]
fn read_through_a_symlink_out_of_the_skill_exits_1() {
    let root = Root::with_two_skills();
    root.write("secret.txt", "top secret\n");
    std::os::unix::fs::symlink(root.join("secret.txt"), root.join("alpha/leak.md"))
        .expect("symlink");
    let arg = root.arg();

    let out = run(&["read", "alpha", "leak.md", &arg]).expect_code(1);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        out.stderr.contains("outside the skill folder"),
        "{}",
        out.stderr
    );
}

#[test]
fn read_unknown_file_exits_1_listing_files() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let out = run(&["read", "alpha", "references/nope.md", &arg]).expect_code(1);
    assert!(out.stderr.contains("references/nope.md"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("available: references/guide.md, scripts/run.sh"),
        "{}",
        out.stderr
    );
}

#[test]
fn read_unknown_skill_exits_1() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    let out = run(&["read", "gamma", "references/guide.md", &arg]).expect_code(1);
    assert!(
        out.stderr.contains("available: alpha, beta"),
        "{}",
        out.stderr
    );
}

#[test]
fn read_binary_file_exits_1() {
    let root = Root::with_two_skills();
    root.write(
        "alpha/assets/logo.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".as_slice(),
    );
    let arg = root.arg();

    let out = run(&["read", "alpha", "assets/logo.png", &arg]).expect_code(1);
    assert!(out.stderr.contains("binary"), "{}", out.stderr);
    assert!(out.stderr.contains("use --raw"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
}

#[test]
fn read_bad_line_ranges_exit_2() {
    let root = Root::with_two_skills();
    let arg = root.arg();

    for lines in ["0:1", "3:2", "a:b", ""] {
        let out = run(&[
            "read",
            "alpha",
            "references/guide.md",
            "--lines",
            lines,
            &arg,
        ]);
        assert_eq!(out.code, 2, "--lines {lines:?}: {out:?}");
        assert!(out.stdout.is_empty());
    }
    let out = run(&[
        "read",
        "alpha",
        "references/guide.md",
        "--lines",
        "0:1",
        &arg,
    ]);
    assert!(
        out.stderr.contains("line numbers start at 1"),
        "{}",
        out.stderr
    );
    let past = run(&with_root(
        &["read", "alpha", "references/guide.md", "--lines", "9:"],
        &arg,
    ));
    assert_eq!(past.code, 2, "a range past the end: {past:?}");
    assert!(past.stderr.contains("3 lines"), "{}", past.stderr);
}

// -------------------------------------------------------------------- help

#[test]
fn help_mentions_the_exit_codes() {
    let out = run(&["--help"]).expect_code(0);
    assert!(out.stdout.contains("Exit codes:"), "{}", out.stdout);
    for line in [
        "  0  success",
        "  1  validate: invalid skills found",
        "  2  usage error",
    ] {
        assert!(
            out.stdout.contains(line),
            "missing `{line}`:\n{}",
            out.stdout
        );
    }
    for command in ["validate", "list", "catalog", "show", "read"] {
        assert!(out.stdout.contains(command), "{command}");
        let sub = run(&[command, "--help"]).expect_code(0);
        assert!(
            sub.stdout.contains("Exit codes:"),
            "{command} --help:\n{}",
            sub.stdout
        );
    }
}

#[test]
fn version_prints_the_crate_version() {
    let out = run(&["--version"]).expect_code(0);
    assert_eq!(
        out.stdout.trim(),
        format!("skills {}", env!("CARGO_PKG_VERSION"))
    );
}

/// Packs `dir` into a `.tar.gz` with the system `tar`, returning the archive path.
fn tar_gz(dir: &Path, out: &Path) -> PathBuf {
    let archive = out.join("skills.tar.gz");
    let status = Command::new("tar")
        .arg("czf")
        .arg(&archive)
        .arg("-C")
        .arg(dir)
        .arg(".")
        .status()
        .expect("tar runs");
    assert!(status.success());
    archive
}

#[test]
fn list_accepts_a_file_url_of_an_archive_and_caches_it() {
    let root = Root::with_two_skills();
    let work = tempfile::tempdir().expect("tempdir");
    let archive = tar_gz(root.join("").as_path(), work.path());
    let cache = work.path().join("no/such/cache");
    let url = format!("file://{}", archive.display());
    for _ in 0..2 {
        let output = Command::new(env!("CARGO_BIN_EXE_skills"))
            .args(["list", &url])
            .env("SKILLS_CACHE_DIR", &cache)
            .output()
            .expect("runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stdout}\n{stderr}");
        assert!(
            stdout.contains("alpha") && stdout.contains("beta"),
            "{stdout}"
        );
        // Not a terminal: no progress line.
        assert!(!stderr.contains("downloading"), "{stderr}");
    }
    let entries = std::fs::read_dir(cache.join("remote"))
        .expect("cache created")
        .count();
    assert_eq!(entries, 1, "one cache entry for one URL");
    // `--refresh` revalidates (the file did not change) and keeps the entry.
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .args(["--refresh", "list", &url])
        .env("SKILLS_CACHE_DIR", &cache)
        .output()
        .expect("runs");
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("alpha"));
    let entries = std::fs::read_dir(cache.join("remote"))
        .expect("cache kept")
        .count();
    assert_eq!(entries, 1, "still one cache entry");
}

#[test]
fn a_url_that_is_not_an_archive_exits_2() {
    let work = tempfile::tempdir().expect("tempdir");
    let junk = work.path().join("junk.zip");
    std::fs::write(&junk, "<html>not found</html>").expect("write");
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .args(["catalog", &format!("file://{}", junk.display())])
        .env("SKILLS_CACHE_DIR", work.path().join("cache"))
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&output.stderr).is_empty());
}

#[test]
fn skills_root_env_lists_roots_when_no_path_is_given() {
    let a = Root::with_two_skills();
    let b = Root::new();
    b.skill("gamma", "Third skill. Use for gamma.", "Body.");
    let cwd = tempfile::tempdir().expect("tempdir");
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .arg("list")
        .current_dir(cwd.path())
        .env("SKILLS_ROOT", format!("{},{}", a.arg(), b.arg()))
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let names: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["alpha", "beta", "gamma"]);
}

#[test]
fn standard_roots_flag_finds_project_and_user_skills() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    std::fs::create_dir_all(project.path().join(".git")).expect("git dir");
    let write = |dir: &Path, name: &str, desc: &str| {
        SkillDir::new(name, desc)
            .body("Body.\n")
            .write_in(dir)
            .expect("write");
    };
    write(
        &project.path().join(".agents/skills"),
        "shared",
        "Project copy.",
    );
    write(&home.path().join(".claude/skills"), "shared", "User copy.");
    write(&home.path().join(".agents/skills"), "mine", "User only.");
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .args(["list", "--standard-roots"])
        .current_dir(project.path())
        .env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("SKILLS_ROOT")
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("mine"), "{stdout}");
    assert!(stdout.contains("Project copy."), "project wins: {stdout}");
    assert!(!stdout.contains("User copy."), "{stdout}");
    assert!(
        stderr.contains("warning"),
        "the collision is reported: {stderr}"
    );
}

#[test]
fn validate_standard_roots_that_hold_no_skill_is_not_an_error() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    std::fs::create_dir_all(project.path().join(".git")).expect("git dir");
    std::fs::create_dir_all(project.path().join(".agents/skills")).expect("empty root");
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .args(["validate", "--standard-roots"])
        .current_dir(project.path())
        .env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .env_remove("SKILLS_ROOT")
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("0 skill(s) checked"), "{stdout}");
}

// ------------------------------------------------- logging, escaping, raw reads

/// Runs and returns stdout as bytes (for `read --raw`).
fn run_bytes(args: &[&str], envs: &[(&str, &str)]) -> (i32, Vec<u8>, String) {
    let cwd = tempfile::tempdir().expect("temp cwd");
    let output = Command::new(env!("CARGO_BIN_EXE_skills"))
        .args(args)
        .current_dir(cwd.path())
        .env_remove("SKILLS_ROOT")
        .env_remove("RUST_LOG")
        .envs(envs.iter().copied())
        .output()
        .expect("the skills binary runs");
    (
        output.status.code().expect("exited normally"),
        output.stdout,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn logging_is_off_by_default_and_v_is_accepted_everywhere() {
    let root = Root::with_two_skills();
    let arg = root.arg();
    let quiet = run(&["list", &arg]).expect_code(0);
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
    for args in [
        vec!["-v", "list", arg.as_str()],
        vec!["list", "-vv", arg.as_str()],
        vec!["--verbose", "catalog", arg.as_str()],
    ] {
        let out = run(&args).expect_code(0);
        assert!(out.stdout.contains("alpha"), "{args:?}: {}", out.stdout);
    }
}

#[test]
fn an_invalid_rust_log_is_reported_and_the_command_still_runs() {
    let root = Root::with_two_skills();
    let arg = root.arg();
    let (code, stdout, stderr) = run_bytes(&["list", &arg], &[("RUST_LOG", "skills_fs=notalevel")]);
    assert_eq!(code, 0, "{stderr}");
    assert!(String::from_utf8_lossy(&stdout).contains("alpha"));
    assert!(
        stderr.contains("RUST_LOG is not a valid filter"),
        "{stderr}"
    );
    // A valid filter installs the subscriber; stdout stays the plain result.
    let (code, stdout, stderr) = run_bytes(&["list", &arg], &[("RUST_LOG", "skills_fs=trace")]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(String::from_utf8_lossy(&stdout).lines().count(), 2);
}

/// A skill in a folder whose name holds a newline and an ESC; the newline is
/// followed by text that would forge an `ok` line if printed raw.
fn hostile_root() -> (Root, String) {
    let root = Root::new();
    let folder = "evil\nok       forged  (/tmp/x)\u{1b}[2J";
    root.write(
        &format!("{folder}/SKILL.md"),
        "---\nname: evil\ndescription: \"Line one.\\nok       forged \\e[31m\"\n---\nBody \u{1b}[2J text.\n",
    );
    root.write(&format!("{folder}/references/a\u{1b}b.md"), "x\n");
    let arg = root.arg();
    (root, arg)
}

#[test]
fn validate_text_escapes_control_characters_in_folder_names() {
    let (_root, arg) = hostile_root();
    let out = run(&["validate", &arg]);
    assert!(!out.stdout.contains('\u{1b}'), "{:?}", out.stdout);
    // Indented diagnostic lines must not be forged either (the folder name is
    // in every diagnostic's file path).
    assert!(
        !out.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("ok       forged")),
        "a forged line:\n{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("evil\\nok       forged"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\\x1b[2J"), "{}", out.stdout);
    // JSON keeps the real name, escaped by JSON itself.
    let json = run(&["validate", "--json", &arg]).json();
    let dir = json["skills"][0]["dir"].as_str().expect("dir");
    assert!(
        dir.ends_with("evil\nok       forged  (/tmp/x)\u{1b}[2J"),
        "{dir:?}"
    );
}

#[test]
fn show_text_escapes_control_characters() {
    let (_root, arg) = hostile_root();
    let out = run(&["show", "evil", &arg]).expect_code(0);
    assert!(!out.stdout.contains('\u{1b}'), "{:?}", out.stdout);
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("ok ")),
        "a forged line:\n{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("description: Line one.\\nok       forged \\x1b[31m"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("location:    "), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("evil\\nok       forged  (/tmp/x)\\x1b[2J/SKILL.md"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("Body \\x1b[2J text."), "{}", out.stdout);
    // `list` puts names and descriptions on one line each.
    let list = run(&["list", &arg]).expect_code(0);
    assert_eq!(list.stdout.lines().count(), 1, "{}", list.stdout);
    assert!(!list.stdout.contains('\u{1b}'), "{:?}", list.stdout);
}

#[test]
fn errors_escape_control_characters() {
    let root = Root::with_two_skills();
    let arg = root.arg();
    let out = run(&["read", "alpha", "references/nope\u{1b}[2J.md", &arg]).expect_code(1);
    assert!(!out.stderr.contains('\u{1b}'), "{:?}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn read_raw_writes_binary_bytes_unchanged() {
    let root = Root::with_two_skills();
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe";
    root.write("alpha/assets/logo.png", png);
    let arg = root.arg();
    let (code, stdout, stderr) =
        run_bytes(&["read", "--raw", "alpha", "assets/logo.png", &arg], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, png);
    // Text files come out unchanged too.
    let (code, stdout, _) = run_bytes(&["read", "alpha", "scripts/run.sh", "--raw", &arg], &[]);
    assert_eq!(code, 0);
    assert_eq!(stdout, b"echo run\n");
}

#[test]
fn read_raw_refuses_escapes_and_missing_files() {
    let root = Root::with_two_skills();
    root.write("outside.bin", b"\0secret".as_slice());
    root.write("alpha/assets/ok.bin", b"\0".as_slice());
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("outside.bin"), root.join("alpha/assets/link.bin"))
        .expect("symlink");
    let arg = root.arg();
    for (file, needle) in [
        ("../outside.bin", ".."),
        ("/etc/passwd", "absolute"),
        #[cfg(unix)]
        ("assets/link.bin", "outside the skill folder"),
        ("assets/none.bin", "no file"),
        ("references", "is a folder, not a file"),
    ] {
        let (code, stdout, stderr) = run_bytes(&["read", "--raw", "alpha", file, &arg], &[]);
        assert_eq!(code, 1, "{file}: {stderr}");
        assert!(stdout.is_empty(), "{file}");
        assert!(stderr.contains(needle), "{file}: {stderr}");
    }
    let (code, _, stderr) = run_bytes(&["read", "--raw", "nobody", "a", &arg], &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("alpha"), "{stderr}");
}

#[test]
fn read_raw_and_lines_conflict() {
    let root = Root::with_two_skills();
    let arg = root.arg();
    run(&[
        "read",
        "--raw",
        "--lines",
        "1:2",
        "alpha",
        "scripts/run.sh",
        &arg,
    ])
    .expect_code(2);
}

#[test]
fn read_max_bytes_cuts_and_raises_the_refusal_limit() {
    let root = Root::with_two_skills();
    root.write("alpha/references/long.md", "line\n".repeat(100));
    let arg = root.arg();
    let out = run(&[
        "read",
        "--max-bytes",
        "12",
        "alpha",
        "references/long.md",
        &arg,
    ])
    .expect_code(0);
    assert!(
        out.stdout.starts_with("line\nline\n[truncated"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("capped at 12 bytes"), "{}", out.stdout);
    // --raw refuses files over --max-bytes instead of cutting them.
    let (code, stdout, stderr) = run_bytes(
        &[
            "read",
            "--raw",
            "--max-bytes",
            "12",
            "alpha",
            "references/long.md",
            &arg,
        ],
        &[],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("500 bytes"), "{stderr}");
}

#[test]
fn read_over_16_mib_is_refused_unless_max_bytes_allows_it() {
    let root = Root::with_two_skills();
    let big = 16 * 1024 * 1024 + 10;
    root.write("alpha/references/big.txt", "a\n".repeat(big / 2));
    let arg = root.arg();
    let out = run(&[
        "read",
        "--lines",
        "1:2",
        "alpha",
        "references/big.txt",
        &arg,
    ])
    .expect_code(1);
    assert!(out.stderr.contains("are not read"), "{}", out.stderr);
    let out = run(&[
        "read",
        "--lines",
        "1:2",
        "--max-bytes",
        "20000000",
        "alpha",
        "references/big.txt",
        &arg,
    ])
    .expect_code(0);
    assert_eq!(out.stdout, "a\na\n");
}

#[test]
fn show_max_bytes_cuts_the_body() {
    let root = Root::new();
    root.skill("long", "Long body. Use it for tests.", &"word\n".repeat(50));
    let arg = root.arg();
    let out = run(&["show", "--max-bytes", "10", "long", &arg]).expect_code(0);
    let body = out.stdout.split("---\n").nth(1).expect("a body");
    assert!(body.starts_with("word\nword\n[truncated"), "{body}");
    let json = run(&["show", "--json", "--max-bytes", "10", "long", &arg])
        .expect_code(0)
        .json();
    assert!(
        json["body"]
            .as_str()
            .expect("body")
            .starts_with("word\nword\n[truncated")
    );
}

// ---------------------------------------------------------------- JSON shape

#[test]
fn list_json_uses_frontmatter_keys_and_leaves_empty_fields_out() {
    let root = Root::new();
    root.write(
        "tooly/SKILL.md",
        "---\nname: tooly\ndescription: Uses tools. Use it for tests.\nallowed-tools: Read Bash(git:*)\nargument-hint: \"[x]\"\ndisable-model-invocation: true\nx-custom:\n  a: 1\n---\nTools:\n- read_file\n",
    );
    root.skill("plain", "Plain skill. Use it for tests.", "Body.");
    let arg = root.arg();
    let json = run(&["list", "--json", &arg]).expect_code(0).json();
    assert_eq!(
        json[0],
        serde_json::json!({
            "name": "plain",
            "description": "Plain skill. Use it for tests."
        })
    );
    assert_eq!(
        json[1],
        serde_json::json!({
            "name": "tooly",
            "description": "Uses tools. Use it for tests.",
            "allowed-tools": "Read Bash(git:*)",
            "argument-hint": "[x]",
            "disable-model-invocation": true,
            "x-custom": {"a": 1},
            "parsed": {
                "allowed_tools": ["Read", "Bash(git:*)"],
                "declared_tools": ["read_file"],
                "extensions": {"disable_model_invocation": true, "argument_hint": "[x]"}
            }
        })
    );
}

/// The `show --json` example in docs/cli.md is what the command prints (the
/// body, shortened there, is compared by its start).
#[test]
fn show_json_matches_the_documented_example() {
    let doc = fs::read_to_string(workspace().join("docs/cli.md")).expect("docs/cli.md");
    let marker = "<!-- show-json-example: skills show --json incident-postmortem -->";
    let after = doc
        .split(marker)
        .nth(1)
        .expect("the example marker in docs/cli.md");
    let block = after
        .split("```json\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a json block after the marker");
    let documented: Value = serde_json::from_str(block).expect("the documented example is JSON");
    let actual = run_in(&workspace(), &["show", "--json", "incident-postmortem"])
        .expect_code(0)
        .json();
    let keys =
        |v: &Value| -> Vec<String> { v.as_object().expect("an object").keys().cloned().collect() };
    assert_eq!(keys(&actual), keys(&documented));
    for key in ["metadata", "resources", "location"] {
        assert_eq!(
            actual[key], documented[key],
            "`{key}` differs from docs/cli.md"
        );
    }
    let short = documented["body"]
        .as_str()
        .expect("body")
        .trim_end_matches('…');
    assert!(actual["body"].as_str().expect("body").starts_with(short));
}

// ------------------------------------------------------------ catalog warnings

#[test]
fn catalog_over_budget_warns_naming_left_out_skills() {
    let root = Root::with_two_skills();
    let arg = root.arg();
    let out = run(&["catalog", "--budget", "100", &arg]).expect_code(0);
    assert!(out.stdout.chars().count() > 100);
    assert!(
        out.stderr
            .contains("2 of 2 skill(s) left out to fit the budget: alpha, beta"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("over the budget of 100"),
        "{}",
        out.stderr
    );
    // A budget that keeps some skills names exactly the ones left out (names
    // long enough that leaving some out beats listing them by name).
    let many = Root::new();
    let names: Vec<String> = (10..40)
        .map(|i| format!("a-rather-long-skill-name-{i}"))
        .collect();
    for name in &names {
        many.skill(name, "Short. Use it.", "Body.");
    }
    let many_arg = many.arg();
    let full = run(&["catalog", &many_arg]).expect_code(0);
    assert!(full.stderr.is_empty(), "{}", full.stderr);
    let full_len = full.stdout.chars().count();
    let partial = (1..80)
        .map(|step| full_len.saturating_sub(step * 25))
        .map(|budget| run(&["catalog", "--budget", &budget.to_string(), &many_arg]).expect_code(0))
        .find(|out| out.stderr.contains("skill(s) left out") && !out.stderr.contains("30 of 30"))
        .expect("some budget keeps some skills");
    let left_out = partial
        .stderr
        .split("left out to fit the budget: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .expect("names");
    for name in &names {
        let shown = partial.stdout.contains(&format!("<skill name=\"{name}\""));
        assert_eq!(
            shown,
            !left_out.split(", ").any(|n| n == name),
            "{name}: {}\n{}",
            partial.stderr,
            partial.stdout
        );
    }
    // Descriptions went first: every skill still listed is listed by name.
    assert!(
        !partial.stdout.contains("Short. Use it."),
        "{}",
        partial.stdout
    );
    assert!(
        partial
            .stderr
            .contains("skill(s) listed by name only to fit the budget: a-rather-long"),
        "{}",
        partial.stderr
    );
    assert!(
        !partial.stderr.contains("over the budget"),
        "{}",
        partial.stderr
    );
    for format in ["xml", "markdown", "json"] {
        let out = run(&["catalog", "--format", format, "--budget", "100000", &arg]).expect_code(0);
        assert!(out.stderr.is_empty(), "{format}: {}", out.stderr);
    }
}

#[test]
fn catalog_empty_warns_and_json_stays_json() {
    let root = Root::new();
    root.write("README.md", "no skills here\n");
    let arg = root.arg();
    let out = run(&["catalog", &arg]).expect_code(0);
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("the catalog is empty"),
        "{}",
        out.stderr
    );
    let out = run(&["catalog", "--format", "json", &arg]).expect_code(0);
    assert_eq!(out.json(), serde_json::json!({"skills": []}));
    // Hidden skills only: still empty, and the warning says why.
    root.write(
        "hidden/SKILL.md",
        "---\nname: hidden\ndescription: Hidden. Use by name.\ndisable-model-invocation: true\n---\nBody.\n",
    );
    let out = run(&["catalog", "--format", "json", &arg]).expect_code(0);
    assert_eq!(out.json()["skills"], serde_json::json!([]));
    assert!(
        out.stderr.contains("disable-model-invocation"),
        "{}",
        out.stderr
    );
}

#[test]
fn catalog_json_with_a_budget_is_valid_json() {
    let root = Root::with_two_skills();
    let arg = root.arg();
    for budget in ["1", "100", "300", "100000", "5t"] {
        let out = run(&["catalog", "--format", "json", "--budget", budget, &arg]).expect_code(0);
        let _ = out.json();
    }
}

// ------------------------------------------------------------------- docs

#[test]
fn help_readme_and_docs_agree_on_exit_code_1_for_a_path_without_skills() {
    let help = run(&["--help"]).expect_code(0).stdout;
    assert!(help.contains("or a path holds no skill"), "{help}");
    let readme = fs::read_to_string(workspace().join("README.md")).expect("README");
    let cli = fs::read_to_string(workspace().join("docs/cli.md")).expect("docs/cli.md");
    assert!(readme.contains("a path holds no skill"), "README.md");
    assert!(cli.contains("a path holds no skill"), "docs/cli.md");
    // And the code does it.
    let empty = Root::new();
    empty.write("notes.txt", "x");
    run(&["validate", &empty.arg()]).expect_code(1);
}

#[test]
fn readme_mentions_show_json_and_the_global_options() {
    let readme = fs::read_to_string(workspace().join("README.md")).expect("README");
    for needle in [
        "show --json",
        "--root",
        "--standard-roots",
        "--refresh",
        "-v",
    ] {
        assert!(readme.contains(needle), "README.md lacks `{needle}`");
    }
}

#[test]
fn v_and_rust_log_print_events_on_stderr_only() {
    let root = Root::with_two_skills();
    let arg = root.arg();
    let args = ["read", "--raw", "alpha", "scripts/run.sh", arg.as_str()];
    let (code, stdout, stderr) = run_bytes(&args, &[]);
    assert_eq!((code, stdout.as_slice()), (0, b"echo run\n".as_slice()));
    assert!(stderr.is_empty(), "{stderr}");
    let mut verbose = vec!["-v"];
    verbose.extend(args);
    let (code, stdout, stderr) = run_bytes(&verbose, &[]);
    assert_eq!((code, stdout.as_slice()), (0, b"echo run\n".as_slice()));
    assert!(stderr.contains("DEBUG"), "{stderr}");
    assert!(stderr.contains("read resource"), "{stderr}");
    assert!(stderr.contains("bytes=9"), "{stderr}");
    let (_, stdout, stderr) = run_bytes(&args, &[("RUST_LOG", "skills=debug")]);
    assert_eq!(stdout, b"echo run\n");
    assert!(stderr.contains("skill roots"), "{stderr}");
}

#[test]
fn list_loads_a_marketplace_library_and_summarizes_skipped_skills() {
    let root = Root::new();
    let stats = skills_testkit::marketplace::write(root.dir.path(), 7, 300).expect("write");
    assert!(
        stats.with_description < stats.skills,
        "the seed gives some empty descriptions"
    );
    assert!(
        stats.long_folders > 0,
        "and folder names over 64 characters"
    );
    // Every marketplace skill loads; only unreadable YAML is skipped.
    for bad in ["broken-1", "broken-2"] {
        root.write(
            &format!("{bad}/SKILL.md"),
            "---\nname: Broken\ndescription: [unclosed\n---\n",
        );
    }
    let out = run(&with_root(&["list"], &root.arg())).expect_code(0);
    assert_eq!(out.stdout.lines().count(), stats.skills);
    // One line per reason, not one per skill.
    let skipped = "2 skills skipped: unreadable YAML frontmatter; run `skills validate`";
    assert!(out.stderr.contains(skipped), "{}", out.stderr);
    assert_eq!(
        out.stderr.lines().filter(|l| l.contains("skipped")).count(),
        1,
        "{}",
        out.stderr
    );
    let out = run(&with_root(&["catalog"], &root.arg())).expect_code(0);
    assert!(out.stderr.contains(skipped), "{}", out.stderr);
    // The display title stays out of the catalog.
    let generated = skills_testkit::marketplace::generate(7, 300);
    let first = generated
        .iter()
        .find(|s| !s.empty_description && !s.missing_name)
        .expect("one with a description");
    assert!(
        out.stdout
            .contains(&format!("<skill name=\"{}\">", first.name))
    );
    assert!(!out.stdout.contains(&format!("name=\"{}\"", first.title)));
    // `show --json` carries the title.
    let out = run(&with_root(&["show", &first.name, "--json"], &root.arg())).expect_code(0);
    assert_eq!(out.json()["metadata"]["title"], first.title.as_str());
    // A title in a folder over 64 characters loads under the folder name (the
    // generated `name`), and
    // a skill without a description gets its body's first paragraph.
    let long = generated
        .iter()
        .find(|s| s.long_folder && !s.missing_name)
        .expect("a long folder");
    let empty = generated
        .iter()
        .find(|s| s.empty_description && !s.missing_name)
        .expect("an empty description");
    for skill in [long, empty] {
        let out = run(&with_root(&["show", &skill.name, "--json"], &root.arg())).expect_code(0);
        assert_eq!(out.json()["metadata"]["name"], skill.name.as_str());
        assert_eq!(out.json()["metadata"]["title"], skill.title.as_str());
    }
    let out = run(&with_root(&["show", &empty.name, "--json"], &root.arg())).expect_code(0);
    assert_eq!(out.json()["metadata"]["description"], empty.title.as_str());
}

#[test]
fn validate_says_which_mode_ran_and_how_many_skills_are_portable() {
    let root = Root::with_two_skills();
    root.write(
        "gamma/SKILL.md",
        "---\nname: gamma\ndescription: Gamma. Use it for tests.\nwhen_to_use: always\n---\nGamma body.\n",
    )
    .write(
        "delta/SKILL.md",
        "---\nname: Delta Title\ndescription: Delta. Use it for tests.\n---\nDelta body.\n",
    );
    let out = run(&with_root(&["validate"], &root.arg())).expect_code(0);
    assert!(
        out.stdout.contains(
            "lenient mode: 4 skills, 4 valid, 2 portable (2 use fields or names other clients reject; --strict checks the specification)"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("warning[portability-extension-field]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("warning[portability-title-as-name]: `name: Delta Title` is not a skill name (it has uppercase letters, characters other than letters, digits and hyphens); loaded as `delta`"),
        "{}",
        out.stdout
    );
    let json = run(&with_root(&["validate", "--json"], &root.arg()))
        .expect_code(0)
        .json();
    assert_eq!(json["mode"], "lenient");
    assert_eq!(json["counts"]["skills"], 4);
    assert_eq!(json["counts"]["valid"], 4);
    assert_eq!(json["counts"]["portable"], 2);
    let strict = run(&with_root(&["validate", "--strict", "--json"], &root.arg()))
        .expect_code(1)
        .json();
    assert_eq!(strict["mode"], "strict");
    assert_eq!(strict["counts"]["valid"], 2);
    let out = run(&with_root(&["validate", "--strict"], &root.arg())).expect_code(1);
    assert!(
        out.stdout.contains("strict mode: 4 skills, 2 valid"),
        "{}",
        out.stdout
    );
}

#[test]
fn validate_lint_warnings_never_change_the_exit_code() {
    let root = Root::new();
    root.write(
        "pdf/SKILL.md",
        "---\nname: pdf\ndescription: PDF toolkit for text, tables and forms.\n---\n# PDF\n\nFor forms, read FORMS.md. Run `scripts/fill.py`.\nSee [the API](references/api.md#top) and https://example.com/x.md.\n",
    )
    .write("pdf/forms.md", "# Forms\n")
    .write("pdf/scripts/fill.py", "import sys\n");
    for strict in [false, true] {
        let mut args = vec!["validate"];
        if strict {
            args.push("--strict");
        }
        let out = run(&with_root(&args, &root.arg())).expect_code(0);
        for needle in [
            "warning[lint-file-case]: the body names `FORMS.md` but the file is `forms.md`: did you mean `forms.md`?",
            "warning[lint-missing-file]: the body names `references/api.md`",
            "warning[lint-description-no-trigger]",
            "warning[lint-script-no-shebang]",
        ] {
            assert!(out.stdout.contains(needle), "{needle}\n{}", out.stdout);
        }
        assert!(!out.stdout.contains("example.com"), "{}", out.stdout);
    }
}

#[test]
fn validate_flags_a_description_that_narrates_the_workflow() {
    let root = Root::new();
    root.write(
        "forms/SKILL.md",
        "---\nname: forms\ndescription: Extracts the fields of a PDF, then merges them with the CRM record, then fills the form. Use when a user shares a PDF form.\n---\n# Forms\n",
    )
    .write(
        "csv/SKILL.md",
        "---\nname: csv\ndescription: Summarizes CSV files. If a file is large, then sample it. Use when a user shares a CSV.\n---\n# CSV\n",
    );
    let out = run(&with_root(&["validate"], &root.arg())).expect_code(0);
    assert!(
        out.stdout.contains(
            "forms/SKILL.md:3: warning[lint-description-workflow]: the description narrates the workflow (`then`, `then`): say what the skill is for and when to use it, and keep the steps in the body"
        ),
        "{}",
        out.stdout
    );
    assert_eq!(
        out.stdout.matches("lint-description-workflow").count(),
        1,
        "{}",
        out.stdout
    );
}

/// A skill whose `SKILL.md` cannot be read (a symlink loop: `ELOOP`, which
/// root cannot bypass the way it bypasses file modes) fails `validate` and is
/// counted on stderr by `list` and `catalog`.
#[cfg(unix)]
#[test]
fn unreadable_skills_fail_validate_and_are_counted_by_list_and_catalog() {
    let root = Root::with_two_skills();
    std::fs::create_dir_all(root.join("looped")).expect("mkdir");
    std::os::unix::fs::symlink("SKILL.md", root.join("looped/SKILL.md")).expect("symlink");
    let arg = root.arg();
    let out = run(&["validate", &arg]).expect_code(1);
    assert!(out.stdout.contains("INVALID  looped"), "{}", out.stdout);
    assert!(out.stdout.contains("error[io-error]"), "{}", out.stdout);
    for command in ["list", "catalog"] {
        let out = run(&[command, &arg]).expect_code(0);
        assert!(
            out.stderr.contains("1 skill skipped: could not be read"),
            "{command}: {}",
            out.stderr
        );
    }
}

/// A skill that tries to drive the terminal from everywhere the CLI shows:
/// its description (OSC 52 clipboard write, OSC 0 title, CSI, 8-bit CSI), its
/// body, a reference file (OSC 52, colours, a lone carriage return) and a
/// second skill whose broken frontmatter lands in diagnostics.
fn terminal_hostile_root() -> Root {
    let root = Root::new();
    root.write(
        "evil/SKILL.md",
        "---\nname: evil\ndescription: \"Evil \\e]52;c;cGF5bG9hZA==\\a, \\e]0;TITLE\\a \\e[2J\\x9b31m done\"\n---\n# Body \u{1b}]0;BODY\u{7} end\nline \u{1b}[31mred\u{1b}[0m\n",
    );
    root.write(
        "evil/references/notes.md",
        "ref \u{1b}]52;c;cGF5bG9hZA==\u{7} \u{1b}[31mred\u{1b}[0m\r\nok\rFORGED\n\u{9b}2J\n",
    );
    root.write(
        "broken/SKILL.md",
        "---\nname: broken\ndescription: [\u{1b}]0;DIAG\u{7}\n---\nx\n",
    );
    root
}

/// Runs the binary on a pseudo-terminal (util-linux `script`), so standard
/// output and standard error are a terminal; returns everything it printed.
/// Fails when `script` is missing: this test cannot check anything without it.
fn on_terminal(args: &[&str], envs: &[(&str, &str)]) -> Vec<u8> {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let command: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_skills"))
        .chain(args.iter().copied())
        .map(quote)
        .collect();
    let cwd = tempfile::tempdir().expect("temp cwd");
    let output = Command::new("script")
        .args(["-qec", &command.join(" "), "/dev/null"])
        .current_dir(cwd.path())
        .env_remove("SKILLS_ROOT")
        .env_remove("RUST_LOG")
        .envs(envs.iter().copied())
        .output()
        .expect("util-linux `script` runs (it gives the binary a terminal)");
    output.stdout
}

/// Why `bytes` would drive a terminal, if it would: an ESC, a BEL, a
/// backspace, a lone carriage return or an 8-bit CSI/OSC/DCS.
fn terminal_control(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let bad = match c {
            '\u{1b}' | '\u{7}' | '\u{8}' | '\u{9b}' | '\u{9d}' | '\u{90}' => true,
            // The terminal itself turns "\n" into "\r\n" (and a kept "\r\n"
            // into "\r\r\n"); a "\r" before anything else could overwrite
            // a line.
            '\r' => {
                while chars.peek() == Some(&'\r') {
                    chars.next();
                }
                chars.peek() != Some(&'\n')
            }
            _ => false,
        };
        if bad {
            return Some(format!("{:?} in {text:?}", c));
        }
    }
    None
}

#[test]
fn no_command_sends_control_sequences_to_a_terminal() {
    let root = terminal_hostile_root();
    let arg = root.arg();
    // Each command, and a word its output must hold (it ran and printed).
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["list", &arg], "TITLE"),
        (vec!["show", "evil", &arg], "BODY"),
        (vec!["read", "evil", "references/notes.md", &arg], "FORGED"),
        (vec!["read", "evil", "SKILL.md", &arg], "BODY"),
        (vec!["catalog", &arg], "TITLE"),
        (vec!["catalog", "--format", "markdown", &arg], "TITLE"),
        (vec!["catalog", "--format", "json", &arg], "TITLE"),
        (vec!["validate", &arg], "DIAG"),
        (vec!["report", &arg], "DIAG"),
        (
            vec![
                "run",
                "evil",
                &arg,
                "--",
                r"printf '\033]52;c;cGF5bG9hZA==\007out\r\n'; printf '\033]0;T\007err\rX\n' >&2",
            ],
            "err",
        ),
    ];
    for (args, expected) in cases {
        // NO_COLOR: `report` colours its own headings on a terminal.
        let shown = on_terminal(&args, &[("NO_COLOR", "1")]);
        let text = String::from_utf8_lossy(&shown);
        assert!(
            text.contains(expected),
            "{args:?} did not print `{expected}`: {text:?}"
        );
        if let Some(why) = terminal_control(&shown) {
            panic!("{args:?} sent a control character to the terminal: {why}");
        }
    }
}

#[test]
fn read_and_run_write_data_unchanged_into_a_pipe() {
    let root = terminal_hostile_root();
    let arg = root.arg();
    let (code, stdout, stderr) = run_bytes(&["read", "evil", "references/notes.md", &arg], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        fs::read(root.join("evil/references/notes.md")).expect("the file is there")
    );
    let (code, stdout, stderr) = run_bytes(
        &["run", "evil", &arg, "--", r"printf '\033]0;T\007out\n'"],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, b"\x1b]0;T\x07out\n");
}
