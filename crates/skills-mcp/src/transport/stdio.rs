//! One client over a byte stream: newline-delimited JSON-RPC, as the stdio
//! transport of MCP has it.
//!
//! The transport is ours rather than the SDK's line codec, because the SDK's
//! drops some messages without a word: a line that is not JSON, or one
//! nested deeper than `serde_json`'s recursion limit, gets no answer at all,
//! so the client waits for ever. Here every line is parsed once, with these
//! rules:
//!
//! * a line nested deeper than [`MAX_JSON_DEPTH`] is refused before any
//!   parser builds it: `-32600` with the request's `id` when one can be read;
//! * a line that is not JSON (or not UTF-8) gets `-32700`, `id` null;
//! * a JSON value that is not a JSON-RPC message gets `-32600` (with its
//!   `id` when it has one); a malformed notification is dropped, as JSON-RPC
//!   never answers a notification;
//! * a line longer than [`MAX_LINE_BYTES`] gets `-32700` and ends the
//!   session (the rest of the line cannot be framed).
//!
//! Every wait here is on the client (reading its next bytes, or writing to
//! it while it reads); none depends on what a message holds.

use std::borrow::Cow;
use std::future::Future;
use std::io;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::ServerInitializeError;
use rmcp::transport::Transport;
use serde::Deserialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader,
    BufWriter,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::error::{Error, ErrorKind};
use crate::server::SkillsServer;

/// The longest line [`serve_io`] reads (the SDK's own limit).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The deepest nesting of arrays and objects a message may have on stdio;
/// deeper ones get `-32600`. MCP messages need a handful of levels (tool
/// arguments a few more); `serde_json` gives up at 128, and the SDK's
/// message types spend some of those levels themselves.
pub const MAX_JSON_DEPTH: usize = 64;

/// Answers queued for the client before the server waits for it to read.
const OUTPUT_QUEUE: usize = 64;
const OUTPUT_BUFFER: usize = 64 * 1024;
/// How long the answers still queued at the end may take to write.
const FLUSH_GRACE: Duration = Duration::from_secs(5);

/// Serves one client over standard input and output until it disconnects.
///
/// # Errors
///
/// [`ErrorKind::Transport`] when the handshake fails for another reason than
/// the client going away.
pub async fn serve_stdio(server: &SkillsServer) -> Result<(), Error> {
    serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// [`serve_stdio`] until the client disconnects or `shutdown` completes
/// (e.g. on a signal): then no new message is read, requests in flight get
/// their answers (the SDK waits up to 5 s for them) and the session ends.
///
/// # Errors
///
/// As [`serve_stdio`].
pub async fn serve_stdio_until<F>(server: &SkillsServer, shutdown: F) -> Result<(), Error>
where
    F: Future<Output = ()> + Send,
{
    serve_io_until(server, tokio::io::stdin(), tokio::io::stdout(), shutdown).await
}

/// Serves one client over a pair of byte streams (newline-delimited
/// JSON-RPC) until it disconnects.
///
/// Every line gets an answer or is a notification: see the module rules in
/// `docs/mcp.md` ("Bad input"). Blank lines are skipped. A client that
/// closes its end mid-call ends the session cleanly (the answers in flight
/// are still written, for a bounded time): the result is `Ok(())`.
///
/// # Errors
///
/// [`ErrorKind::Transport`] when the handshake fails for another reason than
/// the client going away (e.g. the first message is not `initialize`).
pub async fn serve_io<R, W>(server: &SkillsServer, read: R, write: W) -> Result<(), Error>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    serve_io_until(server, read, write, std::future::pending()).await
}

/// [`serve_io`] until the client disconnects or `shutdown` completes.
///
/// # Errors
///
/// As [`serve_io`].
pub async fn serve_io_until<R, W, F>(
    server: &SkillsServer,
    read: R,
    write: W,
    shutdown: F,
) -> Result<(), Error>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
    F: Future<Output = ()> + Send,
{
    let stop = CancellationToken::new();
    let session = serve_lines(server, read, write, stop.clone())
        .instrument(tracing::debug_span!("skills_mcp.session"));
    tokio::pin!(session);
    tokio::pin!(shutdown);
    tokio::select! {
        result = &mut session => return result,
        () = &mut shutdown => {
            tracing::debug!("shutting down: no new messages are read");
            stop.cancel();
        }
    }
    session.await
}

async fn serve_lines<R, W>(
    server: &SkillsServer,
    read: R,
    write: W,
    stop: CancellationToken,
) -> Result<(), Error>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (out, lines) = mpsc::channel(OUTPUT_QUEUE);
    let writer = tokio::spawn(write_lines(lines, write));
    let transport = LineTransport {
        read: BufReader::new(read),
        line: Vec::new(),
        out,
        pending: None,
        done: false,
        stop,
    };
    let result = match rmcp::serve_server(server.connection(), transport).await {
        Ok(running) => {
            // Ended by the client closing its stream, a shutdown or a task
            // failing: either way the session is over.
            let reason = running.waiting().await;
            tracing::debug!(?reason, "session ended");
            Ok(())
        }
        Err(ServerInitializeError::ConnectionClosed(_) | ServerInitializeError::Cancelled) => {
            Ok(())
        }
        Err(err) => Err(Error::new(
            ErrorKind::Transport,
            format!("the MCP handshake failed: {err}"),
        )),
    };
    // The transport is gone with the session, so the writer sees the end of
    // its queue once it has written what is left (bounded, for a client
    // that stopped reading).
    match tokio::time::timeout(FLUSH_GRACE, writer).await {
        Ok(Ok(Err(err))) => tracing::debug!(%err, "the client's stream failed"),
        Err(_) => tracing::debug!("the client did not read its last answers in time"),
        _ => {}
    }
    result
}

/// The SDK's side of the session: whole messages in, whole messages out.
struct LineTransport<R> {
    read: BufReader<R>,
    /// The line read so far: kept here, so a `receive` the SDK drops midway
    /// (it selects over it) loses nothing.
    line: Vec<u8>,
    out: mpsc::Sender<Vec<u8>>,
    /// An error answer not yet queued.
    pending: Option<Vec<u8>>,
    /// No message follows (end of stream, over-long line, shutdown).
    done: bool,
    stop: CancellationToken,
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let encoded = encode(&item);
        let out = self.out.clone();
        async move {
            out.send(encoded?).await.map_err(|_| {
                io::Error::new(io::ErrorKind::BrokenPipe, "the client's stream is closed")
            })
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.pending.is_some() {
                // Reserve first, take second: a cancelled wait keeps the answer.
                let permit = tokio::select! {
                    permit = self.out.reserve() => permit.ok()?,
                    () = self.stop.cancelled() => return None,
                };
                if let Some(answer) = self.pending.take() {
                    permit.send(answer);
                }
            }
            if self.done {
                return None;
            }
            let read = tokio::select! {
                biased;
                () = self.stop.cancelled() => {
                    self.done = true;
                    continue;
                }
                read = fill_line(&mut self.read, &mut self.line, MAX_LINE_BYTES) => read,
            };
            match read {
                Ok(true) => {}
                Ok(false) => {
                    // End of stream: a last line without its newline counts.
                    self.done = true;
                    if self.line.is_empty() {
                        continue;
                    }
                }
                Err(err) => {
                    tracing::debug!(%err, "the client's stream ends");
                    self.done = true;
                    if err.kind() == io::ErrorKind::InvalidData {
                        self.pending =
                            Some(error_answer(None, -32700, &format!("parse error: {err}")));
                    }
                    continue;
                }
            }
            let line = std::mem::take(&mut self.line);
            match decode(&line) {
                Decoded::Message(message) => return Some(*message),
                Decoded::Skip => {}
                Decoded::Answer(answer) => self.pending = Some(answer),
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        Ok(())
    }
}

/// Reads into `line` up to and including the next newline: `true` when a
/// newline ended it, `false` at the end of the stream; an `InvalidData`
/// error for a line over `max` bytes.
///
/// Cancel-safe: bytes leave the reader's buffer only when they are in
/// `line`, with no wait in between.
async fn fill_line<R: AsyncBufRead + Unpin>(
    read: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<bool> {
    loop {
        let buf = read.fill_buf().await?;
        if buf.is_empty() {
            return Ok(false);
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if line.len() + take > max {
            line.clear();
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("a message longer than {max} bytes"),
            ));
        }
        line.extend_from_slice(&buf[..take]);
        read.consume(take);
        if done {
            return Ok(true);
        }
    }
}

/// What to do with one line.
enum Decoded {
    Message(Box<ClientJsonRpcMessage>),
    /// Blank, or a malformed notification or response: nothing to answer.
    Skip,
    /// An error answer for the client.
    Answer(Vec<u8>),
}

fn decode(line: &[u8]) -> Decoded {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Skip;
    }
    if nesting_exceeds(line, MAX_JSON_DEPTH) {
        tracing::debug!("a message nested too deep");
        let probe = Probe::of(line);
        if !probe.wants_answer() {
            return Decoded::Skip;
        }
        return Decoded::Answer(error_answer(
            probe.id,
            -32600,
            &format!("invalid request: nested deeper than {MAX_JSON_DEPTH} levels"),
        ));
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Decoded::Message(Box::new(message)),
        Err(err) if err.is_syntax() || err.is_eof() => {
            tracing::debug!(%err, "a line that is not JSON");
            Decoded::Answer(error_answer(None, -32700, &format!("parse error: {err}")))
        }
        Err(err) => {
            tracing::debug!(%err, "a message that is not JSON-RPC");
            let probe = Probe::of(line);
            if !probe.wants_answer() {
                return Decoded::Skip;
            }
            Decoded::Answer(error_answer(
                probe.id,
                -32600,
                &format!("invalid request: {err}"),
            ))
        }
    }
}

/// Whether arrays and objects nest deeper than `max` (brackets inside
/// strings do not count). One pass over the bytes, no allocation.
fn nesting_exceeds(bytes: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The top-level fields of a message that decide how to answer it, read
/// without building the rest (`serde_json` skips ignored values without
/// recursing, so this works at any depth).
#[derive(Debug, Default)]
struct Probe {
    /// A usable `id` (a string or a number).
    id: Option<Value>,
    has_id: bool,
    has_method: bool,
}

impl Probe {
    fn of(line: &[u8]) -> Self {
        serde_json::from_slice(line).unwrap_or_default()
    }

    /// Everything is answered but a notification (a method, no id).
    fn wants_answer(&self) -> bool {
        self.has_id || !self.has_method
    }
}

impl<'de> Deserialize<'de> for Probe {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields;
        impl<'de> Visitor<'de> for Fields {
            type Value = Probe;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON-RPC message")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probe, A::Error> {
                let mut probe = Probe::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "id" => {
                            probe.has_id = true;
                            let id = map.next_value::<IdValue>()?;
                            probe.id = id.0;
                        }
                        "method" => {
                            probe.has_method = true;
                            map.next_value::<IgnoredAny>()?;
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(probe)
            }
        }
        deserializer.deserialize_map(Fields)
    }
}

/// An `id` value: kept when it is a string or a number, skipped (at any
/// depth) otherwise.
struct IdValue(Option<Value>);

impl<'de> Deserialize<'de> for IdValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Id;
        impl<'de> Visitor<'de> for Id {
            type Value = IdValue;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a request id")
            }

            fn visit_str<E>(self, v: &str) -> Result<IdValue, E> {
                Ok(IdValue(Some(Value::from(v))))
            }

            fn visit_i64<E>(self, v: i64) -> Result<IdValue, E> {
                Ok(IdValue(Some(Value::from(v))))
            }

            fn visit_u64<E>(self, v: u64) -> Result<IdValue, E> {
                Ok(IdValue(Some(Value::from(v))))
            }

            fn visit_f64<E>(self, v: f64) -> Result<IdValue, E> {
                Ok(IdValue(Some(Value::from(v))))
            }

            fn visit_unit<E>(self) -> Result<IdValue, E> {
                Ok(IdValue(None))
            }

            fn visit_bool<E>(self, _: bool) -> Result<IdValue, E> {
                Ok(IdValue(None))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<IdValue, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(IdValue(None))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IdValue, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IdValue(None))
            }
        }
        deserializer.deserialize_any(Id)
    }
}

/// A JSON-RPC error answer, as one line.
fn error_answer(id: Option<Value>, code: i64, message: &str) -> Vec<u8> {
    let mut line = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .unwrap_or_default();
    line.push(b'\n');
    line
}

fn encode(message: &ServerJsonRpcMessage) -> io::Result<Vec<u8>> {
    let mut line = Vec::with_capacity(256);
    serde_json::to_writer(&mut line, message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// Writes the queued lines, flushing whenever the queue runs empty, until
/// every sender is gone.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut lines: mpsc::Receiver<Vec<u8>>,
    write: W,
) -> io::Result<()> {
    let mut write = BufWriter::with_capacity(OUTPUT_BUFFER, write);
    while let Some(line) = lines.recv().await {
        write.write_all(&line).await?;
        if lines.is_empty() {
            write.flush().await?;
        }
    }
    write.flush().await?;
    write.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nest(depth: usize) -> String {
        let mut value = "1".to_owned();
        for _ in 0..depth {
            value = format!("[{value}]");
        }
        value
    }

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        assert!(!nesting_exceeds(b"{\"a\":[[1]]}", 3));
        assert!(nesting_exceeds(b"{\"a\":[[[1]]]}", 3));
        assert!(!nesting_exceeds(br#"{"a":"[[[[[[\"[[[["}"#, 1));
        assert!(!nesting_exceeds(nest(64).as_bytes(), 64));
        assert!(nesting_exceeds(nest(65).as_bytes(), 64));
    }

    #[test]
    fn the_probe_reads_the_id_at_any_depth() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}}"#,
            nest(5000)
        );
        let probe = Probe::of(line.as_bytes());
        assert_eq!(probe.id, Some(Value::from(7)));
        assert!(probe.wants_answer());
        let line = format!(r#"{{"method":"notifications/x","params":{}}}"#, nest(5000));
        assert!(!Probe::of(line.as_bytes()).wants_answer());
        let probe = Probe::of(br#"{"id":{"a":[1]},"method":"ping"}"#);
        assert_eq!(probe.id, None);
        assert!(probe.wants_answer());
        assert!(!Probe::of(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).has_method);
        assert!(Probe::of(b"[1,2]").wants_answer());
    }

    #[test]
    fn every_bad_line_that_is_not_a_notification_gets_an_answer() {
        let answer = |line: &str| match decode(line.as_bytes()) {
            Decoded::Answer(bytes) => serde_json::from_slice::<Value>(&bytes).unwrap_or_default(),
            Decoded::Message(_) => Value::from("message"),
            Decoded::Skip => Value::from("skip"),
        };
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"x","method":"ping","params":{{"a":{}}}}}"#,
            nest(200)
        );
        let got = answer(&deep);
        assert_eq!(got["error"]["code"], -32600);
        assert_eq!(got["id"], "x");
        assert_eq!(answer("{broken")["error"]["code"], -32700);
        assert_eq!(answer("\u{1}")["error"]["code"], -32700);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":3}"#)["error"]["code"],
            -32600
        );
        assert_eq!(answer(r#"{"jsonrpc":"2.0","id":3}"#)["id"], 3);
        assert_eq!(answer("   "), Value::from("skip"));
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Value::from("message")
        );
    }
}
