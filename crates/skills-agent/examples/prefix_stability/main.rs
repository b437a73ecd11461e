//! Prefix stability: how much of each model request a prompt cache can reuse.
//!
//! Drives one scripted conversation (6 user turns, 4 skill loads of which one
//! is unknown and one repeats a loaded skill, 2 reads of reference files, and
//! a skill added to the provider mid-session) through two agents over the
//! same provider: the default mode, where a loaded body arrives in the tool
//! result, and the legacy mode, where it sits in a system block. The script
//! runs twice: on the default tool surface (`load_skill`, `read_skill_file`)
//! and on the trpc surface (`skill_load`, `skill_select_docs`), where the
//! load of the skill added mid-session brings one of its docs along (the load
//! with docs) and the following read selects its other doc.
//! Every request is encoded as an OpenAI Chat Completions body and tokenized
//! with o200k (GPT-4o's tokenizer); each row shows the share of the previous
//! request's tokens that is an exact prefix of the next request's tokens.
//! Then it measures what the catalog wrapper costs per skill.
//!
//! Run: `cargo run --release -p skills-agent --example prefix_stability`.
//! Set `PREFIX_STABILITY_DEBUG=1` to print, for every request that does not
//! fully extend the previous one, the token region where the two differ.
//!
//! The last line is always `min default-mode prefix stability: NN.N%`, the
//! minimum over the default-mode steps of both surfaces.

mod scenario;

use skills_core::TokenCounter as _;

use scenario::{Outcome, Share};

/// Tokens shown on each side of the first difference in debug mode.
const DEBUG_CONTEXT: usize = 12;

/// One surface's run and its shares.
struct Measured {
    name: &'static str,
    tools: String,
    outcome: Outcome,
    default: Vec<Share>,
    legacy: Vec<Share>,
}

fn main() {
    let bpe = scenario::tokenizer();
    let runs: Vec<Measured> = scenario::surfaces()
        .into_iter()
        .map(|(name, surface)| {
            let outcome = scenario::run(&surface);
            let (default, legacy) = scenario::measure(&bpe, &outcome);
            let tools = [Some(surface.load_tool()), surface.read_tool()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(", ");
            Measured {
                name,
                tools,
                outcome,
                default,
                legacy,
            }
        })
        .collect();

    println!("Prefix stability of a scripted session (OpenAI Chat Completions JSON, o200k tokens)");
    println!();
    println!("Skills (description words, body words, files):");
    for (name, description, body, files) in scenario::skill_sizes() {
        let files = if files.is_empty() {
            "no files".to_owned()
        } else {
            files.join(", ")
        };
        println!("  {name}: {description}, {body}, {files}");
    }
    println!("  (log-query-builder is added to the provider before turn 6)");
    for run in &runs {
        println!();
        println!("Surface: {} ({})", run.name, run.tools);
        println!();
        print!(
            "{}",
            scenario::table(&run.outcome.steps, &run.default, &run.legacy)
        );
    }
    println!();

    // The stable block differs between the surfaces only in the load tool's
    // name in the guardrail sentence (the test checks this); measure it once.
    let first = &runs[0].outcome;
    let overhead = scenario::catalog_overhead(&bpe, &first.stable_system, &first.pinned);
    println!(
        "Catalog wrapper: {} skills; skill lines {} tokens, names + descriptions alone {} \
         tokens; wrapper {:.1} tokens per skill on average, {} at most (target <= 15)",
        overhead.skills,
        overhead.line_tokens,
        overhead.content_tokens,
        overhead.per_skill(),
        overhead.max_per_skill
    );
    println!(
        "Fixed catalog cost: {} tokens (guardrail sentence {} tokens, plus the \
         <available_skills> frame); instructions {} tokens; whole stable block {} tokens",
        overhead.fixed_tokens,
        overhead.guardrail_tokens,
        overhead.instruction_tokens,
        overhead.block_tokens
    );
    for run in &runs {
        println!(
            "Tool definitions, {} surface ({}): {} tokens",
            run.name,
            scenario::tool_names(&run.outcome.tools_json).join(", "),
            bpe.count(&run.outcome.tools_json)
        );
    }

    if std::env::var_os("PREFIX_STABILITY_DEBUG").is_some() {
        for run in &runs {
            println!();
            let default = run.outcome.default_bodies();
            let legacy = run.outcome.legacy_bodies();
            debug_regions(
                &bpe,
                &format!("{} default", run.name),
                &default,
                &run.default,
            );
            debug_regions(&bpe, &format!("{} legacy", run.name), &legacy, &run.legacy);
        }
    }

    let min = runs
        .iter()
        .flat_map(|run| &run.default)
        .filter_map(|s| s.percent)
        .fold(f64::INFINITY, f64::min);
    println!();
    println!("min default-mode prefix stability: {min:.1}%");
}

/// Prints where each request stops extending the previous one.
fn debug_regions(bpe: &scenario::O200k, mode: &str, bodies: &[&str], shares: &[Share]) {
    for (i, share) in shares.iter().enumerate().skip(1) {
        let previous = scenario::tokens(bpe, bodies[i - 1]);
        let current = scenario::tokens(bpe, bodies[i]);
        let at = share.common;
        let lost = previous.len() - at;
        let bytes_ok = bodies[i - 1]
            .strip_suffix("]}")
            .is_some_and(|head| bodies[i].starts_with(head));
        println!(
            "[{mode}] step {}: common prefix {at} of {} previous tokens ({lost} lost); \
             JSON byte extension: {bytes_ok}",
            i + 1,
            previous.len()
        );
        let from = at.saturating_sub(DEBUG_CONTEXT);
        let show = |tokens: &[u32]| {
            let end = (at + DEBUG_CONTEXT).min(tokens.len());
            let text = |part: &[u32]| {
                String::from_utf8_lossy(&bpe.bpe().decode_bytes(part).unwrap_or_default())
                    .into_owned()
            };
            let head = text(&tokens[from..at]);
            let tail = text(&tokens[at..end]);
            format!("{head:?} | {tail:?}")
        };
        println!("    previous: {}", show(&previous));
        println!("    next:     {}", show(&current));
    }
}
