//! Diagnostic logging on standard error: off unless `-v` or `RUST_LOG` asks.
//!
//! The libraries emit `tracing` spans and events (I/O steps, refusals); they
//! never install a subscriber. The binary installs one `tracing-subscriber` fmt
//! layer writing to standard error, so results on standard output stay clean.
//!
//! Events come from every thread: the main thread, tokio's workers and its
//! blocking pool. None of them may wait for another to log, so the layer does
//! not write through [`io::stderr()`], whose process-wide lock the CLI's own
//! messages take too (a thread holding it while it waits for a worker that is
//! logging would wait forever). It writes each event, formatted whole, with
//! one `write` to its own duplicate of file descriptor 2 ([`log_writer`]).

use std::io::{self, IsTerminal as _};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::fmt::writer::BoxMakeWriter;

/// The crates whose events `-v` turns on.
const OUR_CRATES: &[&str] = &[
    "skills",
    "skills_agent",
    "skills_cli",
    "skills_core",
    "skills_exec",
    "skills_fs",
    "skills_mcp",
    "skills_models",
    "skills_sandbox",
    "skills_store",
    "skills_workspace",
];

/// The filter for `verbose` (the number of `-v` flags) and the value of
/// `RUST_LOG`; `None` when logging stays off.
///
/// `-v` shows `debug` events of the skills crates, `-vv` (or more) `trace`
/// (and a line per finished span);
/// other crates log warnings only. Without `-v`, a non-empty `RUST_LOG` is used
/// as an `EnvFilter` directive string.
pub(crate) fn filter(verbose: u8, rust_log: Option<&str>) -> Option<String> {
    let level = match verbose {
        0 => return rust_log.filter(|v| !v.trim().is_empty()).map(str::to_owned),
        1 => "debug",
        _ => "trace",
    };
    let mut directives = vec!["warn".to_owned()];
    directives.extend(OUR_CRATES.iter().map(|c| format!("{c}={level}")));
    Some(directives.join(","))
}

/// Installs the stderr subscriber when [`filter`] says so. A `RUST_LOG` that
/// does not parse is reported once and logging stays off.
pub(crate) fn init(verbose: u8) {
    let rust_log = std::env::var("RUST_LOG").ok();
    let Some(directives) = filter(verbose, rust_log.as_deref()) else {
        return;
    };
    let filter = match EnvFilter::builder().parse(&directives) {
        Ok(filter) => filter,
        Err(err) => {
            eprintln!(
                "warning: RUST_LOG is not a valid filter ({}); logging stays off",
                crate::text::line(&err.to_string())
            );
            return;
        }
    };
    // At trace level, a finished span also prints a line with its busy and
    // idle time: the libraries put their I/O steps in spans.
    let spans = if filter.max_level_hint() == Some(LevelFilter::TRACE) {
        FmtSpan::CLOSE
    } else {
        FmtSpan::NONE
    };
    let _ = tracing_subscriber::fmt()
        .with_span_events(spans)
        .with_env_filter(filter)
        .with_writer(log_writer())
        .with_ansi(io::stderr().is_terminal())
        .try_init();
}

/// Where log events go: standard error, written without `io::stderr()`'s lock.
///
/// A duplicate of fd 2 as a `File`: `&File` writes straight to the descriptor,
/// and the fmt layer hands it each event as one buffer. Where the descriptor
/// cannot be duplicated (closed, or not Unix), events go through
/// `io::stderr()` as before.
fn log_writer() -> BoxMakeWriter {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd as _;
        if let Ok(fd) = io::stderr().as_fd().try_clone_to_owned() {
            return BoxMakeWriter::new(std::sync::Arc::new(std::fs::File::from(fd)));
        }
    }
    BoxMakeWriter::new(io::stderr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_by_default() {
        assert_eq!(filter(0, None), None);
        assert_eq!(filter(0, Some("  ")), None);
    }

    #[test]
    fn rust_log_is_used_without_v() {
        assert_eq!(
            filter(0, Some("skills_fs=trace")).as_deref(),
            Some("skills_fs=trace")
        );
    }

    #[test]
    fn v_levels() {
        let one = filter(1, Some("ignored")).unwrap_or_default();
        assert!(one.starts_with("warn,"), "{one}");
        assert!(one.contains("skills_fs=debug"), "{one}");
        let two = filter(2, None).unwrap_or_default();
        assert!(two.contains("skills_core=trace"), "{two}");
        for c in [
            "skills_exec",
            "skills_workspace",
            "skills_sandbox",
            "skills_models",
        ] {
            assert!(two.contains(&format!("{c}=trace")), "{two}");
        }
        assert_eq!(filter(5, None), filter(2, None));
    }
}
