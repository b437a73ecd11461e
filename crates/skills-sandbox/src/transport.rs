//! Moving frames (see [`crate::protocol`]) between processes: over a Unix
//! stream socket with descriptors attached, or over a pipe without.

use std::collections::VecDeque;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::Errno;
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};

use crate::protocol::{DecodeError, FRAME_HEADER, MAX_FDS, frame_len};

/// Sends one frame on a Unix socket with `fds` attached to its first byte.
pub fn send_frame(socket: BorrowedFd<'_>, frame: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut rest = frame;
    let mut first = true;
    while !rest.is_empty() {
        let mut control = SendAncillaryBuffer::new(&mut space);
        if first
            && !fds.is_empty()
            && (fds.len() > MAX_FDS || !control.push(SendAncillaryMessage::ScmRights(fds)))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "too many descriptors for one frame",
            ));
        }
        let n = match rustix::net::sendmsg(
            socket,
            &[io::IoSlice::new(rest)],
            &mut control,
            SendFlags::NOSIGNAL,
        ) {
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        first = false;
        rest = &rest[n..];
    }
    Ok(())
}

/// Writes one frame to a pipe in a single `write` (frames up to `PIPE_BUF`
/// bytes are atomic: writers sharing the pipe never interleave).
pub fn write_frame(pipe: BorrowedFd<'_>, frame: &[u8]) -> io::Result<()> {
    loop {
        match rustix::io::write(pipe, frame) {
            Ok(n) if n == frame.len() => return Ok(()),
            Ok(_) => return Err(io::ErrorKind::WriteZero.into()),
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Why no frame could be read.
#[derive(Debug)]
pub enum RecvError {
    /// Reading failed.
    Io(io::Error),
    /// The bytes are not a frame (a length above the cap), or descriptors
    /// were cut (more were sent than fit).
    Protocol(DecodeError),
    /// Descriptors arrived truncated.
    Truncated,
}

impl std::fmt::Display for RecvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io(e) => write!(f, "{e}"),
            Self::Protocol(e) => write!(f, "{e}"),
            Self::Truncated => write!(f, "descriptors were cut"),
        }
    }
}

impl std::error::Error for RecvError {}

/// Reads frames from a socket or a pipe, keeping the descriptors that
/// arrive (in order) for the frames that declare them.
#[derive(Debug)]
pub struct FrameReader<F> {
    source: F,
    cap: usize,
    buf: Vec<u8>,
    start: usize,
    fds: VecDeque<OwnedFd>,
    socket: bool,
}

/// Bytes asked of the kernel per read.
const READ_CHUNK: usize = 64 * 1024;

impl<F: AsFd> FrameReader<F> {
    /// Reads frames of at most `cap` bytes from a Unix socket (descriptors
    /// are received).
    pub fn socket(source: F, cap: usize) -> Self {
        Self::new(source, cap, true)
    }

    /// Reads frames of at most `cap` bytes from a pipe.
    pub fn pipe(source: F, cap: usize) -> Self {
        Self::new(source, cap, false)
    }

    fn new(source: F, cap: usize, socket: bool) -> Self {
        Self {
            source,
            cap,
            buf: Vec::new(),
            start: 0,
            fds: VecDeque::new(),
            socket,
        }
    }

    /// The next frame's body, or `None` at the end of the input. An end in
    /// the middle of a frame is an error.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, RecvError> {
        loop {
            let pending = &self.buf[self.start..];
            if let Some(n) = frame_len(pending, self.cap).map_err(RecvError::Protocol)?
                && pending.len() >= FRAME_HEADER + n
            {
                let body = pending[FRAME_HEADER..FRAME_HEADER + n].to_vec();
                self.start += FRAME_HEADER + n;
                if self.start == self.buf.len() {
                    self.buf.clear();
                    self.start = 0;
                }
                return Ok(Some(body));
            }
            if self.start > 0 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            if self.fill()? == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(RecvError::Io(io::ErrorKind::UnexpectedEof.into()))
                };
            }
        }
    }

    /// Takes the next `n` descriptors received (those of the frame just
    /// read); fewer than `n` is a protocol error.
    pub fn take_fds(&mut self, n: usize) -> Result<Vec<OwnedFd>, RecvError> {
        if self.fds.len() < n {
            return Err(RecvError::Truncated);
        }
        Ok(self.fds.drain(..n).collect())
    }

    /// Reads once; returns the bytes read (0 at the end).
    fn fill(&mut self) -> Result<usize, RecvError> {
        let old = self.buf.len();
        self.buf.resize(old + READ_CHUNK, 0);
        let got = loop {
            let r = if self.socket {
                self.recv(old)
            } else {
                rustix::io::read(self.source.as_fd(), &mut self.buf[old..]).map_err(io::Error::from)
            };
            match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match got {
            Ok(n) => {
                self.buf.truncate(old + n);
                Ok(n)
            }
            Err(e) => {
                self.buf.truncate(old);
                Err(match e.raw_os_error() {
                    Some(code) if code == Errno::MSGSIZE.raw_os_error() => RecvError::Truncated,
                    _ => RecvError::Io(e),
                })
            }
        }
    }

    fn recv(&mut self, at: usize) -> io::Result<usize> {
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let msg = rustix::net::recvmsg(
            self.source.as_fd(),
            &mut [io::IoSliceMut::new(&mut self.buf[at..])],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        )?;
        for m in control.drain() {
            if let RecvAncillaryMessage::ScmRights(fds) = m {
                self.fds.extend(fds);
            }
        }
        if msg.flags.contains(rustix::net::ReturnFlags::CTRUNC) {
            // Descriptors were dropped by the kernel: the frames they
            // belonged to cannot be trusted.
            return Err(io::Error::from_raw_os_error(Errno::MSGSIZE.raw_os_error()));
        }
        Ok(msg.bytes)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::protocol::{MAX_REQUEST_FRAME, Request, RunRequest};
    use rustix::net::{AddressFamily, SocketFlags, SocketType};

    fn pair() -> (OwnedFd, OwnedFd) {
        rustix::net::socketpair(
            AddressFamily::UNIX,
            SocketType::STREAM,
            SocketFlags::CLOEXEC,
            None,
        )
        .unwrap()
    }

    #[test]
    fn frames_and_descriptors_arrive_in_order() {
        let (a, b) = pair();
        let (r1, w1) = rustix::pipe::pipe().unwrap();
        let big = RunRequest {
            id: 1,
            slot: 1,
            cwd: b"/".to_vec(),
            program: b"/bin/true".to_vec(),
            args: vec![vec![b'x'; 300_000]],
            env: vec![],
            stdin: false,
            cgroups: 0,
            file_size: None,
        };
        let writer = std::thread::spawn(move || {
            for i in 0..3u64 {
                let mut r = big.clone();
                r.id = i;
                send_frame(
                    a.as_fd(),
                    &Request::Run(r).encode(),
                    &[w1.as_fd(), r1.as_fd()],
                )
                .unwrap();
                send_frame(a.as_fd(), &Request::Kill { slot: i }.encode(), &[]).unwrap();
            }
        });
        let mut reader = FrameReader::socket(b, MAX_REQUEST_FRAME);
        for i in 0..3u64 {
            let body = reader.next_frame().unwrap().unwrap();
            let Request::Run(r) = Request::decode(&body).unwrap() else {
                panic!("not a run");
            };
            assert_eq!(r.id, i);
            assert_eq!(r.args[0].len(), 300_000);
            assert_eq!(reader.take_fds(2).unwrap().len(), 2);
            let body = reader.next_frame().unwrap().unwrap();
            assert_eq!(Request::decode(&body).unwrap(), Request::Kill { slot: i });
        }
        writer.join().unwrap();
        assert!(reader.next_frame().unwrap().is_none());
        assert!(reader.take_fds(1).is_err());
    }

    #[test]
    fn an_end_inside_a_frame_or_an_oversized_length_is_an_error() {
        let (a, b) = pair();
        rustix::io::write(&a, &[10, 0, 0, 0, 1, 2]).unwrap();
        drop(a);
        let mut reader = FrameReader::socket(b, 100);
        assert!(matches!(reader.next_frame(), Err(RecvError::Io(_))));
        let (a, b) = pair();
        rustix::io::write(&a, &[255, 255, 255, 0]).unwrap();
        let mut reader = FrameReader::socket(b, 100);
        assert!(matches!(reader.next_frame(), Err(RecvError::Protocol(_))));
    }

    #[test]
    fn pipes_carry_frames_without_descriptors() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        write_frame(w.as_fd(), &[2, 0, 0, 0, 9, 9]).unwrap();
        write_frame(w.as_fd(), &[1, 0, 0, 0, 7]).unwrap();
        drop(w);
        let mut reader = FrameReader::pipe(r, 16);
        assert_eq!(reader.next_frame().unwrap().unwrap(), [9, 9]);
        assert_eq!(reader.next_frame().unwrap().unwrap(), [7]);
        assert!(reader.next_frame().unwrap().is_none());
    }
}
