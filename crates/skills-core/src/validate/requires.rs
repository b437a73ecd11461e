//! Reading what a skill needs ([`Requirements`], F-REQ) from the spellings
//! other hosts use, merged into one value (each name once, first seen first):
//!
//! 1. `metadata.openclaw`, `metadata.clawdbot`, `metadata.clawdis` (OpenClaw
//!    and its former names): `requires.{bins, anyBins, env}`, plus `os` and
//!    `primaryEnv` beside `requires`; `always: true` turns gating off;
//! 2. `metadata.requires` (OpenClaw's shape without the namespace, our
//!    canonical spelling): `bins`, `anyBins`, `env`, `tools`, `os`;
//! 3. top-level `requires` (same keys), `required_environment_variables`
//!    (Hermes: names, or maps with a `name`), `platforms` (only when every
//!    entry is an operating system; other uses of the word are left alone);
//! 4. `metadata.adk_additional_tools` (Google ADK): tool names.
//!
//! `metadata` (or one of the namespaces) may be one string holding a JSON or
//! YAML flow map, as OpenClaw writes it. Keys this does not know (`config`,
//! `install`, `emoji`, ...) are ignored; a value of the wrong shape gives a
//! `requirements-invalid` warning naming the field and its line, and is
//! ignored. Lenient mode only: strict mode judges the specification's fields
//! and reads none of this.

use crate::diagnostic::{Code, Diagnostic};
use crate::frontmatter::{self, YamlEntry, YamlNode, YamlRules, YamlValue};
use crate::requirements::{Requirements, normalize_os};

/// The `metadata` keys read here (or, for `hermes`, known to be another host's
/// and left alone): their values are not strings, and lenient mode does not
/// warn that `metadata` drops them.
pub(super) const METADATA_KEYS: &[&str] = &[
    "adk_additional_tools",
    "clawdbot",
    "clawdis",
    "hermes",
    "openclaw",
    "requires",
];

/// OpenClaw's namespace in `metadata`, then its former names.
const NAMESPACES: [&str; 3] = ["openclaw", "clawdbot", "clawdis"];

/// Operating-system names `platforms` may list for it to be read as `os`.
const OS_NAMES: &[&str] = &[
    "android",
    "dragonfly",
    "freebsd",
    "illumos",
    "ios",
    "linux",
    "macos",
    "netbsd",
    "openbsd",
    "solaris",
    "windows",
];

/// The map a string value holds when it is written as one JSON or YAML flow
/// map (`'{"openclaw": {"requires": ...}}'`); `None` for any other string or
/// a string that does not parse as a map.
pub(super) fn inline_map<'n>(node: &'n YamlNode<'_>) -> Option<YamlNode<'n>> {
    let text = node.value.as_str()?;
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let parsed = frontmatter::parse_yaml(text, node.line, YamlRules { strict: false });
    if parsed.diagnostics.iter().any(Diagnostic::is_error) {
        return None;
    }
    parsed
        .root
        .filter(|root| matches!(root.value, YamlValue::Mapping(_)))
}

/// Reads and merges every spelling (see the module docs). `entries` are the
/// frontmatter's fields; `metadata` the `metadata` value, already turned into
/// a map when it was written as one string.
pub(super) fn read(
    entries: &[YamlEntry<'_>],
    metadata: Option<&YamlNode<'_>>,
    out: &mut Vec<Diagnostic>,
) -> Requirements {
    let mut reader = Reader {
        req: Requirements::default(),
        always: false,
        out,
    };
    let meta: &[YamlEntry<'_>] = match metadata.map(|node| &node.value) {
        Some(YamlValue::Mapping(meta)) => meta,
        _ => &[],
    };
    for namespace in NAMESPACES {
        if let Some(node) = get(meta, namespace) {
            reader.namespace(&format!("metadata.{namespace}"), node);
        }
    }
    if let Some(node) = get(meta, "requires") {
        reader.requires("metadata.requires", node);
    }
    if let Some(node) = get(entries, "requires") {
        reader.requires("requires", node);
    }
    if let Some(node) = get(entries, "required_environment_variables") {
        reader.env_vars("required_environment_variables", node);
    }
    if let Some(node) = get(entries, "platforms") {
        reader.platforms(node);
    }
    if let Some(node) = get(meta, "adk_additional_tools") {
        let tools = reader.names("metadata.adk_additional_tools", node);
        merge(&mut reader.req.tools, tools);
    }
    if let Some(node) = get(entries, "always") {
        reader.always("always", node);
    }
    if reader.always {
        Requirements::default()
    } else {
        reader.req
    }
}

fn get<'a, 'y>(entries: &'a [YamlEntry<'y>], key: &str) -> Option<&'a YamlNode<'y>> {
    entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Appends the names `into` does not hold yet.
fn merge(into: &mut Vec<String>, names: Vec<String>) {
    for name in names {
        if !into.contains(&name) {
            into.push(name);
        }
    }
}

struct Reader<'o> {
    req: Requirements,
    /// `always: true` was seen: no gating.
    always: bool,
    out: &'o mut Vec<Diagnostic>,
}

impl Reader<'_> {
    fn invalid(&mut self, path: &str, node: &YamlNode<'_>, expected: &str) {
        self.out.push(
            Diagnostic::warning(
                Code::RequirementsInvalid,
                format!(
                    "`{path}` must be {expected}, found {}; it is ignored",
                    node.value.kind_name()
                ),
            )
            .at_line(node.line),
        );
    }

    /// The map at `path`, parsing a string that holds one; warns otherwise.
    fn map<'n>(
        &mut self,
        path: &str,
        node: &'n YamlNode<'_>,
        parsed: &'n mut Option<YamlNode<'n>>,
    ) -> Option<&'n [YamlEntry<'n>]> {
        if node.value.as_str().is_some() {
            *parsed = inline_map(node);
        }
        match parsed.as_ref().map_or(&node.value, |parsed| &parsed.value) {
            YamlValue::Mapping(entries) => Some(entries),
            YamlValue::Scalar { text, .. } if text.trim().is_empty() => None,
            _ => {
                self.invalid(path, node, "a mapping");
                None
            }
        }
    }

    /// `metadata.openclaw` and its former names.
    fn namespace(&mut self, path: &str, node: &YamlNode<'_>) {
        let mut parsed = None;
        let Some(entries) = self.map(path, node, &mut parsed) else {
            return;
        };
        for (key, value) in entries {
            let path = format!("{path}.{key}");
            match &**key {
                "requires" => self.requires(&path, value),
                "os" => {
                    let os = self.names(&path, value);
                    merge(&mut self.req.os, os);
                }
                "primaryEnv" | "primary_env" | "primary-env" => {
                    let env = self.names(&path, value);
                    merge(&mut self.req.env, env);
                }
                "always" => self.always(&path, value),
                _ => {}
            }
        }
    }

    /// A `requires` map: `bins`, `anyBins`, `env`, `tools`, `os`.
    fn requires(&mut self, path: &str, node: &YamlNode<'_>) {
        let mut parsed = None;
        let Some(entries) = self.map(path, node, &mut parsed) else {
            return;
        };
        for (key, value) in entries {
            if requires_field(&mut self.req, key).is_none() {
                continue;
            }
            let names = self.names(&format!("{path}.{key}"), value);
            if let Some(field) = requires_field(&mut self.req, key) {
                merge(field, names);
            }
        }
    }

    /// A list of names; a string is a list of names separated by commas or
    /// spaces. Items that are not strings are reported and skipped.
    fn names(&mut self, path: &str, node: &YamlNode<'_>) -> Vec<String> {
        let mut out = Vec::new();
        match &node.value {
            YamlValue::Scalar { text, .. } => split_names(text, &mut out),
            YamlValue::Sequence(items) => {
                for item in items {
                    match item.value.as_str() {
                        Some(text) => split_names(text, &mut out),
                        None => self.invalid(&format!("{path}[]"), item, "a name"),
                    }
                }
            }
            YamlValue::Mapping(_) => self.invalid(path, node, "a list of names"),
        }
        out
    }

    /// Hermes' `required_environment_variables`: names, or maps with a `name`.
    fn env_vars(&mut self, path: &str, node: &YamlNode<'_>) {
        let YamlValue::Sequence(items) = &node.value else {
            let names = self.names(path, node);
            merge(&mut self.req.env, names);
            return;
        };
        for item in items {
            let name = match &item.value {
                YamlValue::Scalar { text, .. } => Some(&**text),
                YamlValue::Mapping(entries) => get(entries, "name").and_then(|n| n.value.as_str()),
                YamlValue::Sequence(_) => None,
            };
            match name {
                Some(text) => {
                    let mut names = Vec::new();
                    split_names(text, &mut names);
                    merge(&mut self.req.env, names);
                }
                None => self.invalid(
                    &format!("{path}[]"),
                    item,
                    "a name or a mapping with a `name`",
                ),
            }
        }
    }

    /// Top-level `platforms`: read as `os` only when every entry names an
    /// operating system (`platforms: [websites, apps]` means something else).
    fn platforms(&mut self, node: &YamlNode<'_>) {
        let mut names = Vec::new();
        match &node.value {
            YamlValue::Scalar { text, .. } => split_names(text, &mut names),
            YamlValue::Sequence(items) => {
                for item in items {
                    match item.value.as_str() {
                        Some(text) => split_names(text, &mut names),
                        None => return,
                    }
                }
            }
            YamlValue::Mapping(_) => return,
        }
        if names
            .iter()
            .all(|name| OS_NAMES.contains(&normalize_os(name).as_str()))
        {
            merge(&mut self.req.os, names);
        }
    }

    /// `always: true` (OpenClaw): the skill is never gated.
    fn always(&mut self, path: &str, node: &YamlNode<'_>) {
        match node.value.as_str().map(str::trim) {
            Some("true" | "True" | "TRUE") => self.always = true,
            Some("false" | "False" | "FALSE" | "") => {}
            _ => self.invalid(path, node, "`true` or `false`"),
        }
    }
}

/// The list a `requires` key fills; `None` for keys not read (`config`,
/// `pip`, ...).
fn requires_field<'r>(req: &'r mut Requirements, key: &str) -> Option<&'r mut Vec<String>> {
    Some(match key {
        "bins" => &mut req.bins,
        "anyBins" | "any_bins" | "any-bins" => &mut req.any_bins,
        "env" => &mut req.env,
        "tools" => &mut req.tools,
        "os" => &mut req.os,
        _ => return None,
    })
}

/// Splits `text` on commas and whitespace into `out`, skipping empty pieces.
fn split_names(text: &str, out: &mut Vec<String>) {
    for name in text.split(|c: char| c == ',' || c.is_whitespace()) {
        if !name.is_empty() && !out.iter().any(|seen| seen == name) {
            out.push(name.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::validate::{Origin, ParseOutcome, ValidationOptions, parse_skill_md};
    use crate::{Diagnostic, Requirements};

    fn parse(fields: &str) -> ParseOutcome {
        let src = format!("---\nname: tool\ndescription: Does things.\n{fields}---\nBody.\n");
        parse_skill_md(
            &src,
            Origin::new(Some("tool/SKILL.md"), Some("tool")),
            &ValidationOptions::lenient(),
        )
    }

    /// The requirements read, and the diagnostics as text.
    fn read(fields: &str) -> (Requirements, Vec<String>) {
        let out = parse(fields);
        let diags = out.diagnostics.iter().map(Diagnostic::to_string).collect();
        let Some(doc) = out.document else {
            panic!("the skill did not load: {diags:?}");
        };
        (doc.metadata.extensions.requires, diags)
    }

    fn req(
        bins: &[&str],
        any_bins: &[&str],
        env: &[&str],
        tools: &[&str],
        os: &[&str],
    ) -> Requirements {
        let own = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
        Requirements {
            bins: own(bins),
            any_bins: own(any_bins),
            env: own(env),
            tools: own(tools),
            os: own(os),
        }
    }

    #[test]
    fn openclaw_json_string_is_read() {
        let (got, diags) = read(
            "metadata: '{\"openclaw\": {\"requires\": {\"bins\": [\"gh\"], \"anyBins\": [\"rg\", \"grep\"], \"env\": [\"GH_TOKEN\"], \"config\": [\"x.y\"]}, \"primaryEnv\": \"GITHUB_TOKEN\", \"os\": [\"darwin\", \"linux\"], \"emoji\": \"🐙\"}, \"author\": \"me\"}'\n",
        );
        assert_eq!(
            got,
            req(
                &["gh"],
                &["rg", "grep"],
                &["GH_TOKEN", "GITHUB_TOKEN"],
                &[],
                &["darwin", "linux"]
            )
        );
        assert!(diags.is_empty(), "{diags:?}");
        // The string values of the inline map stay metadata.
        let doc = parse("metadata: '{\"openclaw\": {}, \"author\": \"me\"}'\n")
            .document
            .unwrap_or_else(|| panic!("loads"));
        assert_eq!(
            doc.metadata.metadata.get("author").map(String::as_str),
            Some("me")
        );
    }

    #[test]
    fn openclaw_flow_map_and_former_names_merge_in_order() {
        let (got, diags) = read(concat!(
            "metadata: {\"openclaw\": {\"requires\": {\"bins\": [\"jq\"]}}, \"clawdbot\": {\"requires\": {\"bins\": [\"jq\", \"curl\"]}},",
            " \"clawdis\": {\"requires\": {\"env\": [\"API_KEY\"]}}}\n"
        ));
        assert_eq!(got, req(&["jq", "curl"], &[], &["API_KEY"], &[], &[]));
        assert!(diags.is_empty(), "{diags:?}");
    }

    #[test]
    fn a_namespace_written_as_a_string_is_read() {
        let (got, diags) =
            read("metadata:\n  clawdbot: '{\"requires\": {\"bins\": [\"ffmpeg\"]}}'\n");
        assert_eq!(got, req(&["ffmpeg"], &[], &[], &[], &[]));
        assert!(diags.is_empty(), "{diags:?}");
    }

    #[test]
    fn metadata_requires_block_is_read_without_warnings() {
        let (got, diags) = read(concat!(
            "metadata:\n  version: \"1.2\"\n  requires:\n    bins: [\"lark-cli\"]\n    anyBins:\n      - python3\n      - python\n",
            "    env:\n      - LARK_APP_ID\n    tools: [github]\n    os: [linux]\n    skills: [other]\n"
        ));
        assert_eq!(
            got,
            req(
                &["lark-cli"],
                &["python3", "python"],
                &["LARK_APP_ID"],
                &["github"],
                &["linux"]
            )
        );
        assert!(diags.is_empty(), "{diags:?}");
    }

    #[test]
    fn top_level_spellings_are_read() {
        let (got, diags) = read(concat!(
            "requires:\n  bins: [docker]\n  env: DOCKER_HOST, REGISTRY\n  pip: [requests]\n",
            "required_environment_variables:\n  - OPENAI_API_KEY\n  - name: SLACK_TOKEN\n    prompt: Your Slack token\n",
            "platforms: [linux, macos]\n",
        ));
        assert_eq!(
            got,
            req(
                &["docker"],
                &[],
                &["DOCKER_HOST", "REGISTRY", "OPENAI_API_KEY", "SLACK_TOKEN"],
                &[],
                &["linux", "macos"]
            )
        );
        assert!(diags.is_empty(), "{diags:?}");
    }

    #[test]
    fn platforms_that_are_not_operating_systems_are_left_alone() {
        let (got, diags) = read("platforms: [websites, apps, linux]\n");
        assert!(got.is_empty(), "{got:?}");
        assert!(diags.is_empty(), "{diags:?}");
        let (got, _) = read("platforms: win32\n");
        assert_eq!(got.os, ["win32"]);
    }

    #[test]
    fn adk_additional_tools_are_tools() {
        let (got, diags) =
            read("metadata:\n  adk_additional_tools:\n    - search_web\n    - fetch_page\n");
        assert_eq!(got, req(&[], &[], &[], &["search_web", "fetch_page"], &[]));
        assert!(diags.is_empty(), "{diags:?}");
    }

    #[test]
    fn spellings_merge_first_seen_first() {
        let (got, _) = read(concat!(
            "metadata:\n  openclaw:\n    requires:\n      bins: [b]\n  requires:\n    bins: [a, b]\n",
            "  adk_additional_tools: [t]\nrequires:\n  bins: [c, a]\n  tools: [t, u]\n"
        ));
        assert_eq!(got.bins, ["b", "a", "c"]);
        assert_eq!(got.tools, ["t", "u"]);
    }

    #[test]
    fn always_true_turns_gating_off() {
        let (got, diags) = read(
            "metadata: {\"openclaw\": {\"always\": true, \"requires\": {\"bins\": [\"jq\"]}}}\nrequires:\n  env: [X]\n",
        );
        assert!(got.is_empty(), "{got:?}");
        assert!(diags.is_empty(), "{diags:?}");
        let (got, _) = read("always: true\nrequires:\n  bins: [jq]\n");
        assert!(got.is_empty(), "{got:?}");
        let (got, _) = read("always: false\nrequires:\n  bins: [jq]\n");
        assert_eq!(got.bins, ["jq"]);
    }

    #[test]
    fn hermes_metadata_is_dropped_quietly() {
        let out = parse("metadata:\n  hermes:\n    tags: [git]\n  tags: [x]\n");
        let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code.as_str()).collect();
        // `tags` still warns; `hermes` is another host's and known.
        assert_eq!(codes, ["metadata-value-not-string"]);
        let doc = out.document.unwrap_or_else(|| panic!("loads"));
        assert!(doc.metadata.metadata.is_empty());
        assert!(doc.metadata.extensions.requires.is_empty());
    }

    #[test]
    fn wrong_shapes_warn_with_field_and_line_and_are_ignored() {
        let (got, diags) = read(concat!(
            "metadata:\n  requires:\n    bins:\n      jq: yes\n    env: [GOOD, [nested]]\n",
            "  openclaw: [a]\n  clawdis: '{broken'\n",
            "required_environment_variables:\n  - prompt: no name\n",
            "always: maybe\n",
        ));
        assert_eq!(got, req(&[], &[], &["GOOD"], &[], &[]));
        assert_eq!(
            diags,
            [
                "tool/SKILL.md:6: warning[requirements-invalid]: `metadata.requires.bins` must be a list of names, found a mapping; it is ignored",
                "tool/SKILL.md:8: warning[requirements-invalid]: `metadata.requires.env[]` must be a name, found a list; it is ignored",
                "tool/SKILL.md:9: warning[requirements-invalid]: `metadata.openclaw` must be a mapping, found a list; it is ignored",
                "tool/SKILL.md:10: warning[requirements-invalid]: `metadata.clawdis` must be a mapping, found a string; it is ignored",
                "tool/SKILL.md:12: warning[requirements-invalid]: `required_environment_variables[]` must be a name or a mapping with a `name`, found a mapping; it is ignored",
                "tool/SKILL.md:13: warning[requirements-invalid]: `always` must be `true` or `false`, found a string; it is ignored",
            ]
        );
    }

    #[test]
    fn strict_mode_reads_nothing_and_judges_as_before() {
        let src = "---\nname: tool\ndescription: Does things.\nmetadata:\n  requires:\n    bins:\n      - jq\n---\n";
        let out = parse_skill_md(
            src,
            Origin::new(None, Some("tool")),
            &ValidationOptions::strict(),
        );
        let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, ["metadata-value-not-string"]);
        let doc = out
            .document
            .unwrap_or_else(|| panic!("valid in strict mode"));
        assert!(doc.metadata.extensions.requires.is_empty());
        let top = "---\nname: tool\ndescription: Does things.\nrequires:\n  bins:\n    - jq\n---\n";
        let out = parse_skill_md(
            top,
            Origin::new(None, Some("tool")),
            &ValidationOptions::strict(),
        );
        let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, ["field-unknown"]);
    }

    #[test]
    fn a_plain_string_metadata_still_warns() {
        let out = parse("metadata: just text\n");
        let codes: Vec<&str> = out.diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, ["metadata-not-mapping"]);
    }
}
