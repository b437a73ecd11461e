//! Reports people read: terminal tables and self-contained HTML pages for
//! trigger evals ([`trigger_table`], [`trigger_html`]), for a trigger report
//! set against a baseline ([`comparison_table`], and the `comparison`
//! table of [`trigger_html`]), and for output evals ([`output_table`],
//! [`output_html`]).
//!
//! Everything here is pure: a report in, a `String` out, no I/O, no clock,
//! no environment. The output is deterministic (byte-stable for the same
//! report) and never panics, whatever the report holds: reports may be
//! read back from JSON written by other versions or by hand, so counts are
//! clamped before any arithmetic, and user text (queries, messages,
//! evidence) is cleaned of control characters. Tables clip it to one line;
//! pages escape it.
//!
//! The HTML pages have no script and load nothing: inline CSS only. Hooks
//! for tests and tools: on the trigger page, `table#rates` has one
//! `tr[data-skill]` per skill (no other row of the page carries
//! `data-skill`), then `table#failing`, `table#confusions` and, with a
//! comparison, `table#comparison` (per skill `tr.skill`, per flipped query
//! `tr.fixed` or `tr.broke`); on the output page, `table#runs` has one
//! `tr[data-eval][data-run]` per case run (no other row carries them), then
//! `table#failed-checks`.

mod common;
mod html;
mod text;

#[cfg(test)]
mod tests;

pub use html::{output_html, trigger_html};
pub use text::{comparison_table, output_table, trigger_table};
