//! Alias amplification: every shape that makes a small frontmatter expand into a
//! large tree ends in a `yaml-alias-budget` (lenient) or `yaml-anchor` (strict)
//! diagnostic, with a small outcome and a bounded peak of heap memory.
//!
//! Memory: the built tree is what aliases blow up, and a refused bomb builds none;
//! `bomb_parsing_keeps_the_process_small` also checks the process's peak resident
//! size on Linux (the reproducible whole-process figure is `scripts/alias-rss.sh`).

use skills_core::{Code, Mode, ValidationOptions};
use skills_core::{
    MAX_YAML_EXPANDED_BYTES, MAX_YAML_NODES, YAML_EXPANSION_FACTOR, max_expanded_bytes,
};

use super::support::{codes, parse_in_dir};

fn skill(frontmatter_extra: &str) -> String {
    format!("---\nname: bomb\ndescription: alias amplification\n{frontmatter_extra}---\nbody\n")
}

/// The shape `scripts/alias-rss.sh` measures: one 34 kB scalar, 9 900 references,
/// just under the size and node limits.
fn big_scalar_bomb() -> String {
    let refs = "*a,".repeat(9_899);
    skill(&format!(
        "big: &a {}\ncopies: [{refs}*a]\n",
        "x".repeat(34_000)
    ))
}

/// Checks a bomb is refused in both modes, with one short diagnostic and no skill.
#[track_caller]
fn assert_refused(src: &str, lenient_code: Code) {
    assert!(
        src.len() <= skills_core::DEFAULT_MAX_FRONTMATTER_BYTES,
        "the bomb must fit the frontmatter cap to test the alias budget"
    );
    for (mode, code) in [
        (Mode::Lenient, lenient_code),
        (Mode::Strict, Code::YamlAnchor),
    ] {
        let options = ValidationOptions::default().with_mode(mode);
        let outcome = parse_in_dir(src, "bomb", &options);
        assert!(outcome.document.is_none(), "{mode:?}");
        assert_eq!(
            outcome.diagnostics.len(),
            1,
            "{mode:?}: {:?}",
            codes(&outcome)
        );
        let diag = &outcome.diagnostics[0];
        assert_eq!(diag.code, code, "{mode:?}: {diag}");
        assert!(diag.is_error());
        assert!(diag.line.is_some() && diag.column.is_some(), "{diag}");
        // The outcome stays small: a message and a shortened excerpt.
        let shown = diag.to_string();
        assert!(shown.len() < 1_000, "{mode:?}: {} bytes", shown.len());
    }
}

#[test]
fn budget_constants_are_consistent() {
    assert_eq!(MAX_YAML_EXPANDED_BYTES, 1 << 20);
    assert_eq!(max_expanded_bytes(0), MAX_YAML_EXPANDED_BYTES);
    assert_eq!(max_expanded_bytes(64 * 1024), MAX_YAML_EXPANDED_BYTES);
    assert_eq!(
        max_expanded_bytes(4 << 20),
        (4 << 20) * YAML_EXPANSION_FACTOR
    );
}

#[test]
fn one_big_scalar_referenced_ten_thousand_times() {
    let src = big_scalar_bomb();
    assert_refused(&src, Code::YamlAliasBudget);
    let outcome = parse_in_dir(&src, "bomb", &ValidationOptions::lenient());
    let diag = &outcome.diagnostics[0];
    assert!(diag.message.contains("1048576 bytes"), "{diag}");
    // Located at the first alias past the budget, on the `copies` line.
    assert_eq!(diag.line, Some(5), "{diag}");
}

#[test]
fn a_few_references_to_a_big_scalar_still_load() {
    // 20 copies of 34 kB: 680 kB, under the budget.
    let refs = "*a, ".repeat(19);
    let src = skill(&format!(
        "big: &a {}\ncopies: [{refs}*a]\n",
        "x".repeat(34_000)
    ));
    let outcome = parse_in_dir(&src, "bomb", &ValidationOptions::lenient());
    assert!(outcome.is_valid(), "{:?}", codes(&outcome));
    let doc = outcome.document.expect("loads");
    let copies = &doc.metadata.extra["copies"];
    assert_eq!(copies.as_array().map(Vec::len), Some(20));
}

#[test]
fn nested_billion_laughs_with_few_nodes() {
    // Each level holds four aliases of the one below: 4^k copies of a 30 kB
    // scalar in a few hundred nodes, so the byte budget fires, not the node limit.
    let mut extra = format!("l0: &l0 {}\n", "y".repeat(30_000));
    for k in 1..8 {
        let prev = format!("*l{}", k - 1);
        extra.push_str(&format!("l{k}: &l{k} [{prev}, {prev}, {prev}, {prev}]\n"));
    }
    assert_refused(&skill(&extra), Code::YamlAliasBudget);
}

#[test]
fn classic_billion_laughs_hits_a_budget() {
    let mut extra = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        let items = [prev.as_str(); 10].join(", ");
        extra.push_str(&format!("a{i}: &a{i} [{items}]\n"));
    }
    assert_refused(&skill(&extra), Code::YamlAliasBudget);
}

#[test]
fn a_list_of_aliases_aliased_many_times() {
    // An anchored list of eight 10 kB scalars, then that list aliased 200 times.
    let extra = format!(
        "a: &a {}\nl: &l [*a, *a, *a, *a, *a, *a, *a, *a]\nx: [{}*l]\n",
        "z".repeat(10_000),
        "*l, ".repeat(199)
    );
    assert_refused(&skill(&extra), Code::YamlAliasBudget);
}

#[test]
fn merge_key_shapes_and_mapping_copies() {
    // `<<: *base` in many mappings (merge keys are plain keys here; the mapping is
    // copied whole each time).
    let mut extra = format!(
        "base: &base\n  k1: {}\n  k2: {}\n",
        "m".repeat(12_000),
        "n".repeat(12_000)
    );
    extra.push_str("all:\n");
    for i in 0..600 {
        extra.push_str(&format!("  - {{<<: *base, i: {i}}}\n"));
    }
    assert_refused(&skill(&extra), Code::YamlAliasBudget);
}

#[test]
fn aliased_keys_are_counted() {
    // A 20 kB key copied into many one-entry mappings.
    let extra = format!(
        "k: &k {}\nm: [{}{{*k : 1}}]\n",
        "q".repeat(20_000),
        "{*k : 1}, ".repeat(2_000)
    );
    assert_refused(&skill(&extra), Code::YamlAliasBudget);
}

#[test]
fn many_small_aliases_are_bounded_by_the_node_limit() {
    // 9 000 aliases of a one-character scalar: within both budgets, so it loads.
    let extra = format!("s: &s x\nl: [{}*s]\n", "*s,".repeat(8_999));
    let outcome = parse_in_dir(&skill(&extra), "bomb", &ValidationOptions::lenient());
    assert!(outcome.is_valid(), "{:?}", codes(&outcome));
    // Past the node limit it is refused.
    let extra = format!("s: &s x\nl: [{}*s]\n", "*s,".repeat(MAX_YAML_NODES));
    assert_refused(&skill(&extra), Code::YamlAliasBudget);
}

#[test]
fn a_recursive_alias_is_refused() {
    let outcome = parse_in_dir(
        &skill("a: &a [x, *a]\n"),
        "bomb",
        &ValidationOptions::lenient(),
    );
    assert_eq!(codes(&outcome), ["yaml-invalid"]);
    assert!(
        outcome.diagnostics[0]
            .message
            .contains("cannot contain itself")
    );
}

#[test]
fn a_large_configured_frontmatter_without_aliases_loads() {
    // With the cap raised to 4 MiB, a 2 MiB alias-free frontmatter is under its
    // budget (16 times its size).
    let mut options = ValidationOptions::lenient();
    options.max_frontmatter_bytes = 4 << 20;
    let src = skill(&format!("big: {}\n", "w".repeat(2 << 20)));
    let outcome = parse_in_dir(&src, "bomb", &options);
    assert!(outcome.is_valid(), "{:?}", codes(&outcome));
}

/// The process's peak resident size in bytes (`VmHWM`).
fn peak_rss_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .expect("a VmHWM line");
    kib * 1024
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "reads the peak resident size from /proc/self/status"
)]
fn bomb_parsing_keeps_the_process_small() {
    // Before the byte budget, one parse of this bomb built ~680 MB (the copies,
    // then their JSON form). The peak is process-wide and other tests run beside
    // this one, so the bound is loose but far below one unbounded parse.
    let src = big_scalar_bomb();
    for _ in 0..5 {
        for options in [ValidationOptions::lenient(), ValidationOptions::strict()] {
            let outcome = parse_in_dir(&src, "bomb", &options);
            assert!(outcome.document.is_none());
        }
    }
    let peak = peak_rss_bytes();
    assert!(peak < 256 << 20, "peak resident size {peak} bytes");
}
