//! Turning each tool's output into a verdict and a set of rule names.
//!
//! Rule names are our diagnostic codes, with every `yaml-*` code folded into
//! `yaml` (skills-ref has a single "Invalid YAML" message).

use std::collections::BTreeSet;

use serde_json::Value;

/// Set of violated rules.
pub(crate) type Rules = BTreeSet<String>;

/// Valid/invalid plus the violated rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) valid: bool,
    pub(crate) rules: Rules,
}

impl Verdict {
    /// One-line rendering for reports.
    pub(crate) fn render(&self) -> String {
        let verdict = if self.valid { "valid" } else { "invalid" };
        let rules: Vec<&str> = self.rules.iter().map(String::as_str).collect();
        format!("{verdict} {{{}}}", rules.join(", "))
    }
}

/// Every error code our CLI may emit (the JSON contract).
pub(crate) const OUR_CODES: &[&str] = &[
    "skill-md-missing",
    "skill-md-not-file",
    "skill-md-too-large",
    "not-utf8",
    "frontmatter-missing",
    "frontmatter-unclosed",
    "frontmatter-too-large",
    "yaml-invalid",
    "yaml-flow-style",
    "yaml-anchor",
    "yaml-tag",
    "yaml-duplicate-key",
    "yaml-too-deep",
    "yaml-alias-budget",
    "frontmatter-not-mapping",
    "field-unknown",
    "name-missing",
    "name-empty",
    "name-too-long",
    "name-not-lowercase",
    "name-hyphen-edge",
    "name-consecutive-hyphens",
    "name-invalid-chars",
    "name-dir-mismatch",
    "name-reserved",
    "description-missing",
    "description-empty",
    "description-too-long",
    "compatibility-not-string",
    "compatibility-too-long",
];

/// Folds one of our codes into a rule name.
pub(crate) fn our_rule(code: &str) -> String {
    if code == "yaml" || code.starts_with("yaml-") {
        "yaml".to_owned()
    } else {
        code.to_owned()
    }
}

/// Verdict from our `validate --json` output.
pub(crate) fn our_verdict(json: &Value) -> Result<Verdict, String> {
    let valid = json
        .get("valid")
        .and_then(Value::as_bool)
        .ok_or("missing boolean \"valid\"")?;
    let mut rules = Rules::new();
    collect_errors(json, &mut rules).map_err(|e| format!("top level: {e}"))?;
    let skills = json
        .get("skills")
        .and_then(Value::as_array)
        .ok_or("missing array \"skills\"")?;
    for (i, skill) in skills.iter().enumerate() {
        collect_errors(skill, &mut rules).map_err(|e| format!("skills[{i}]: {e}"))?;
    }
    Ok(Verdict { valid, rules })
}

/// Adds the codes of the `"error"` diagnostics of `node` to `rules`.
fn collect_errors(node: &Value, rules: &mut Rules) -> Result<(), String> {
    let diagnostics = node
        .get("diagnostics")
        .and_then(Value::as_array)
        .ok_or("missing array \"diagnostics\"")?;
    for (i, diagnostic) in diagnostics.iter().enumerate() {
        let field = |key: &str| {
            diagnostic
                .get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("diagnostics[{i}] has no string \"{key}\""))
        };
        if field("severity")? == "error" {
            rules.insert(our_rule(field("code")?));
        }
    }
    Ok(())
}

/// Messages skills-ref prints verbatim, with their rule.
const EXACT: &[(&str, &str)] = &[
    ("Missing required file: SKILL.md", "skill-md-missing"),
    (
        "SKILL.md must start with YAML frontmatter (---)",
        "frontmatter-missing",
    ),
    (
        "SKILL.md frontmatter not properly closed with ---",
        "frontmatter-unclosed",
    ),
    (
        "SKILL.md frontmatter must be a YAML mapping",
        "frontmatter-not-mapping",
    ),
    (
        "Missing required field in frontmatter: name",
        "name-missing",
    ),
    (
        "Missing required field in frontmatter: description",
        "description-missing",
    ),
    ("Field 'name' must be a non-empty string", "name-empty"),
    (
        "Field 'description' must be a non-empty string",
        "description-empty",
    ),
    (
        "Field 'compatibility' must be a string",
        "compatibility-not-string",
    ),
    (
        "Skill name cannot start or end with a hyphen",
        "name-hyphen-edge",
    ),
    (
        "Skill name cannot contain consecutive hyphens",
        "name-consecutive-hyphens",
    ),
];

/// Message prefixes (the message continues with interpolated text).
const PREFIXES: &[(&str, &str)] = &[
    ("Invalid YAML in frontmatter: ", "yaml"),
    ("Unexpected fields in frontmatter: ", "field-unknown"),
    (
        "Description exceeds 1024 character limit (",
        "description-too-long",
    ),
    (
        "Compatibility exceeds 500 character limit (",
        "compatibility-too-long",
    ),
    ("Directory name '", "name-dir-mismatch"),
    ("SKILL.md not found in ", "skill-md-missing"),
    // Never produced by the generated cases (we always pass a directory).
    ("Path does not exist: ", "path-missing"),
    ("Not a directory: ", "path-not-directory"),
];

/// The rule one skills-ref message reports, if it is one of its templates.
pub(crate) fn reference_rule(message: &str) -> Option<&'static str> {
    if let Some((_, rule)) = EXACT.iter().find(|(text, _)| *text == message) {
        return Some(rule);
    }
    if let Some((_, rule)) = PREFIXES.iter().find(|(p, _)| message.starts_with(p)) {
        return Some(rule);
    }
    // "Skill name '{name}' ...": match on the tail, the name may be anything.
    if message.starts_with("Skill name '") {
        if message.ends_with("' must be lowercase") {
            return Some("name-not-lowercase");
        }
        if message.ends_with(
            "' contains invalid characters. Only letters, digits, and hyphens are allowed.",
        ) {
            return Some("name-invalid-chars");
        }
        if message.contains("' exceeds 64 character limit (") && message.ends_with(" chars)") {
            return Some("name-too-long");
        }
    }
    None
}

/// Rules from skills-ref's stderr after it exited with status 1.
///
/// Messages are `  - <message>` lines; lines that do not start that way
/// continue the previous message (the YAML error text spans lines). A Python
/// traceback is mapped by its exception; unknown output yields `unmapped: …`
/// or `crash: …` pseudo-rules, which never match ours.
pub(crate) fn reference_rules(stderr: &str) -> Rules {
    if stderr.contains("Traceback (most recent call last):") {
        return Rules::from([traceback_rule(stderr)]);
    }
    let mut messages: Vec<String> = Vec::new();
    for line in stderr.lines() {
        if let Some(message) = line.strip_prefix("  - ") {
            messages.push(message.to_owned());
        } else if let Some(last) = messages.last_mut() {
            last.push('\n');
            last.push_str(line);
        }
    }
    if messages.is_empty() {
        return Rules::from([format!("unmapped: no messages in {stderr:?}")]);
    }
    messages
        .iter()
        .map(|message| match reference_rule(message) {
            Some(rule) => rule.to_owned(),
            None => format!("unmapped: {message}"),
        })
        .collect()
}

/// Rule for a crash of skills-ref, by the exception in its traceback.
fn traceback_rule(stderr: &str) -> String {
    let has = |prefix: &str| stderr.lines().any(|line| line.starts_with(prefix));
    if has("UnicodeDecodeError:") {
        // `read_text(encoding="utf-8")` on a file that is not UTF-8.
        "not-utf8".to_owned()
    } else if has("IsADirectoryError:") {
        // `SKILL.md` exists but is a directory.
        "skill-md-not-file".to_owned()
    } else if has("strictyaml.ruamel.reader.ReaderError:") {
        // The YAML reader rejected a non-printable character; strictyaml then
        // crashes formatting that error (`'ReaderError' object has no
        // attribute 'context_mark'`). The rule it enforces is YAML validity.
        "yaml".to_owned()
    } else {
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        format!("crash: {}", last.unwrap_or_default())
    }
}

/// Every message template of skills-ref 0.1.1 (`validator.py`,
/// `parser.py`), as the Python string literals it is written with
/// (implicitly concatenated pieces), and the rule it maps to.
pub(crate) const TEMPLATES: &[(&str, &[&str], &str)] = &[
    (
        "validator.py",
        &["Path does not exist: {skill_dir}"],
        "path-missing",
    ),
    (
        "validator.py",
        &["Not a directory: {skill_dir}"],
        "path-not-directory",
    ),
    (
        "validator.py",
        &["Missing required file: SKILL.md"],
        "skill-md-missing",
    ),
    (
        "validator.py",
        &["Field 'name' must be a non-empty string"],
        "name-empty",
    ),
    (
        "validator.py",
        &[
            "Skill name '{name}' exceeds {MAX_SKILL_NAME_LENGTH} character limit ",
            "({len(name)} chars)",
        ],
        "name-too-long",
    ),
    (
        "validator.py",
        &["Skill name '{name}' must be lowercase"],
        "name-not-lowercase",
    ),
    (
        "validator.py",
        &["Skill name cannot start or end with a hyphen"],
        "name-hyphen-edge",
    ),
    (
        "validator.py",
        &["Skill name cannot contain consecutive hyphens"],
        "name-consecutive-hyphens",
    ),
    (
        "validator.py",
        &[
            "Skill name '{name}' contains invalid characters. ",
            "Only letters, digits, and hyphens are allowed.",
        ],
        "name-invalid-chars",
    ),
    (
        "validator.py",
        &["Directory name '{skill_dir.name}' must match skill name '{name}'"],
        "name-dir-mismatch",
    ),
    (
        "validator.py",
        &["Field 'description' must be a non-empty string"],
        "description-empty",
    ),
    (
        "validator.py",
        &[
            "Description exceeds {MAX_DESCRIPTION_LENGTH} character limit ",
            "({len(description)} chars)",
        ],
        "description-too-long",
    ),
    (
        "validator.py",
        &["Field 'compatibility' must be a string"],
        "compatibility-not-string",
    ),
    (
        "validator.py",
        &[
            "Compatibility exceeds {MAX_COMPATIBILITY_LENGTH} character limit ",
            "({len(compatibility)} chars)",
        ],
        "compatibility-too-long",
    ),
    (
        "validator.py",
        &[
            "Unexpected fields in frontmatter: {', '.join(sorted(extra_fields))}. ",
            "Only {sorted(ALLOWED_FIELDS)} are allowed.",
        ],
        "field-unknown",
    ),
    (
        "validator.py",
        &["Missing required field in frontmatter: name"],
        "name-missing",
    ),
    (
        "validator.py",
        &["Missing required field in frontmatter: description"],
        "description-missing",
    ),
    (
        "parser.py",
        &["SKILL.md must start with YAML frontmatter (---)"],
        "frontmatter-missing",
    ),
    (
        "parser.py",
        &["SKILL.md frontmatter not properly closed with ---"],
        "frontmatter-unclosed",
    ),
    ("parser.py", &["Invalid YAML in frontmatter: {e}"], "yaml"),
    (
        "parser.py",
        &["SKILL.md frontmatter must be a YAML mapping"],
        "frontmatter-not-mapping",
    ),
    (
        "parser.py",
        &["SKILL.md not found in {skill_dir}"],
        "skill-md-missing",
    ),
    (
        "parser.py",
        &["Missing required field in frontmatter: name"],
        "name-missing",
    ),
    (
        "parser.py",
        &["Missing required field in frontmatter: description"],
        "description-missing",
    ),
    (
        "parser.py",
        &["Field 'name' must be a non-empty string"],
        "name-empty",
    ),
    (
        "parser.py",
        &["Field 'description' must be a non-empty string"],
        "description-empty",
    ),
];

#[cfg(test)]
mod tests {
    use super::{OUR_CODES, TEMPLATES, our_rule, our_verdict, reference_rule, reference_rules};
    use serde_json::json;

    /// A sample value for each interpolated expression of the templates.
    fn sample(expression: &str) -> &'static str {
        match expression {
            "skill_dir" => "/tmp/parity/case/My Skill",
            "skill_dir.name" => "My Skill",
            "name" => "Bad_Name 'x'",
            "MAX_SKILL_NAME_LENGTH" => "64",
            "len(name)" => "70",
            "MAX_DESCRIPTION_LENGTH" => "1024",
            "len(description)" => "1025",
            "MAX_COMPATIBILITY_LENGTH" => "500",
            "len(compatibility)" => "501",
            "', '.join(sorted(extra_fields))" => "author, version",
            "sorted(ALLOWED_FIELDS)" => {
                "['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name']"
            }
            "e" => {
                "mapping values are not allowed here\n  in \"<unicode string>\", line 2, column 5:\n    a: b: c\n        ^ (line: 2)"
            }
            other => panic!("no sample for template expression {{{other}}}"),
        }
    }

    /// Renders a template the way Python would, with sample values.
    fn instantiate(pieces: &[&str]) -> String {
        let template = pieces.concat();
        let mut out = String::new();
        let mut rest = template.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..].find('}').expect("closed placeholder") + open;
            out.push_str(sample(&rest[open + 1..close]));
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        out
    }

    #[test]
    fn every_skills_ref_template_maps_to_its_rule() {
        for (file, pieces, rule) in TEMPLATES {
            let message = instantiate(pieces);
            assert_eq!(reference_rule(&message), Some(*rule), "{file}: {message:?}");
            // As printed by `skills_ref.cli validate`.
            let stderr = format!("Validation failed for /tmp/x:\n  - {message}\n");
            assert_eq!(
                reference_rules(&stderr).into_iter().collect::<Vec<_>>(),
                vec![(*rule).to_owned()],
                "{file}: {stderr:?}"
            );
        }
    }

    #[test]
    fn every_mapped_rule_is_one_of_our_codes() {
        let ours: Vec<String> = OUR_CODES.iter().map(|code| our_rule(code)).collect();
        for (_, _, rule) in TEMPLATES {
            // Path errors cannot happen: the test always passes an existing directory.
            if matches!(*rule, "path-missing" | "path-not-directory") {
                continue;
            }
            assert!(
                ours.iter().any(|r| r == rule),
                "{rule} is not one of our codes"
            );
        }
        for rule in ["not-utf8", "skill-md-not-file", "yaml"] {
            assert!(ours.iter().any(|r| r == rule), "{rule}");
        }
    }

    #[test]
    fn several_messages_and_unknown_output() {
        let stderr = "Validation failed for d:\n  - Unexpected fields in frontmatter: a. Only [] are allowed.\n  - Skill name 'A--' must be lowercase\n  - Skill name cannot start or end with a hyphen\n  - Something new\n";
        let rules: Vec<String> = reference_rules(stderr).into_iter().collect();
        assert_eq!(
            rules,
            [
                "field-unknown",
                "name-hyphen-edge",
                "name-not-lowercase",
                "unmapped: Something new"
            ]
        );
        let only_header = reference_rules("Validation failed for d:\n");
        assert!(only_header.iter().all(|r| r.starts_with("unmapped: ")));
    }

    #[test]
    fn tracebacks_map_by_exception() {
        let traceback = |last: &str| {
            format!(
                "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    main()\n{last}\n"
            )
        };
        let cases = [
            (
                traceback(
                    "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 25: invalid start byte",
                ),
                "not-utf8",
            ),
            (
                traceback("IsADirectoryError: [Errno 21] Is a directory: '/x/SKILL.md'"),
                "skill-md-not-file",
            ),
            (
                traceback(
                    "strictyaml.ruamel.reader.ReaderError: unacceptable character #x0001: special characters are not allowed\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\nAttributeError: 'ReaderError' object has no attribute 'context_mark'",
                ),
                "yaml",
            ),
            (traceback("KeyError: 'x'"), "crash: KeyError: 'x'"),
        ];
        for (stderr, rule) in cases {
            assert_eq!(
                reference_rules(&stderr).into_iter().collect::<Vec<_>>(),
                vec![rule.to_owned()]
            );
        }
    }

    #[test]
    fn our_json_is_read_per_contract() {
        let json = json!({
            "valid": false, "errors": 3, "warnings": 1,
            "diagnostics": [
                {"severity": "error", "code": "skill-md-missing", "message": "m", "file": null, "line": null}
            ],
            "skills": [{
                "dir": "d", "name": null, "valid": false,
                "diagnostics": [
                    {"severity": "error", "code": "yaml-flow-style", "message": "m", "file": "SKILL.md", "line": 2},
                    {"severity": "warning", "code": "name-reserved", "message": "m", "file": "SKILL.md", "line": 2},
                    {"severity": "error", "code": "field-unknown", "message": "a", "file": "SKILL.md", "line": 3},
                    {"severity": "error", "code": "field-unknown", "message": "b", "file": "SKILL.md", "line": 4}
                ]
            }]
        });
        let verdict = our_verdict(&json).expect("contract-shaped JSON");
        assert!(!verdict.valid);
        assert_eq!(
            verdict.rules.into_iter().collect::<Vec<_>>(),
            ["field-unknown", "skill-md-missing", "yaml"]
        );
        assert!(our_verdict(&json!({"valid": true})).is_err());
    }
}
