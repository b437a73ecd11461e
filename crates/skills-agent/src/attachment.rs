//! Files attached to a user message (F-EXE-5): a name, a MIME type and the
//! bytes, text or binary.
//!
//! A user message carries its attachments in [`Message::attachments`]
//! (build one with [`Message::user_with_attachments`]). Two things happen to
//! them:
//! - the model sees them: the wire encoders of `skills-models` send text
//!   inline, images and PDFs as the provider's own parts, and anything else
//!   as a one-line note (see [`Attachment::note`]);
//! - the run tools stage them: before the first command that runs after
//!   they arrive, every attachment not yet staged is copied into the
//!   session's workspace under `work/inputs/`, with a sanitized,
//!   de-duplicated name, and the result's `staged_inputs` says where. Each
//!   attachment is staged once per session (the tool result records how
//!   many were; see `Session::push_user_message`).
//!
//! In a stored session an attachment is JSON: `{"name", "mime_type",
//! "text"}` for UTF-8 text, `{"name", "mime_type", "base64"}` otherwise.
//!
//! [`Message::attachments`]: crate::Message::attachments
//! [`Message::user_with_attachments`]: crate::Message::user_with_attachments

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The longest attachment name kept; a longer one is cut (on a character
/// boundary) when the attachment is made.
pub const MAX_ATTACHMENT_NAME_LEN: usize = 255;

/// One file attached to a user message.
#[derive(Clone, PartialEq, Eq)]
pub struct Attachment {
    name: String,
    mime_type: String,
    bytes: Vec<u8>,
}

impl Attachment {
    /// A text attachment (`text/plain` unless [`Attachment::with_mime_type`]
    /// says otherwise).
    pub fn text(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(name, "text/plain", text.into().into_bytes())
    }

    /// An attachment of any bytes with their MIME type (e.g. `image/png`,
    /// `application/pdf`). An empty MIME type becomes
    /// `application/octet-stream`.
    pub fn new(
        name: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        let mut name = name.into();
        if name.len() > MAX_ATTACHMENT_NAME_LEN {
            let mut end = MAX_ATTACHMENT_NAME_LEN;
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            name.truncate(end);
        }
        let mime_type = mime_type.into().trim().to_ascii_lowercase();
        Self {
            name,
            mime_type: if mime_type.is_empty() {
                "application/octet-stream".to_owned()
            } else {
                mime_type
            },
            bytes: bytes.into(),
        }
    }

    /// Sets the MIME type.
    #[must_use]
    pub fn with_mime_type(self, mime_type: impl Into<String>) -> Self {
        Self::new(self.name, mime_type, self.bytes)
    }

    /// The name the user gave it (sanitized only when it is staged).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its MIME type, lower-case.
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// Its bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Its text, when it is a text attachment: a `text/*` MIME type (or
    /// JSON, XML, YAML, CSV, Markdown) and valid UTF-8.
    pub fn as_text(&self) -> Option<&str> {
        if !is_text_mime(&self.mime_type) {
            return None;
        }
        std::str::from_utf8(&self.bytes).ok()
    }

    /// Whether it is an image a model can take inline (PNG, JPEG, GIF,
    /// WebP).
    pub fn is_image(&self) -> bool {
        matches!(
            self.mime_type.as_str(),
            "image/png" | "image/jpeg" | "image/gif" | "image/webp"
        )
    }

    /// Whether it is a PDF.
    pub fn is_pdf(&self) -> bool {
        self.mime_type == "application/pdf"
    }

    /// Its bytes in standard base64 (for the wire encoders).
    pub fn base64(&self) -> String {
        STANDARD.encode(&self.bytes)
    }

    /// The one line a model sees for an attachment it cannot see inline:
    /// `[attached file "data.bin" (application/octet-stream, 1024 bytes); skill
    /// commands find it in work/inputs/]`.
    pub fn note(&self) -> String {
        format!(
            "[attached file {:?} ({}, {} bytes); skill commands find it in work/inputs/]",
            self.name,
            self.mime_type,
            self.bytes.len()
        )
    }

    /// The header a model sees above an inline text attachment:
    /// `[attached file "notes.md" (text/markdown, 120 bytes)]`.
    pub fn header(&self) -> String {
        format!(
            "[attached file {:?} ({}, {} bytes)]",
            self.name,
            self.mime_type,
            self.bytes.len()
        )
    }
}

impl fmt::Debug for Attachment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The bytes can be megabytes: show their size only.
        f.debug_struct("Attachment")
            .field("name", &self.name)
            .field("mime_type", &self.mime_type)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

fn is_text_mime(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or(mime).trim();
    essence.starts_with("text/")
        || matches!(
            essence,
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/csv"
                | "application/markdown"
        )
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
}

/// The stored form.
#[derive(Serialize, Deserialize)]
struct Stored {
    name: String,
    mime_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base64: Option<String>,
}

impl Serialize for Attachment {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (text, base64) = match std::str::from_utf8(&self.bytes) {
            Ok(text) => (Some(text.to_owned()), None),
            Err(_) => (None, Some(self.base64())),
        };
        Stored {
            name: self.name.clone(),
            mime_type: self.mime_type.clone(),
            text,
            base64,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Attachment {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let stored = Stored::deserialize(deserializer)?;
        let bytes = match (stored.text, stored.base64) {
            (Some(text), None) => text.into_bytes(),
            (None, Some(encoded)) => STANDARD
                .decode(encoded.as_bytes())
                .map_err(|err| serde::de::Error::custom(format!("attachment base64: {err}")))?,
            (None, None) => Vec::new(),
            (Some(_), Some(_)) => {
                return Err(serde::de::Error::custom(
                    "an attachment has either `text` or `base64`, not both",
                ));
            }
        };
        Ok(Self::new(stored.name, stored.mime_type, bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_text_and_binary() {
        for attachment in [
            Attachment::text("notes.md", "# hi\n").with_mime_type("text/markdown"),
            Attachment::new("pic.png", "image/png", vec![0x89, b'P', 0xff, 0]),
            Attachment::new("empty", "", Vec::new()),
        ] {
            let json = serde_json::to_string(&attachment).expect("serialize");
            let back: Attachment = serde_json::from_str(&json).expect("deserialize");
            assert_eq!(back, attachment, "{json}");
        }
        let json = serde_json::to_string(&Attachment::new("b", "x/y", vec![0xff])).expect("json");
        assert_eq!(json, r#"{"name":"b","mime_type":"x/y","base64":"/w=="}"#);
    }

    #[test]
    fn refuses_bad_stored_forms() {
        for bad in [
            r#"{"name":"a","mime_type":"x","text":"t","base64":"dA=="}"#,
            r#"{"name":"a","mime_type":"x","base64":"***"}"#,
        ] {
            assert!(serde_json::from_str::<Attachment>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn text_needs_a_text_type_and_utf8() {
        assert_eq!(Attachment::text("a.txt", "hi").as_text(), Some("hi"));
        let csv = Attachment::new("a.csv", "Text/CSV; charset=utf-8", "x,y");
        assert_eq!(csv.as_text(), Some("x,y"));
        assert_eq!(
            Attachment::new("a", "text/plain", vec![0xff]).as_text(),
            None
        );
        assert_eq!(Attachment::new("a", "image/png", "hi").as_text(), None);
        assert!(Attachment::new("a", "image/png", "").is_image());
        assert!(Attachment::new("a", "application/pdf", "").is_pdf());
    }

    #[test]
    fn long_names_are_cut_on_a_char_boundary() {
        let name = "é".repeat(200);
        let a = Attachment::text(name, "x");
        assert!(a.name().len() <= MAX_ATTACHMENT_NAME_LEN);
        assert!(a.name().chars().all(|c| c == 'é'));
    }
}
