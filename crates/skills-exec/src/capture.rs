//! Capped capture of a command's output: the head and the tail are kept, the
//! middle is dropped with a note, cuts fall on UTF-8 boundaries.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Default cap on captured standard output and standard error: 64 KiB each.
pub const DEFAULT_OUTPUT_CAP: usize = 64 * 1024;

/// Bytes read from a stream, head and tail kept.
#[derive(Debug, Default)]
pub(crate) struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    cap: usize,
}

impl Captured {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    pub(crate) fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let head_cap = self.cap / 2;
        if self.head.len() < head_cap {
            let n = (head_cap - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..n]);
            chunk = &chunk[n..];
        }
        let tail_cap = self.cap - head_cap;
        if chunk.len() >= tail_cap {
            self.tail.clear();
            self.tail.extend(&chunk[chunk.len() - tail_cap..]);
        } else {
            let overflow = (self.tail.len() + chunk.len()).saturating_sub(tail_cap);
            self.tail.drain(..overflow);
            self.tail.extend(chunk);
        }
    }

    /// The text, with a note in the middle when bytes were dropped.
    pub(crate) fn into_text(self) -> (String, bool) {
        let kept = self.head.len() as u64 + self.tail.len() as u64;
        if kept == self.total {
            let mut all = self.head;
            all.extend(self.tail);
            return (String::from_utf8_lossy(&all).into_owned(), false);
        }
        let head = cut_end(&self.head);
        let tail: Vec<u8> = self.tail.into_iter().collect();
        let tail = cut_start(&tail);
        let dropped = self.total - head.len() as u64 - tail.len() as u64;
        let text = format!(
            "{}\n[… {dropped} bytes of output omitted (kept the first {} and the last {} bytes) …]\n{}",
            String::from_utf8_lossy(head),
            head.len(),
            tail.len(),
            String::from_utf8_lossy(tail)
        );
        (text, true)
    }
}

/// `bytes` without a UTF-8 sequence cut at its end.
fn cut_end(bytes: &[u8]) -> &[u8] {
    let mut end = bytes.len();
    let mut back = 0;
    while end > 0 && back < 4 && bytes[end - 1] & 0xC0 == 0x80 {
        end -= 1;
        back += 1;
    }
    if end > 0 && bytes[end - 1] >= 0xC0 {
        let need = match bytes[end - 1] {
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            _ => 2,
        };
        if back + 1 < need {
            return &bytes[..end - 1];
        }
    }
    bytes
}

/// `bytes` without continuation bytes at its start.
fn cut_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| **b & 0xC0 == 0x80)
        .count();
    &bytes[skip..]
}

/// Reads `reader` to its end, keeping at most `cap` bytes (head and tail).
pub(crate) async fn read_capped<R: AsyncRead + Unpin>(mut reader: R, cap: usize) -> Captured {
    let mut captured = Captured::new(cap);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return captured,
            Ok(n) => captured.push(&buf[..n]),
        }
    }
}

/// Caps `text` at `cap` bytes keeping head and tail, cut on UTF-8 boundaries,
/// with a note in the middle; returns the text and whether it was cut.
pub fn cap_text(text: &str, cap: usize) -> (String, bool) {
    let mut c = Captured::new(cap);
    c.push(text.as_bytes());
    c.into_text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_short_text() {
        assert_eq!(cap_text("hello", 100), ("hello".to_owned(), false));
    }

    #[test]
    fn keeps_head_and_tail_on_char_boundaries() {
        let text = format!("{}{}", "é".repeat(100), "ü".repeat(100));
        let (out, cut) = cap_text(&text, 51);
        assert!(cut);
        assert!(out.starts_with("éé"));
        assert!(out.ends_with("üü"));
        assert!(!out.contains('\u{FFFD}'), "{out}");
        assert!(out.contains("bytes of output omitted"));
    }

    #[test]
    fn chunked_push_matches_whole() {
        let text: String = (0..5000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let mut c = Captured::new(100);
        for chunk in text.as_bytes().chunks(7) {
            c.push(chunk);
        }
        assert_eq!(c.into_text(), cap_text(&text, 100));
    }
}
