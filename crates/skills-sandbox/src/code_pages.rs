//! The resident pages of the program's code, given back by a long-running
//! server (`skills mcp`) once start-up is over and whenever it goes quiet.
//!
//! A process keeps mapped every page of code it has ever run: the kernel
//! maps a page of an executable or a library when it is first run (with the
//! 64 KiB or the page-cache folio around it) and unmaps it only under
//! memory pressure. A server's resident memory then counts the code of its
//! start-up (argument parsing, discovery, validation) and of every rare path
//! it took once, long after it last ran. [`CodeMappings::release`] drops
//! those pages from the process's page tables (`madvise(MADV_DONTNEED)`);
//! the next call into them maps them again from the page cache, a minor
//! fault of a few microseconds, so what stays resident is the code the
//! server has run since.
//!
//! # Which pages, and why that is sound
//!
//! `MADV_DONTNEED` on a private file mapping throws away the process's own
//! copy of every page it wrote to. On a mapping of code that never happens
//! (it is not writable), but three kinds of mapping look alike and differ:
//!
//! * relocated tables (`.data.rel.ro`, the `RELRO` segment): written by the
//!   dynamic loader before it made them read-only, so their pages are the
//!   process's own copies, and dropping them would bring back the
//!   unrelocated bytes of the file;
//! * code a debugger or a uprobe patched with a breakpoint (again private
//!   copies);
//! * a mapping that is unmapped, and its addresses reused by an allocation,
//!   between the moment the ranges are read and the `madvise`.
//!
//! So only these ranges are touched: mappings [`CodeMappings::record`] found
//! before `main` started any thread — the program and the libraries the
//! dynamic loader loaded with it, which it never unloads (only what
//! `dlopen` loads can be closed) — that are private, not writable, mapped
//! from a file that has an executable mapping (an object the loader
//! loaded, not a data file), unchanged since (same addresses, same file),
//! and that hold no private page (`Anonymous: 0 kB` in `/proc/self/smaps`)
//! and no locked page. Every page dropped is then an unmodified page of its
//! file and comes back with the same bytes.
//!
//! Linux only ([`SUPPORTED`]); elsewhere [`CodeMappings::record`] finds
//! nothing and [`CodeMappings::release`] releases nothing.
//!
//! Written by hand: no crate reads these two procfs files for this purpose
//! (`procfs` would bring a dependency tree for two line formats).

use std::io;

/// `true` where [`CodeMappings::release`] can give pages back: Linux.
pub const SUPPORTED: bool = cfg!(target_os = "linux");

/// The most of `/proc/self/maps` or `/proc/self/smaps` read: enough for
/// tens of thousands of mappings; a longer file is refused rather than
/// read in part.
const MAX_PROC_FILE: u64 = 16 * 1024 * 1024;

/// The program's and its libraries' read-only mappings, as they were when
/// [`CodeMappings::record`] read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeMappings {
    mappings: Vec<Mapping>,
}

/// One mapping: its addresses and the file it maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mapping {
    start: usize,
    end: usize,
    dev: u64,
    inode: u64,
}

/// What one [`CodeMappings::release`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Released {
    /// Mappings whose pages were dropped.
    pub mappings: usize,
    /// The resident bytes those mappings held before.
    pub bytes: u64,
    /// Recorded mappings passed over: changed, partly written (relocated
    /// tables, breakpoints), locked, or refused by the kernel.
    pub skipped: usize,
}

impl CodeMappings {
    /// Reads the process's mappings (`/proc/self/maps`) and keeps the
    /// private, read-only mappings of the files it runs code from.
    ///
    /// Call it first thing in `main`, before any thread starts and before
    /// anything calls `dlopen`: the libraries mapped then are the ones the
    /// dynamic loader never unloads. Elsewhere than on Linux it finds
    /// nothing.
    pub fn record() -> io::Result<Self> {
        if !SUPPORTED {
            return Ok(Self::default());
        }
        let maps = read_proc("/proc/self/maps")?;
        Ok(Self::from_maps(&maps))
    }

    /// `true` when nothing was recorded (not Linux, or no code mapping).
    pub fn is_empty(&self) -> bool {
        self.mappings.is_empty()
    }

    /// The recorded mappings of the files among `text` (the format of
    /// `/proc/PID/maps`) that have an executable mapping.
    fn from_maps(text: &str) -> Self {
        let entries: Vec<Entry> = text.lines().filter_map(Entry::parse).collect();
        let code_files: Vec<(u64, u64)> = entries
            .iter()
            .filter(|e| e.mapping.inode != 0 && e.executable)
            .map(|e| (e.mapping.dev, e.mapping.inode))
            .collect();
        let mappings = entries
            .iter()
            .filter(|e| {
                e.private && !e.writable && code_files.contains(&(e.mapping.dev, e.mapping.inode))
            })
            .map(|e| e.mapping)
            .collect();
        Self { mappings }
    }

    /// Drops the resident pages of every recorded mapping that is unchanged
    /// and holds none of the process's own pages (see the module's
    /// documentation); the code that runs next maps its pages again.
    ///
    /// It reads `/proc/self/smaps`, which walks the process's page tables:
    /// well under a millisecond for a small server, but blocking I/O, so
    /// call it off an async runtime's workers.
    pub fn release(&self) -> io::Result<Released> {
        let mut released = Released::default();
        if self.mappings.is_empty() {
            return Ok(released);
        }
        let smaps = read_proc("/proc/self/smaps")?;
        for (mapping, usage) in self.current(&smaps) {
            let Some(rss) = usage else {
                released.skipped += 1;
                continue;
            };
            if rss == 0 {
                continue;
            }
            if drop_pages(mapping).is_ok() {
                released.mappings += 1;
                released.bytes += rss;
            } else {
                released.skipped += 1;
            }
        }
        Ok(released)
    }

    /// Each recorded mapping found unchanged in `smaps`, with its resident
    /// bytes when all of them are unwritten and unlocked (`None` otherwise).
    fn current(&self, smaps: &str) -> Vec<(Mapping, Option<u64>)> {
        let mut found = Vec::new();
        let mut entry: Option<(Entry, Usage)> = None;
        let mut finish = |entry: Option<(Entry, Usage)>| {
            if let Some((e, usage)) = entry
                && e.private
                && !e.writable
                && self.mappings.contains(&e.mapping)
            {
                found.push((e.mapping, usage.clean_rss()));
            }
        };
        for line in smaps.lines() {
            if let Some(header) = Entry::parse(line) {
                finish(entry.replace((header, Usage::default())));
            } else if let Some((_, usage)) = entry.as_mut() {
                usage.read(line);
            }
        }
        finish(entry);
        found
    }
}

/// The fields of a `/proc/self/smaps` entry that decide whether its pages
/// may be dropped, in KiB; `None` when the entry did not give them.
#[derive(Debug, Default)]
struct Usage {
    rss: Option<u64>,
    anonymous: Option<u64>,
    locked: Option<u64>,
}

impl Usage {
    fn read(&mut self, line: &str) {
        let Some((key, value)) = line.split_once(':') else {
            return;
        };
        let slot = match key {
            "Rss" => &mut self.rss,
            "Anonymous" => &mut self.anonymous,
            "Locked" => &mut self.locked,
            _ => return,
        };
        *slot = value
            .trim()
            .strip_suffix("kB")
            .and_then(|kib| kib.trim().parse().ok());
    }

    /// The resident bytes, when none is the process's own or locked.
    fn clean_rss(&self) -> Option<u64> {
        match (self.rss, self.anonymous, self.locked) {
            (Some(rss), Some(0), Some(0) | None) => rss.checked_mul(1024),
            _ => None,
        }
    }
}

/// A line of `/proc/PID/maps`, or the first line of an entry of
/// `/proc/PID/smaps`: `START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    mapping: Mapping,
    writable: bool,
    executable: bool,
    private: bool,
}

impl Entry {
    fn parse(line: &str) -> Option<Self> {
        let mut fields = line.split_ascii_whitespace();
        let (start, end) = fields.next()?.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        let perms = fields.next()?.as_bytes();
        let [_, w, x, p] = *perms else {
            return None;
        };
        let _offset = fields.next()?;
        let (major, minor) = fields.next()?.split_once(':')?;
        let dev =
            (u64::from_str_radix(major, 16).ok()? << 32) | u64::from_str_radix(minor, 16).ok()?;
        let inode = fields.next()?.parse().ok()?;
        (start < end).then_some(Self {
            mapping: Mapping {
                start,
                end,
                dev,
                inode,
            },
            writable: w == b'w',
            executable: x == b'x',
            private: p == b'p',
        })
    }
}

/// Reads a procfs file of the process whole, up to [`MAX_PROC_FILE`].
fn read_proc(path: &str) -> io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_PROC_FILE + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_PROC_FILE {
        return Err(io::Error::other(format!(
            "{path} is longer than {MAX_PROC_FILE} bytes"
        )));
    }
    Ok(text)
}

#[cfg(target_os = "linux")]
fn drop_pages(mapping: Mapping) -> io::Result<()> {
    crate::sys::drop_unwritten_file_pages(mapping.start, mapping.end - mapping.start)
}

#[cfg(not(target_os = "linux"))]
fn drop_pages(_mapping: Mapping) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0a0000000-55d0a0100000 r--p 00000000 fd:01 1234 /usr/bin/skills
55d0a0100000-55d0a0900000 r-xp 00100000 fd:01 1234 /usr/bin/skills
55d0a0900000-55d0a0970000 r--p 00900000 fd:01 1234 /usr/bin/skills
55d0a0970000-55d0a0978000 rw-p 00970000 fd:01 1234 /usr/bin/skills
55d0a1000000-55d0a1100000 rw-p 00000000 00:00 0 [heap]
7f0000000000-7f0000100000 r--p 00000000 fd:01 99 /data/catalog file.bin
7f0000200000-7f0000228000 r--p 00000000 fd:01 555 /usr/lib/libc.so.6 (deleted)
7f0000228000-7f00003bd000 r-xp 00028000 fd:01 555 /usr/lib/libc.so.6 (deleted)
7f00003bd000-7f00003be000 r--s 00000000 00:05 77 /dev/shm/shared
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0 [vdso]
";

    fn smaps(entries: &[(&str, u64, u64, u64)]) -> String {
        let mut text = String::new();
        for (header, rss, anonymous, locked) in entries {
            text.push_str(header);
            text.push('\n');
            text.push_str(&format!(
                "Size:                 64 kB\nRss:            {rss:8} kB\nPss:                  64 kB\n\
                 Anonymous:      {anonymous:8} kB\nLocked:         {locked:8} kB\nVmFlags: rd ex mr mw me\n"
            ));
        }
        text
    }

    #[test]
    fn keeps_the_read_only_private_mappings_of_files_with_code() {
        let recorded = CodeMappings::from_maps(MAPS);
        let starts: Vec<usize> = recorded.mappings.iter().map(|m| m.start).collect();
        assert_eq!(
            starts,
            [
                0x55d0a0000000,
                0x55d0a0100000,
                0x55d0a0900000,
                0x7f0000200000,
                0x7f0000228000
            ],
            "not the writable data, the heap, a data file, a shared mapping or the vDSO"
        );
    }

    #[test]
    fn drops_only_unchanged_mappings_without_private_pages() {
        let recorded = CodeMappings::from_maps(MAPS);
        let text = smaps(&[
            (
                "55d0a0000000-55d0a0100000 r--p 00000000 fd:01 1234 /usr/bin/skills",
                256,
                0,
                0,
            ),
            (
                "55d0a0100000-55d0a0900000 r-xp 00100000 fd:01 1234 /usr/bin/skills",
                3000,
                0,
                0,
            ),
            // Relocated tables: written before they were made read-only.
            (
                "55d0a0900000-55d0a0970000 r--p 00900000 fd:01 1234 /usr/bin/skills",
                448,
                448,
                0,
            ),
            // Another file now at the addresses of the C library's first mapping.
            (
                "7f0000200000-7f0000228000 r--p 00000000 fd:01 556 /usr/lib/other.so",
                64,
                0,
                0,
            ),
            // Locked.
            (
                "7f0000228000-7f00003bd000 r-xp 00028000 fd:01 555 /usr/lib/libc.so.6",
                900,
                0,
                900,
            ),
            (
                "7f0000000000-7f0000100000 r--p 00000000 fd:01 99 /data/catalog file.bin",
                64,
                0,
                0,
            ),
        ]);
        let current = recorded.current(&text);
        assert_eq!(
            current
                .iter()
                .map(|(m, rss)| (m.start, *rss))
                .collect::<Vec<_>>(),
            [
                (0x55d0a0000000, Some(256 * 1024)),
                (0x55d0a0100000, Some(3000 * 1024)),
                (0x55d0a0900000, None),
                (0x7f0000228000, None),
            ]
        );
    }

    #[test]
    fn an_entry_without_its_fields_is_never_dropped() {
        let recorded = CodeMappings::from_maps(MAPS);
        let text =
            "55d0a0100000-55d0a0900000 r-xp 00100000 fd:01 1234 /usr/bin/skills\nRss: 12 kB\n";
        assert_eq!(recorded.current(text), [(recorded.mappings[1], None)]);
    }

    #[test]
    fn malformed_lines_are_ignored() {
        for line in [
            "",
            "zz-10 r-xp 0 fd:01 1 /x",
            "10-20 r-x 0 fd:01 1 /x",
            "20-10 r-xp 0 fd:01 1 /x",
            "10-20 r-xp 0 fd01 1 /x",
            "10-20 r-xp 0 fd:01 one /x",
        ] {
            assert!(Entry::parse(line).is_none(), "{line:?}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn releases_the_code_of_this_test_binary_and_it_still_runs() {
        let recorded = CodeMappings::record().expect("/proc/self/maps");
        assert!(!recorded.is_empty());
        let released = recorded.release().expect("/proc/self/smaps");
        assert!(released.mappings > 0, "{released:?}");
        assert!(released.bytes > 0, "{released:?}");
        // Only the code run since (this test's, reading smaps) came back.
        let smaps = read_proc("/proc/self/smaps").expect("/proc/self/smaps");
        let resident: u64 = recorded
            .current(&smaps)
            .iter()
            .filter_map(|(_, rss)| *rss)
            .sum();
        assert!(resident < released.bytes, "{resident} of {released:?}");
        // The relocated tables were passed over: a call through a vtable and
        // a formatted string read through them still work.
        let shown: Box<dyn std::fmt::Display> = Box::new(42_u32);
        assert_eq!(format!("{shown} {}", "text"), "42 text");
        assert!(recorded.release().is_ok());
    }
}
