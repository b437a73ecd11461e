//! The caps on what a model server may make us buffer: one answer's bytes,
//! and one server-sent event's (so one line's) bytes.
//!
//! A model server is hostile input like any other: one that streams forever
//! or sends one endless line would otherwise grow the process without bound
//! (the SSE parser keeps a line, and an event's data lines, until the blank
//! line that ends the event). [`BodyLimit`] sits between the HTTP body and
//! the parser and counts every byte before the parser sees it: past
//! [`HttpOptions::max_answer_bytes`](super::HttpOptions::max_answer_bytes)
//! in all, or past
//! [`HttpOptions::max_event_bytes`](super::HttpOptions::max_event_bytes)
//! since the last blank line, the chunk is refused and the answer ends with
//! [`ModelErrorKind::AnswerTooLarge`] or [`ModelErrorKind::EventTooLarge`].
//! So the parser never holds more than the event cap, and the decoders
//! (text, tool arguments) never more than the answer cap. The event scan is
//! written here because the SSE crate has no limit of its own; it follows
//! the line ends of the SSE format (LF, CRLF, CR).

use std::fmt;

use bytes::Bytes;

use skills_agent::{ModelError, ModelErrorKind};

/// The most bytes of an error body read (the message is in its start).
pub(crate) const ERROR_BODY_BYTES: usize = 64 * 1024;

/// `n` bytes for messages: `64 MiB`, `1.5 KiB`, `12 bytes`.
pub(crate) fn size(n: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    // Sizes stay far below 2^52: the conversion is exact.
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

/// The error for an answer over `max` bytes.
pub(crate) fn answer_too_large(max: usize) -> ModelError {
    ModelError::new(
        ModelErrorKind::AnswerTooLarge,
        format!(
            "the model server sent more than {} for one answer (the cap, \
             HttpOptions::max_answer_bytes); the rest was not read",
            size(max)
        ),
    )
}

/// The error for one server-sent event over `max` bytes.
pub(crate) fn event_too_large(max: usize) -> ModelError {
    ModelError::new(
        ModelErrorKind::EventTooLarge,
        format!(
            "the model server sent a server-sent event (or line) of more than {} (the cap, \
             HttpOptions::max_event_bytes); the rest was not read",
            size(max)
        ),
    )
}

/// Counts the bytes of one streamed answer against the two caps.
#[derive(Debug, Clone)]
pub(crate) struct BodyLimit {
    max_answer: usize,
    max_event: usize,
    total: usize,
    /// Bytes of the current event that are not line ends.
    event: usize,
    /// The last byte ended a line (so a line end now is a blank line).
    line_start: bool,
    /// The last byte was a CR (an LF now completes a CRLF).
    after_cr: bool,
}

impl BodyLimit {
    /// A fresh count with these caps.
    pub(crate) fn new(max_answer: usize, max_event: usize) -> Self {
        Self {
            max_answer,
            max_event,
            total: 0,
            event: 0,
            line_start: true,
            after_cr: false,
        }
    }

    /// Counts `chunk`; an error means it must not be passed on.
    pub(crate) fn check(&mut self, chunk: &[u8]) -> Result<(), ModelError> {
        self.total = self.total.saturating_add(chunk.len());
        if self.total > self.max_answer {
            return Err(answer_too_large(self.max_answer));
        }
        let mut rest = chunk;
        while !rest.is_empty() {
            // The run of ordinary bytes up to the next line end.
            let run = rest
                .iter()
                .position(|&b| b == b'\n' || b == b'\r')
                .unwrap_or(rest.len());
            if run > 0 {
                self.event = self.event.saturating_add(run);
                if self.event > self.max_event {
                    return Err(event_too_large(self.max_event));
                }
                self.line_start = false;
                self.after_cr = false;
                rest = &rest[run..];
                continue;
            }
            let byte = rest[0];
            rest = &rest[1..];
            if byte == b'\n' && self.after_cr {
                // The LF of a CRLF: the line already ended.
                self.after_cr = false;
                continue;
            }
            if self.line_start {
                // A blank line: the event is dispatched and forgotten.
                self.event = 0;
            }
            self.line_start = true;
            self.after_cr = byte == b'\r';
        }
        Ok(())
    }
}

/// What the bounded body stream fails with: the HTTP body's own error, or a
/// cap. Boxed by the SSE parser and found again by downcasting.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Reading the body failed.
    Http(reqwest::Error),
    /// A cap was reached.
    Limit(ModelError),
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http(error) => error.fmt(f),
            Self::Limit(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Http(error) => Some(error),
            Self::Limit(error) => Some(error),
        }
    }
}

/// `body` with `limit` applied to each chunk: a chunk over a cap becomes
/// the error instead, and the body's own errors are wrapped.
pub(crate) fn bounded<S>(
    body: S,
    mut limit: BodyLimit,
) -> impl futures_util::Stream<Item = Result<Bytes, BodyError>> + Send + 'static
where
    S: futures_util::Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
{
    use futures_util::StreamExt as _;
    body.map(move |chunk| match chunk {
        Ok(bytes) => limit
            .check(&bytes)
            .map(|()| bytes)
            .map_err(BodyError::Limit),
        Err(error) => Err(BodyError::Http(error)),
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The verdict for `bytes` fed in `chunks`: `None` when accepted, else
    /// the error kind.
    fn verdict(limit: &BodyLimit, bytes: &[u8], cuts: &[usize]) -> Option<ModelErrorKind> {
        let mut limit = limit.clone();
        let mut at = 0;
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        cuts.push(bytes.len());
        for cut in cuts {
            if let Err(error) = limit.check(&bytes[at..cut]) {
                return Some(error.kind());
            }
            at = cut;
        }
        None
    }

    /// The longest event of `text` (its bytes that are not line ends), by
    /// the SSE rules, written independently of [`BodyLimit`].
    fn longest_event(text: &str) -> usize {
        let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        normalized
            .split("\n\n")
            .map(|event| event.bytes().filter(|&b| b != b'\n').count())
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_long_event_is_refused_and_blank_lines_reset_the_count() {
        let limit = BodyLimit::new(1_000, 10);
        assert_eq!(verdict(&limit, b"data: 1234\n\ndata: 1234\n\n", &[]), None);
        // Two data lines of one event count together.
        assert_eq!(
            verdict(&limit, b"data: 1\ndata: 2\n\n", &[3]),
            Some(ModelErrorKind::EventTooLarge)
        );
        // CRLF and CR end lines too; a CRLF split across chunks is one end.
        assert_eq!(
            verdict(
                &limit,
                b"data: 1234\r\n\r\ndata: 1234\r\rdata: 12\r\n",
                &[11, 12]
            ),
            None
        );
        // One endless line.
        assert_eq!(
            verdict(&limit, &[b'x'; 11], &[5]),
            Some(ModelErrorKind::EventTooLarge)
        );
    }

    #[test]
    fn the_answer_cap_counts_every_byte() {
        let limit = BodyLimit::new(20, 1_000);
        assert_eq!(verdict(&limit, &[b'\n'; 20], &[7]), None);
        assert_eq!(
            verdict(&limit, &[b'\n'; 21], &[7]),
            Some(ModelErrorKind::AnswerTooLarge)
        );
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(size(64 * 1024 * 1024), "64 MiB");
        assert_eq!(size(1024 * 1024 + 512 * 1024), "1.5 MiB");
        assert_eq!(size(2048), "2 KiB");
        assert_eq!(size(1000), "1000 bytes");
        assert!(answer_too_large(1024).to_string().contains("1 KiB"));
        assert_eq!(event_too_large(1).kind(), ModelErrorKind::EventTooLarge);
    }

    proptest! {
        /// However the bytes are cut into chunks, the verdict is the same,
        /// and an event is refused exactly when it is over the cap.
        #[test]
        fn the_verdict_does_not_depend_on_chunking(
            text in "(data: [a-z]{0,6}|:[a-z]{0,3}|\r|\n){0,40}",
            cuts in proptest::collection::vec(0usize..400, 0..6),
            cap in 1usize..24,
        ) {
            let limit = BodyLimit::new(usize::MAX, cap);
            let whole = verdict(&limit, text.as_bytes(), &[]);
            prop_assert_eq!(verdict(&limit, text.as_bytes(), &cuts), whole);
            let expected = (longest_event(&text) > cap).then_some(ModelErrorKind::EventTooLarge);
            prop_assert_eq!(whole, expected);
        }
    }
}
