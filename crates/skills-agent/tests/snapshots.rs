//! Snapshot tests of everything the model sees from `skills-agent`: every
//! skill tool's result text in every preset, the tool specs of every preset,
//! and whole requests (and their wire bodies) after each step of a short
//! conversation.
//!
//! One test binary; the modules live in `tests/snap/`. Snapshots are in
//! `tests/snapshots/` as plain `.txt` files compared byte for byte, trailing
//! newlines included (regenerate with
//! `UPDATE_SNAPSHOTS=1 cargo test -p skills-agent --test snapshots` and
//! review `git diff`: the texts are the model's view).

mod snap;
