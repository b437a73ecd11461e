//! Diagnostic logging on standard error: off unless `-v` or `RUST_LOG` asks.
//!
//! The libraries emit `tracing` spans and events (I/O steps, refusals); they
//! never install a subscriber. The binary installs one `tracing-subscriber` fmt
//! layer writing to standard error, so results on standard output stay clean.

use std::io::{self, IsTerminal as _};

use tracing_subscriber::EnvFilter;

/// The crates whose events `-v` turns on.
const OUR_CRATES: &[&str] = &[
    "skills",
    "skills_core",
    "skills_fs",
    "skills_agent",
    "skills_cli",
];

/// The filter for `verbose` (the number of `-v` flags) and the value of
/// `RUST_LOG`; `None` when logging stays off.
///
/// `-v` shows `debug` events of the skills crates, `-vv` (or more) `trace`;
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
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(io::stderr().is_terminal())
        .try_init();
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
        assert_eq!(filter(5, None), filter(2, None));
    }
}
