//! `skill://` URIs: a skill's path below its root, then its files.
//!
//! A skill lives at its path below the provider's root, as in rmcp's folder
//! catalog: `ROOT/acme/billing/SKILL.md` is `skill://acme/billing/SKILL.md`,
//! its file `references/guide.md` is
//! `skill://acme/billing/references/guide.md`, and its folders (for
//! `resources/directory/read`) are `skill://acme/billing` and
//! `skill://acme/billing/references`. A skill without a path (an in-code
//! skill) lives at its name: `skill://pdf/SKILL.md`. The last segment of a
//! skill's path is always its name, as SEP-2640 requires (see
//! [`skill_path`]).
//!
//! Bytes outside `[A-Za-z0-9-._~/]` are percent-encoded with upper-case hex,
//! the spelling rmcp's folder catalog uses, so both servers give the same URI
//! for the same file.
//!
//! A URI alone does not say where the skill's path ends and the file's path
//! begins (`skill://acme/billing/refunds/SKILL.md` is the `SKILL.md` of
//! `refunds` nested in `billing`, and also the file `refunds/SKILL.md` of
//! `billing`): the server resolves it against the skills it serves, the
//! longest skill path first.

use skills_core::SkillMetadata;

/// The scheme prefix of every URI this server serves.
pub const SCHEME: &str = "skill://";

/// The file name of a skill's entry point.
pub const SKILL_MD: &str = "SKILL.md";

/// The URI of `path` (a `/`-separated path relative to the skill folder,
/// `""` for the folder itself) in the skill at `skill_path` (its path below
/// the root, see [`skill_path`]; a plain name for skills without one).
pub fn skill_uri(skill_path: &str, path: &str) -> String {
    let mut uri = String::with_capacity(SCHEME.len() + skill_path.len() + path.len() + 1);
    uri.push_str(SCHEME);
    encode_into(&mut uri, skill_path);
    if !path.is_empty() {
        uri.push('/');
        encode_into(&mut uri, path);
    }
    uri
}

/// The path of a skill in its URIs: the provider's
/// [`path`](SkillMetadata::path) with its last segment replaced by the
/// skill's name (they differ only for a skill whose folder is not named
/// after it), or the bare name when the provider gave no path or a path this
/// server could not serve back (an empty, `.` or `..` segment, a backslash,
/// a NUL).
pub fn skill_path(metadata: &SkillMetadata) -> String {
    let name = metadata.name.as_str();
    let parent = metadata
        .path
        .as_deref()
        .and_then(|path| path.rsplit_once('/'))
        .map(|(parent, _)| parent)
        .filter(|parent| parent.split('/').all(is_servable_segment));
    match parent {
        Some(parent) => format!("{parent}/{name}"),
        None => name.to_owned(),
    }
}

fn is_servable_segment(segment: &str) -> bool {
    !matches!(segment, "" | "." | "..") && !segment.contains(['\0', '\\'])
}

fn encode_into(out: &mut String, text: &str) {
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// A `skill://` URI, checked and percent-decoded: its path after the scheme
/// (without a trailing `/`), which [`SkillUri::splits`] cuts into a skill's
/// path and a file's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillUri {
    /// Everything after `skill://`, decoded: `acme/billing/references/a.md`.
    pub path: String,
}

impl SkillUri {
    /// Parses `uri`; `None` when it is not a `skill://` URI this server could
    /// serve (another scheme, a query or fragment, empty or dot segments,
    /// bad percent-encoding, non-UTF-8 bytes, a NUL or a backslash).
    pub fn parse(uri: &str) -> Option<Self> {
        let rest = uri.strip_prefix(SCHEME)?;
        if rest.contains(['?', '#']) {
            return None;
        }
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let decoded = decode(rest)?;
        if decoded.split('/').all(is_servable_segment) {
            Some(Self { path: decoded })
        } else {
            None
        }
    }

    /// Every way to read the URI as a skill's path and a file's path inside
    /// it (`""` for the skill folder), the longest skill path first:
    /// `a/b/c` gives `("a/b/c", "")`, `("a/b", "c")`, `("a", "b/c")`.
    pub fn splits(&self) -> impl Iterator<Item = (&str, &str)> {
        let path = self.path.as_str();
        std::iter::once((path, "")).chain(
            path.rmatch_indices('/')
                .map(move |(at, _)| (&path[..at], &path[at + 1..])),
        )
    }
}

/// Percent-decodes `text`; `None` on a bad escape or a result that is not
/// UTF-8. An encoded `/` decodes to `/`, and the path rules then apply to
/// the result.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let high = char::from(hex[0]).to_digit(16)?;
            let low = char::from(hex[1]).to_digit(16)?;
            out.push(u8::try_from(high * 16 + low).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use skills_core::SkillName;

    use super::*;

    fn meta(name: &str, path: Option<&str>) -> SkillMetadata {
        let mut meta = SkillMetadata::new(SkillName::parse(name).expect("name"), "x");
        meta.path = path.map(str::to_owned);
        meta
    }

    #[test]
    fn a_skill_md_uri_round_trips() {
        let uri = skill_uri("acme/billing", SKILL_MD);
        assert_eq!(uri, "skill://acme/billing/SKILL.md");
        let parsed = SkillUri::parse(&uri).expect("parses");
        assert_eq!(parsed.path, "acme/billing/SKILL.md");
        assert_eq!(
            parsed.splits().collect::<Vec<_>>(),
            [
                ("acme/billing/SKILL.md", ""),
                ("acme/billing", "SKILL.md"),
                ("acme", "billing/SKILL.md"),
            ]
        );
    }

    #[test]
    fn unusual_bytes_are_encoded_and_decoded() {
        let uri = skill_uri("pdf", "assets/my file ü.txt");
        assert_eq!(uri, "skill://pdf/assets/my%20file%20%C3%BC.txt");
        let parsed = SkillUri::parse(&uri).expect("parses");
        assert_eq!(parsed.path, "pdf/assets/my file ü.txt");
    }

    #[test]
    fn folders_parse_without_the_trailing_slash() {
        assert_eq!(SkillUri::parse("skill://pdf").expect("parses").path, "pdf");
        assert_eq!(SkillUri::parse("skill://pdf/").expect("parses").path, "pdf");
    }

    #[test]
    fn the_skill_path_ends_in_the_name() {
        assert_eq!(skill_path(&meta("pdf", None)), "pdf");
        assert_eq!(skill_path(&meta("pdf", Some("pdf"))), "pdf");
        assert_eq!(
            skill_path(&meta("billing", Some("acme/billing"))),
            "acme/billing"
        );
        // A folder not named after its skill: the URI still ends in the name.
        assert_eq!(
            skill_path(&meta("pdf-tools", Some("docs/pdf"))),
            "docs/pdf-tools"
        );
        // A path this server could not serve back: the name alone.
        for path in ["a//pdf", "../pdf", "a/./pdf", "a\\b/pdf", "/pdf"] {
            assert_eq!(skill_path(&meta("pdf", Some(path))), "pdf", "{path}");
        }
    }

    #[test]
    fn hostile_uris_are_refused() {
        for uri in [
            "file:///etc/passwd",
            "skill://",
            "skill://pdf/../other/SKILL.md",
            "skill://pdf/%2e%2e/x",
            "skill://pdf/a//b",
            "skill://pdf/x?y",
            "skill://pdf/x#y",
            "skill://pdf/%zz",
            "skill://pdf/%ff",
            "skill://pdf/a%00b",
            "skill://pdf/a%5Cb",
            "skill://../x",
            "skill:///pdf",
        ] {
            assert_eq!(SkillUri::parse(uri), None, "{uri}");
        }
    }
}
