//! Snapshots of the diagnostics for broken `SKILL.md` files, in both modes.

use std::fmt::Write as _;

use skills_core::{Mode, ValidationOptions};

use super::support::{assert_snapshot, diagnostic_lines, parse_in_dir};

/// `(case, directory, SKILL.md text)`.
const BROKEN: &[(&str, &str, &str)] = &[
    (
        "every name rule, empty description, unknown field, bad compatibility",
        "other-dir",
        "---\nname: Bad--Name-\ndescription: ''\nowner: me\ncompatibility:\n  os: linux\n---\nBody.\n",
    ),
    (
        "no name, no description",
        "empty-fields",
        "---\nlicense: MIT\n---\nBody.\n",
    ),
    (
        "unclosed frontmatter",
        "unclosed",
        "---\nname: unclosed\ndescription: Never closed.\n",
    ),
    (
        "no frontmatter at all",
        "plain",
        "# Just Markdown\n\nNo fences here.\n",
    ),
    (
        "invalid YAML",
        "broken-yaml",
        "---\nname: broken-yaml\ndescription: [unterminated\n---\n",
    ),
    (
        "flow style, anchors and tags",
        "yaml-features",
        "---\nname: yaml-features\ndescription: &d Uses anchors.\nmetadata: {a: b}\nlicense: !!str MIT\n---\n",
    ),
    (
        "duplicate key",
        "dupes",
        "---\nname: dupes\ndescription: first\ndescription: second\n---\n",
    ),
    (
        "over-long name and description",
        "long",
        concat!(
            "---\nname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
            "description: >-\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "  This description repeats itself to go past the limit. This description repeats itself to go past the limit.\n",
            "---\n",
        ),
    ),
    (
        "badly shaped optional fields and extensions",
        "shapes",
        "---\nname: shapes\ndescription: Odd shapes.\nmetadata:\n  author: me\n  tags:\n    - a\nallowed-tools:\n  - Read\ncontext: maybe\nuser-invocable: often\nmodel:\n  id: x\n---\n",
    ),
    (
        "display title in a folder over 64 characters",
        "add-ide-style-semantic-code-navigation-and-symbol-safe-refactors-to-agents",
        "---\nname: \"Add IDE-style semantic code navigation and symbol-safe refactors to agents\"\ndescription: Navigates code by symbol.\n---\nBody.\n",
    ),
    (
        "empty frontmatter, folder that is not a name, body without a paragraph",
        "Fetch_Tools",
        "---\n---\n```bash\ncurl -s example.org\n```\n",
    ),
    (
        "not a mapping",
        "list",
        "---\n- name: list\n- description: A list.\n---\n",
    ),
];

#[test]
fn broken_skill_diagnostics() {
    let mut report = String::new();
    for (case, dir, src) in BROKEN {
        for mode in [Mode::Strict, Mode::Lenient] {
            let outcome = parse_in_dir(src, dir, &ValidationOptions::default().with_mode(mode));
            let loads = if outcome.document.is_some() {
                "loads"
            } else {
                "skipped"
            };
            let _ = writeln!(report, "== {case} ({mode:?}, {loads}) ==");
            let lines = diagnostic_lines(&outcome);
            if lines.is_empty() {
                report.push_str("(no diagnostics)\n");
            } else {
                report.push_str(&lines);
                report.push('\n');
            }
        }
    }
    assert_snapshot("diagnostics_broken_skills.txt", &report);
}
