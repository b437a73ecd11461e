//! The messages between the runtime (the host) and the helper, and their
//! binary encoding.
//!
//! Requests go from the host to the supervisor over a Unix stream socket
//! (the supervisor's standard input), with the run's descriptors attached
//! (`SCM_RIGHTS`); the supervisor forwards them to a slot's init the same
//! way. Replies come back over a pipe (the supervisor's standard output),
//! written by the supervisor and by every slot's init: each reply is one
//! `write` of at most [`MAX_REPLY_FRAME`] bytes, below `PIPE_BUF`, so replies
//! from several writers never interleave.
//!
//! A frame is a 4-byte little-endian length, then that many bytes: a kind
//! byte and the kind's fields. Numbers are little-endian; byte strings and
//! lists carry a 4-byte length first. Every length is checked against a cap
//! before anything is allocated, and a frame must be consumed exactly:
//! anything malformed is a [`DecodeError`], never a panic (the decoders are
//! fuzzed: `fuzz/fuzz_targets/sandbox_messages.rs`).
//!
//! Written by hand rather than with serde and a binary format crate: the
//! messages are five small structs, both ends are this crate, and the
//! limits (lengths, counts, descriptors) must be checked while decoding,
//! which a generic format would leave to a second pass.

use std::fmt;

/// The protocol version the supervisor announces in [`Reply::Ready`]; the
/// host refuses any other (a helper binary from another build).
pub const PROTOCOL_VERSION: u32 = 2;
/// [`RunRequest::file_size`] `None` on the wire.
const NO_FILE_SIZE: u64 = u64::MAX;
/// Largest request frame (the command line and environment of a run are
/// bounded by the kernel's `ARG_MAX`, 2 MiB by default, well below this).
pub const MAX_REQUEST_FRAME: usize = 8 << 20;
/// Largest reply frame; below `PIPE_BUF` (4096), so replies are atomic.
pub const MAX_REPLY_FRAME: usize = 512;
/// Most arguments or environment entries in a request.
pub const MAX_LIST: usize = 1 << 17;
/// Most descriptors attached to one request: standard output, error and
/// input, and one `cgroup.procs` per cgroup hierarchy.
pub const MAX_FDS: usize = 8;
/// Most cgroup hierarchies a slot joins (v1 `pids` and `memory`, or one v2).
pub const MAX_CGROUPS: u8 = 4;
/// Longest message in a [`Reply::Failed`].
pub const MAX_MESSAGE: usize = 256;
/// Longest path in a [`HelperConfig`].
pub const MAX_PATH: usize = 4096;
/// Most writable paths in a [`HelperConfig`].
pub const MAX_PATHS: usize = 64;
/// Most resource limits in a [`HelperConfig`].
pub const MAX_RLIMITS: usize = 16;

/// The length prefix of a frame.
pub const FRAME_HEADER: usize = 4;

/// What the host asks of the supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Run a command in a slot (made on first use).
    Run(RunRequest),
    /// Kill a slot and everything in it.
    Kill {
        /// The slot.
        slot: u64,
    },
}

/// One command to run. The descriptors travel with the frame, in this
/// order: standard output, standard error, standard input when
/// [`stdin`](Self::stdin) is set, then [`cgroups`](Self::cgroups)
/// `cgroup.procs` files (only with the first run of a slot, which joins
/// them for its lifetime).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunRequest {
    /// The run's id, echoed in the replies.
    pub id: u64,
    /// The slot to run it in.
    pub slot: u64,
    /// The working folder.
    pub cwd: Vec<u8>,
    /// The program (an absolute path).
    pub program: Vec<u8>,
    /// The arguments after the program (`argv[1..]`).
    pub args: Vec<Vec<u8>>,
    /// The whole environment, `NAME=VALUE` each.
    pub env: Vec<Vec<u8>>,
    /// A descriptor for standard input is attached (else `/dev/null`).
    pub stdin: bool,
    /// How many `cgroup.procs` descriptors are attached.
    pub cgroups: u8,
    /// The largest file this run's command may write (`RLIMIT_FSIZE`), when
    /// lower than the helper's configured limit: what is left of the
    /// workspace's disk cap. `None` keeps the configured limit.
    pub file_size: Option<u64>,
}

impl RunRequest {
    /// How many descriptors travel with this request.
    pub fn fd_count(&self) -> usize {
        2 + usize::from(self.stdin) + usize::from(self.cgroups)
    }
}

/// What the helper tells the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The supervisor is up and speaks this version.
    Ready {
        /// [`PROTOCOL_VERSION`] of the helper.
        version: u32,
    },
    /// The command of run `id` started (its program was executed).
    Started {
        /// The run.
        id: u64,
    },
    /// The command of run `id` ended and everything it started is gone.
    Exited {
        /// The run.
        id: u64,
        /// How it ended.
        status: ExitStatus,
        /// What else the helper noticed.
        notes: Notes,
    },
    /// Run `id` could not run.
    Failed {
        /// The run.
        id: u64,
        /// Why.
        reason: FailReason,
        /// A short explanation (at most [`MAX_MESSAGE`] bytes).
        message: Vec<u8>,
    },
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Code(u8),
    /// A signal ended it.
    Signal(u8),
}

impl ExitStatus {
    /// The code a shell reports: the exit code, or 128 plus the signal.
    pub fn shell_code(self) -> i32 {
        match self {
            Self::Code(c) => i32::from(c),
            Self::Signal(s) => 128 + i32::from(s),
        }
    }
}

/// Why a run could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    /// The slot could not be made (nested namespaces refused here).
    Slot,
    /// The request was malformed or its descriptors missing.
    BadRequest,
}

/// Things the helper noticed about a run, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Notes(pub u32);

impl Notes {
    /// The run's `/tmp` was full when it ended.
    pub const TMP_FULL: u32 = 1;
    /// The run's `/dev/shm` was full when it ended.
    pub const SHM_FULL: u32 = 1 << 1;
    /// The slot can no longer be trusted to start clean (a mount it relies
    /// on changed): the host must not reuse it.
    pub const SLOT_SPOILED: u32 = 1 << 2;
    /// Bits this version knows.
    pub const KNOWN: u32 = Self::TMP_FULL | Self::SHM_FULL | Self::SLOT_SPOILED;

    /// `true` when `bit` is set.
    pub fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
}

/// What went wrong decoding a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
}

/// The kinds of [`DecodeError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The bytes end inside a field.
    Truncated,
    /// Bytes are left after the last field.
    TrailingBytes,
    /// An unknown message kind or enum value.
    UnknownKind,
    /// A length or count above its cap.
    TooLarge,
    /// A value out of its range (a NUL in a path or argument, an unknown
    /// flag bit, a relative program path).
    Invalid,
}

impl DecodeError {
    fn new(kind: DecodeErrorKind) -> Self {
        Self { kind }
    }

    /// What kind of error this is.
    pub fn kind(&self) -> DecodeErrorKind {
        self.kind
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            DecodeErrorKind::Truncated => "truncated message",
            DecodeErrorKind::TrailingBytes => "bytes after the end of a message",
            DecodeErrorKind::UnknownKind => "unknown message kind",
            DecodeErrorKind::TooLarge => "a length above its cap",
            DecodeErrorKind::Invalid => "an invalid value",
        };
        write!(f, "sandbox protocol: {what}")
    }
}

impl std::error::Error for DecodeError {}

const REQ_RUN: u8 = 1;
const REQ_KILL: u8 = 2;
const REP_READY: u8 = 1;
const REP_STARTED: u8 = 2;
const REP_EXITED: u8 = 3;
const REP_FAILED: u8 = 4;
const STATUS_CODE: u8 = 0;
const STATUS_SIGNAL: u8 = 1;
const FAIL_SLOT: u8 = 0;
const FAIL_BAD_REQUEST: u8 = 1;

/// Builds a frame.
struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn new(kind: u8) -> Self {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(&[0; FRAME_HEADER]);
        buf.push(kind);
        Self { buf }
    }
    fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        // Every length written is below a cap far under u32::MAX.
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.buf.extend_from_slice(b);
    }
    fn list(&mut self, items: &[Vec<u8>]) {
        self.len(items.len());
        for i in items {
            self.bytes(i);
        }
    }
    fn finish(mut self) -> Vec<u8> {
        let body = self.buf.len() - FRAME_HEADER;
        let len = u32::try_from(body).unwrap_or(u32::MAX).to_le_bytes();
        self.buf[..FRAME_HEADER].copy_from_slice(&len);
        self.buf
    }
}

/// Reads the fields of one frame body.
struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.buf.len() < n {
            return Err(DecodeError::new(DecodeErrorKind::Truncated));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError::new(DecodeErrorKind::Invalid)),
        }
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let b = self.take(8)?;
        let mut a = [0; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn len(&mut self, cap: usize) -> Result<usize, DecodeError> {
        let n = usize::try_from(self.u32()?).unwrap_or(usize::MAX);
        if n > cap {
            return Err(DecodeError::new(DecodeErrorKind::TooLarge));
        }
        Ok(n)
    }
    fn bytes(&mut self, cap: usize) -> Result<Vec<u8>, DecodeError> {
        let n = self.len(cap)?;
        Ok(self.take(n)?.to_vec())
    }
    /// A byte string that becomes a C string: no NUL inside.
    fn c_bytes(&mut self, cap: usize) -> Result<Vec<u8>, DecodeError> {
        let b = self.bytes(cap)?;
        if b.contains(&0) {
            return Err(DecodeError::new(DecodeErrorKind::Invalid));
        }
        Ok(b)
    }
    fn c_list(&mut self, cap: usize) -> Result<Vec<Vec<u8>>, DecodeError> {
        let n = self.len(cap)?;
        // Each item takes at least its 4-byte length: a count the rest of
        // the frame cannot hold is refused before allocating for it.
        if n > self.buf.len() / 4 {
            return Err(DecodeError::new(DecodeErrorKind::Truncated));
        }
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.c_bytes(MAX_REQUEST_FRAME)?);
        }
        Ok(items)
    }
    fn end(&self) -> Result<(), DecodeError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::new(DecodeErrorKind::TrailingBytes))
        }
    }
}

/// The length of the frame that starts `buf`, once its header is there
/// (`Ok(None)`: fewer than [`FRAME_HEADER`] bytes). A length above `cap` is
/// an error.
pub fn frame_len(buf: &[u8], cap: usize) -> Result<Option<usize>, DecodeError> {
    let Some(h) = buf.get(..FRAME_HEADER) else {
        return Ok(None);
    };
    let n = usize::try_from(u32::from_le_bytes([h[0], h[1], h[2], h[3]])).unwrap_or(usize::MAX);
    if n > cap {
        return Err(DecodeError::new(DecodeErrorKind::TooLarge));
    }
    if n == 0 {
        return Err(DecodeError::new(DecodeErrorKind::Truncated));
    }
    Ok(Some(n))
}

impl Request {
    /// The whole frame (header included).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Self::Run(r) => {
                let mut w = Writer::new(REQ_RUN);
                w.u64(r.id);
                w.u64(r.slot);
                w.bytes(&r.cwd);
                w.bytes(&r.program);
                w.list(&r.args);
                w.list(&r.env);
                w.u8(u8::from(r.stdin));
                w.u8(r.cgroups);
                w.u64(r.file_size.unwrap_or(NO_FILE_SIZE));
                w.finish()
            }
            Self::Kill { slot } => {
                let mut w = Writer::new(REQ_KILL);
                w.u64(*slot);
                w.finish()
            }
        }
    }

    /// Decodes a frame body (without its header).
    pub fn decode(body: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader { buf: body };
        let req = match r.u8()? {
            REQ_RUN => {
                let run = RunRequest {
                    id: r.u64()?,
                    slot: r.u64()?,
                    cwd: r.c_bytes(MAX_PATH)?,
                    program: r.c_bytes(MAX_PATH)?,
                    args: r.c_list(MAX_LIST)?,
                    env: r.c_list(MAX_LIST)?,
                    stdin: r.bool()?,
                    cgroups: r.u8()?,
                    file_size: Some(r.u64()?).filter(|n| *n != NO_FILE_SIZE),
                };
                if run.cgroups > MAX_CGROUPS
                    || !run.program.starts_with(b"/")
                    || !run.cwd.starts_with(b"/")
                    || run.env.iter().any(|e| !e.contains(&b'='))
                {
                    return Err(DecodeError::new(DecodeErrorKind::Invalid));
                }
                Self::Run(run)
            }
            REQ_KILL => Self::Kill { slot: r.u64()? },
            _ => return Err(DecodeError::new(DecodeErrorKind::UnknownKind)),
        };
        r.end()?;
        Ok(req)
    }
}

impl Reply {
    /// The whole frame (header included), at most [`MAX_REPLY_FRAME`]
    /// bytes (a longer message is cut).
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Self::Ready { version } => {
                let mut w = Writer::new(REP_READY);
                w.u32(*version);
                w.finish()
            }
            Self::Started { id } => {
                let mut w = Writer::new(REP_STARTED);
                w.u64(*id);
                w.finish()
            }
            Self::Exited { id, status, notes } => {
                let mut w = Writer::new(REP_EXITED);
                w.u64(*id);
                match status {
                    ExitStatus::Code(c) => {
                        w.u8(STATUS_CODE);
                        w.u8(*c);
                    }
                    ExitStatus::Signal(s) => {
                        w.u8(STATUS_SIGNAL);
                        w.u8(*s);
                    }
                }
                w.u32(notes.0);
                w.finish()
            }
            Self::Failed {
                id,
                reason,
                message,
            } => {
                let mut w = Writer::new(REP_FAILED);
                w.u64(*id);
                w.u8(match reason {
                    FailReason::Slot => FAIL_SLOT,
                    FailReason::BadRequest => FAIL_BAD_REQUEST,
                });
                w.bytes(&message[..message.len().min(MAX_MESSAGE)]);
                w.finish()
            }
        }
    }

    /// Decodes a frame body (without its header).
    pub fn decode(body: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader { buf: body };
        let reply = match r.u8()? {
            REP_READY => Self::Ready { version: r.u32()? },
            REP_STARTED => Self::Started { id: r.u64()? },
            REP_EXITED => {
                let id = r.u64()?;
                let status = match (r.u8()?, r.u8()?) {
                    (STATUS_CODE, c) => ExitStatus::Code(c),
                    (STATUS_SIGNAL, s) if (1..=64).contains(&s) => ExitStatus::Signal(s),
                    _ => return Err(DecodeError::new(DecodeErrorKind::Invalid)),
                };
                let notes = r.u32()?;
                if notes & !Notes::KNOWN != 0 {
                    return Err(DecodeError::new(DecodeErrorKind::Invalid));
                }
                Self::Exited {
                    id,
                    status,
                    notes: Notes(notes),
                }
            }
            REP_FAILED => Self::Failed {
                id: r.u64()?,
                reason: match r.u8()? {
                    FAIL_SLOT => FailReason::Slot,
                    FAIL_BAD_REQUEST => FailReason::BadRequest,
                    _ => return Err(DecodeError::new(DecodeErrorKind::UnknownKind)),
                },
                message: r.bytes(MAX_MESSAGE)?,
            },
            _ => return Err(DecodeError::new(DecodeErrorKind::UnknownKind)),
        };
        r.end()?;
        Ok(reply)
    }
}

/// A resource limit the helper sets on each command (`setrlimit`, soft and
/// hard).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimit {
    /// Which limit.
    pub resource: RlimitResource,
    /// Its value (bytes, or processes).
    pub value: u64,
}

/// Lowers the `RLIMIT_FSIZE` in `rlimits` to `bytes`, or adds one: the
/// largest file a run may write is the smaller of the configured limit and
/// what is left of its workspace's disk cap. Never raises a limit.
pub fn lower_file_size(rlimits: &mut Vec<Rlimit>, bytes: u64) {
    match rlimits
        .iter_mut()
        .find(|l| l.resource == RlimitResource::FileSize)
    {
        Some(l) => l.value = l.value.min(bytes),
        None => rlimits.push(Rlimit {
            resource: RlimitResource::FileSize,
            value: bytes,
        }),
    }
}

/// The resource limits the helper knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RlimitResource {
    /// `RLIMIT_NPROC`: processes of the user. Counted per user namespace,
    /// so inside a slot (a user namespace of its own) it bounds the run.
    Processes,
    /// `RLIMIT_DATA`: a process's private writable memory.
    Data,
    /// `RLIMIT_FSIZE`: the largest file a process may write.
    FileSize,
    /// `RLIMIT_CORE`: core dump size (0: none).
    Core,
    /// `RLIMIT_NOFILE`: open descriptors per process.
    OpenFiles,
}

impl RlimitResource {
    fn code(self) -> u8 {
        match self {
            Self::Processes => 0,
            Self::Data => 1,
            Self::FileSize => 2,
            Self::Core => 3,
            Self::OpenFiles => 4,
        }
    }
    fn from_code(c: u8) -> Option<Self> {
        Some(match c {
            0 => Self::Processes,
            1 => Self::Data,
            2 => Self::FileSize,
            3 => Self::Core,
            4 => Self::OpenFiles,
            _ => return None,
        })
    }
}

/// How the helper confines the commands it starts, fixed when it starts
/// (passed on its command line, see [`HelperConfig::to_arg`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HelperConfig {
    /// Size of each slot's `/tmp` in bytes (0: the kernel's default, half
    /// the RAM). Only the supervisor mounts it; a `bwrap` per run sizes its
    /// own with `--size`.
    pub tmp_size: u64,
    /// Size of each slot's `/dev/shm` in bytes (0: the kernel's default).
    pub shm_size: u64,
    /// Resource limits set on every command.
    pub rlimits: Vec<Rlimit>,
    /// Install the seccomp filter ([`crate::seccomp`]) on every command.
    pub seccomp: bool,
    /// Restrict every command with landlock where the kernel has it:
    /// reads anywhere, writes only below these paths (plus `/tmp`,
    /// `/dev/shm` and the devices in `/dev`).
    pub landlock: bool,
    /// The folders a command may write to (the workspace).
    pub writable: Vec<Vec<u8>>,
}

impl HelperConfig {
    /// The configuration as one command-line argument (hex of its
    /// encoding).
    pub fn to_arg(&self) -> String {
        let mut w = Writer::new(0);
        w.u64(self.tmp_size);
        w.u64(self.shm_size);
        w.len(self.rlimits.len());
        for l in &self.rlimits {
            w.u8(l.resource.code());
            w.u64(l.value);
        }
        w.u8(u8::from(self.seccomp));
        w.u8(u8::from(self.landlock));
        w.list(&self.writable);
        let body = &w.finish()[FRAME_HEADER + 1..];
        let mut hex = String::with_capacity(body.len() * 2);
        for b in body {
            hex.push(char::from(HEX[usize::from(b >> 4)]));
            hex.push(char::from(HEX[usize::from(b & 15)]));
        }
        hex
    }

    /// The configuration from [`to_arg`](Self::to_arg)'s output.
    pub fn from_arg(arg: &str) -> Result<Self, DecodeError> {
        let hex = arg.as_bytes();
        if !hex.len().is_multiple_of(2) || hex.len() > 2 * MAX_PATHS * (MAX_PATH + 4) + 4096 {
            return Err(DecodeError::new(DecodeErrorKind::Invalid));
        }
        let nibble = |c: u8| -> Result<u8, DecodeError> {
            match c {
                b'0'..=b'9' => Ok(c - b'0'),
                b'a'..=b'f' => Ok(c - b'a' + 10),
                _ => Err(DecodeError::new(DecodeErrorKind::Invalid)),
            }
        };
        let mut body = Vec::with_capacity(hex.len() / 2);
        for pair in hex.chunks_exact(2) {
            body.push(nibble(pair[0])? << 4 | nibble(pair[1])?);
        }
        let mut r = Reader { buf: &body };
        let tmp_size = r.u64()?;
        let shm_size = r.u64()?;
        let n = r.len(MAX_RLIMITS)?;
        let mut rlimits = Vec::with_capacity(n);
        for _ in 0..n {
            let resource = RlimitResource::from_code(r.u8()?)
                .ok_or(DecodeError::new(DecodeErrorKind::UnknownKind))?;
            rlimits.push(Rlimit {
                resource,
                value: r.u64()?,
            });
        }
        let seccomp = r.bool()?;
        let landlock = r.bool()?;
        let n = r.len(MAX_PATHS)?;
        let mut writable = Vec::with_capacity(n);
        for _ in 0..n {
            let p = r.c_bytes(MAX_PATH)?;
            if !p.starts_with(b"/") {
                return Err(DecodeError::new(DecodeErrorKind::Invalid));
            }
            writable.push(p);
        }
        r.end()?;
        Ok(Self {
            tmp_size,
            shm_size,
            rlimits,
            seccomp,
            landlock,
            writable,
        })
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn body(frame: &[u8]) -> &[u8] {
        let n = frame_len(frame, MAX_REQUEST_FRAME).unwrap().unwrap();
        assert_eq!(frame.len(), FRAME_HEADER + n);
        &frame[FRAME_HEADER..]
    }

    fn run() -> RunRequest {
        RunRequest {
            id: 7,
            slot: 3,
            cwd: b"/ws/s".to_vec(),
            program: b"/bin/bash".to_vec(),
            args: vec![b"-c".to_vec(), b"echo hi".to_vec()],
            env: vec![b"A=1".to_vec(), b"EMPTY=".to_vec()],
            stdin: true,
            cgroups: 2,
            file_size: Some(1 << 20),
        }
    }

    #[test]
    fn requests_round_trip() {
        for req in [Request::Run(run()), Request::Kill { slot: u64::MAX }] {
            let frame = req.encode();
            assert_eq!(Request::decode(body(&frame)).unwrap(), req);
        }
        assert_eq!(run().fd_count(), 5);
    }

    #[test]
    fn replies_round_trip_and_fit_a_pipe_write() {
        for reply in [
            Reply::Ready {
                version: PROTOCOL_VERSION,
            },
            Reply::Started { id: 1 },
            Reply::Exited {
                id: 2,
                status: ExitStatus::Signal(9),
                notes: Notes(Notes::TMP_FULL | Notes::SLOT_SPOILED),
            },
            Reply::Exited {
                id: 2,
                status: ExitStatus::Code(255),
                notes: Notes::default(),
            },
            Reply::Failed {
                id: 3,
                reason: FailReason::Slot,
                message: vec![b'x'; 10_000],
            },
        ] {
            let frame = reply.encode();
            assert!(frame.len() <= MAX_REPLY_FRAME, "{}", frame.len());
            let back = Reply::decode(body(&frame)).unwrap();
            match (&reply, &back) {
                (Reply::Failed { message, .. }, Reply::Failed { message: m2, .. }) => {
                    assert_eq!(&message[..MAX_MESSAGE], &m2[..]);
                }
                _ => assert_eq!(back, reply),
            }
        }
        assert_eq!(ExitStatus::Signal(9).shell_code(), 137);
        assert_eq!(ExitStatus::Code(3).shell_code(), 3);
    }

    #[test]
    fn malformed_requests_are_errors() {
        let good = Request::Run(run()).encode();
        let good = body(&good);
        // Every truncation fails, none panics.
        for cut in 0..good.len() {
            assert!(Request::decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut trailing = good.to_vec();
        trailing.push(0);
        assert_eq!(
            Request::decode(&trailing).unwrap_err().kind(),
            DecodeErrorKind::TrailingBytes
        );
        let bad = |f: &dyn Fn(&mut RunRequest)| {
            let mut r = run();
            f(&mut r);
            let frame = Request::Run(r).encode();
            Request::decode(&frame[FRAME_HEADER..]).unwrap_err().kind()
        };
        assert_eq!(
            bad(&|r| r.args[0] = b"a\0b".to_vec()),
            DecodeErrorKind::Invalid
        );
        assert_eq!(
            bad(&|r| r.program = b"bash".to_vec()),
            DecodeErrorKind::Invalid
        );
        assert_eq!(bad(&|r| r.cwd = b"rel".to_vec()), DecodeErrorKind::Invalid);
        assert_eq!(
            bad(&|r| r.env[0] = b"NOEQ".to_vec()),
            DecodeErrorKind::Invalid
        );
        assert_eq!(bad(&|r| r.cgroups = 9), DecodeErrorKind::Invalid);
        assert_eq!(
            bad(&|r| r.cwd = vec![b'/'; MAX_PATH + 1]),
            DecodeErrorKind::TooLarge
        );
        // A list count the frame cannot hold is refused before allocating.
        let mut w = Writer::new(REQ_RUN);
        w.u64(1);
        w.u64(1);
        w.bytes(b"/");
        w.bytes(b"/p");
        w.u32(100_000);
        let f = w.finish();
        assert_eq!(
            Request::decode(&f[FRAME_HEADER..]).unwrap_err().kind(),
            DecodeErrorKind::Truncated
        );
        assert_eq!(
            Request::decode(&[99]).unwrap_err().kind(),
            DecodeErrorKind::UnknownKind
        );
    }

    #[test]
    fn malformed_replies_are_errors() {
        let exited = Reply::Exited {
            id: 1,
            status: ExitStatus::Code(0),
            notes: Notes::default(),
        }
        .encode();
        let b = body(&exited);
        for cut in 0..b.len() {
            assert!(Reply::decode(&b[..cut]).is_err());
        }
        let mut unknown_note = b.to_vec();
        let n = unknown_note.len();
        unknown_note[n - 4] = 0x80;
        assert!(Reply::decode(&unknown_note).is_err());
        let mut bad_signal = b.to_vec();
        bad_signal[9] = STATUS_SIGNAL;
        bad_signal[10] = 0;
        assert!(Reply::decode(&bad_signal).is_err());
    }

    #[test]
    fn frame_lengths_are_capped() {
        assert_eq!(frame_len(&[1, 0], 10), Ok(None));
        assert_eq!(frame_len(&[5, 0, 0, 0], 10), Ok(Some(5)));
        assert!(frame_len(&[11, 0, 0, 0], 10).is_err());
        assert!(frame_len(&[0, 0, 0, 0], 10).is_err());
        assert!(frame_len(&[255, 255, 255, 255], MAX_REQUEST_FRAME).is_err());
    }

    #[test]
    fn config_round_trips_through_an_argument() {
        let cfg = HelperConfig {
            tmp_size: 512 << 20,
            shm_size: 64 << 20,
            rlimits: vec![
                Rlimit {
                    resource: RlimitResource::Processes,
                    value: 512,
                },
                Rlimit {
                    resource: RlimitResource::Core,
                    value: 0,
                },
            ],
            seccomp: true,
            landlock: true,
            writable: vec![b"/tmp/x y/ws".to_vec()],
        };
        let arg = cfg.to_arg();
        assert!(arg.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(HelperConfig::from_arg(&arg).unwrap(), cfg);
        for bad in ["0", "zz", "00", &format!("{arg}00")] {
            assert!(HelperConfig::from_arg(bad).is_err(), "{bad}");
        }
    }
}
