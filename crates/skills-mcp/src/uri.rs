//! `skill://` URIs: one skill per first segment, its files below it.
//!
//! A skill named `pdf` lives at `skill://pdf/SKILL.md`; its file
//! `references/guide.md` at `skill://pdf/references/guide.md`; its folders
//! (for `resources/directory/read`) at `skill://pdf` and
//! `skill://pdf/references`. Bytes outside `[A-Za-z0-9-._~/]` are
//! percent-encoded with upper-case hex, the spelling rmcp's folder catalog
//! uses, so both servers give the same URI for the same file.

/// The scheme prefix of every URI this server serves.
pub const SCHEME: &str = "skill://";

/// The file name of a skill's entry point.
pub const SKILL_MD: &str = "SKILL.md";

/// The URI of `path` (a `/`-separated path relative to the skill folder,
/// `""` for the folder itself) in the skill `name`.
pub fn skill_uri(name: &str, path: &str) -> String {
    let mut uri = String::with_capacity(SCHEME.len() + name.len() + path.len() + 1);
    uri.push_str(SCHEME);
    encode_into(&mut uri, name);
    if !path.is_empty() {
        uri.push('/');
        encode_into(&mut uri, path);
    }
    uri
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

/// A `skill://` URI taken apart: the skill's name and the path inside it
/// (`""` for the skill folder), both percent-decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillUri {
    /// The skill's name (the first segment).
    pub name: String,
    /// The path below the skill folder, `/`-separated; `""` for the folder.
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
        if decoded.contains(['\0', '\\']) {
            return None;
        }
        let (name, path) = decoded.split_once('/').unwrap_or((&decoded, ""));
        if name.is_empty()
            || path.split('/').any(|segment| {
                (segment.is_empty() && !path.is_empty()) || segment == "." || segment == ".."
            })
            || name == "."
            || name == ".."
        {
            return None;
        }
        Some(Self {
            name: name.to_owned(),
            path: path.to_owned(),
        })
    }
}

/// Percent-decodes `text`; `None` on a bad escape or a result that is not
/// UTF-8. An encoded `/` stays a separator-free byte of a segment only in
/// theory: it decodes to `/`, and the path rules then apply to the result.
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
    use super::*;

    #[test]
    fn a_skill_md_uri_round_trips() {
        let uri = skill_uri("pdf", SKILL_MD);
        assert_eq!(uri, "skill://pdf/SKILL.md");
        let parsed = SkillUri::parse(&uri).expect("parses");
        assert_eq!(parsed.name, "pdf");
        assert_eq!(parsed.path, "SKILL.md");
    }

    #[test]
    fn unusual_bytes_are_encoded_and_decoded() {
        let uri = skill_uri("pdf", "assets/my file ü.txt");
        assert_eq!(uri, "skill://pdf/assets/my%20file%20%C3%BC.txt");
        let parsed = SkillUri::parse(&uri).expect("parses");
        assert_eq!(parsed.path, "assets/my file ü.txt");
    }

    #[test]
    fn folders_parse_with_an_empty_path() {
        let parsed = SkillUri::parse("skill://pdf").expect("parses");
        assert_eq!(parsed.path, "");
        assert_eq!(SkillUri::parse("skill://pdf/").expect("parses").path, "");
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
        ] {
            assert_eq!(SkillUri::parse(uri), None, "{uri}");
        }
    }
}
