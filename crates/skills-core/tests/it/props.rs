//! Property tests: render determinism, parser robustness, path safety, catalog
//! shape and budgets.

use proptest::prelude::*;
use skills_core::{
    Budget, BudgetLimit, Catalog, CatalogFormat, Extensions, Mode, Origin, RenderOptions,
    ResourcePath, SkillMetadata, ValidationOptions, define_skill, estimate_tokens, parse_skill_md,
    parse_skill_md_bytes,
};

const FORMATS: [CatalogFormat; 3] = [
    CatalogFormat::Xml,
    CatalogFormat::Markdown,
    CatalogFormat::Json,
];

/// Metadata through `define_skill`, optionally hidden from the catalog.
fn metadata(name: &str, description: &str, hidden: bool) -> SkillMetadata {
    let mut extensions = Extensions::default();
    extensions.disable_model_invocation = hidden;
    define_skill(name, description)
        .extensions(extensions)
        .build()
        .expect("generated skills are valid")
        .skill()
        .metadata
        .clone()
}

/// Every rendering this suite compares: three formats, several budgets.
fn render_all(catalog: &Catalog) -> Vec<String> {
    let budgets = [
        Budget::unlimited(),
        Budget::chars(900),
        Budget::tokens(200),
        Budget::unlimited().with_description_cap(24),
        Budget::chars(1_500).with_description_cap(60),
    ];
    let mut out = Vec::new();
    for format in FORMATS {
        for budget in budgets {
            out.push(
                catalog.render(
                    &RenderOptions::default()
                        .with_format(format)
                        .with_budget(budget),
                ),
            );
        }
    }
    out
}

/// Skill names: ASCII and some non-ASCII letters, no leading/trailing/double hyphen.
fn name_strategy() -> impl Strategy<Value = String> {
    "[a-zé日][a-z0-9é日]{0,6}(-[a-z0-9ü]{1,5}){0,2}"
}

/// Descriptions that survive `define_skill`: non-blank, at most 1024 characters.
fn description_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z][A-Za-z ,.<>&\"'\n\t-]{0,150}",
        any::<String>().prop_filter("non-blank", |s| !s.trim().is_empty()),
    ]
}

/// A set of distinct skills (name, description, hidden).
fn skills_strategy(max: usize) -> impl Strategy<Value = Vec<(String, String, bool)>> {
    proptest::collection::btree_map(
        name_strategy(),
        (description_strategy(), proptest::bool::weighted(0.15)),
        1..max,
    )
    .prop_map(|m| m.into_iter().map(|(n, (d, h))| (n, d, h)).collect())
}

/// Text that looks enough like a `SKILL.md` to reach the YAML parser.
fn skill_md_like() -> impl Strategy<Value = String> {
    let yamlish = proptest::collection::vec(
        prop_oneof![
            Just("name: ".to_owned()),
            Just("description: ".to_owned()),
            Just("metadata:\n  ".to_owned()),
            Just("allowed-tools: ".to_owned()),
            Just("disable-model-invocation: true".to_owned()),
            Just("context: fork".to_owned()),
            Just("---".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("  ".to_owned()),
            Just("\t".to_owned()),
            Just("- ".to_owned()),
            Just("&a ".to_owned()),
            Just("*a".to_owned()),
            Just("!!str ".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("[".to_owned()),
            Just("]".to_owned()),
            Just(": ".to_owned()),
            Just("\"".to_owned()),
            Just("'".to_owned()),
            Just("|".to_owned()),
            Just(">-".to_owned()),
            Just("# ".to_owned()),
            Just("\0".to_owned()),
            Just("\u{feff}".to_owned()),
            "[a-zé日-]{1,8}",
            any::<String>(),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat());
    (yamlish, any::<String>(), proptest::bool::ANY).prop_map(|(fm, body, bom)| {
        format!(
            "{}---\n{fm}\n---\n{body}",
            if bom { "\u{feff}" } else { "" }
        )
    })
}

fn check_outcome_consistency(outcome: &skills_core::ParseOutcome) -> Result<(), TestCaseError> {
    let has_error = outcome.diagnostics.iter().any(|d| d.is_error());
    prop_assert_eq!(
        outcome.document.is_some(),
        !has_error,
        "{:?}",
        outcome.diagnostics
    );
    prop_assert_eq!(outcome.is_valid(), !has_error);
    for d in &outcome.diagnostics {
        prop_assert_eq!(d.file.as_deref(), Some("x/SKILL.md"));
    }
    Ok(())
}

const ORIGIN: Origin<'static> = Origin::new(Some("x/SKILL.md"), None);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// (a) Any order of the same skills renders to the same bytes, in every format
    /// and budget; rendering twice gives the same bytes.
    #[test]
    fn render_is_order_independent(
        (skills, shuffled) in skills_strategy(30)
            .prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle()))
    ) {
        let build = |list: &[(String, String, bool)]| {
            Catalog::new(list.iter().map(|(n, d, h)| metadata(n, d, *h)))
        };
        let a = build(&skills);
        let b = build(&shuffled);
        prop_assert_eq!(a.fingerprint(), b.fingerprint());
        let first = render_all(&a);
        prop_assert_eq!(&first, &render_all(&b));
        prop_assert_eq!(&first, &render_all(&a));
    }

    /// (a) The same, with skills parsed from `SKILL.md` text.
    #[test]
    fn parsed_skills_render_order_independent(
        (skills, shuffled) in proptest::collection::btree_set(name_strategy(), 1..12)
            .prop_map(|names| names.into_iter().enumerate().map(|(i, n)| {
                format!(
                    "---\nname: {n}\ndescription: >-\n  Skill number {i} does <things> & \"stuff\".\n  Use it {i} times.\n---\nBody {i}.\n"
                )
            }).collect::<Vec<_>>())
            .prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle()))
    ) {
        let build = |list: &[String]| {
            Catalog::new(list.iter().map(|src| {
                parse_skill_md(src, Origin::default(), &ValidationOptions::strict())
                    .document
                    .expect("valid")
                    .metadata
            }))
        };
        prop_assert_eq!(render_all(&build(&skills)), render_all(&build(&shuffled)));
    }

    /// (d) For arbitrary descriptions the XML catalog has exactly one closing tag and
    /// one line per visible skill.
    #[test]
    fn xml_catalog_shape(skills in skills_strategy(20)) {
        let catalog = Catalog::new(skills.iter().map(|(n, d, h)| metadata(n, d, *h)));
        let visible: Vec<&str> = skills
            .iter()
            .filter(|(_, _, h)| !h)
            .map(|(n, _, _)| n.as_str())
            .collect();
        let out = catalog.render(&RenderOptions::default());
        if visible.is_empty() {
            prop_assert_eq!(out, "");
            return Ok(());
        }
        prop_assert_eq!(out.matches("</available_skills>").count(), 1, "{}", out);
        prop_assert_eq!(out.matches("<available_skills>").count(), 1, "{}", out);
        let lines: Vec<&str> = out.lines().collect();
        let open = lines.iter().position(|l| *l == "<available_skills>").expect("open tag");
        let close = lines.iter().position(|l| *l == "</available_skills>").expect("close tag");
        let entries = &lines[open + 1..close];
        prop_assert_eq!(entries.len(), visible.len(), "{}", out);
        prop_assert_eq!(close, lines.len() - 1, "nothing after the closing tag: {}", out);
        for line in entries {
            prop_assert!(line.starts_with("<skill name=\""), "{}", line);
            prop_assert!(line.ends_with("</skill>"), "{}", line);
            prop_assert_eq!(line.matches("</skill>").count(), 1, "{}", line);
            prop_assert!(!line.contains(['\r', '\u{85}', '\u{2028}', '\u{2029}']), "{:?}", line);
        }
        // `Catalog::new` sorts by name; the rendering follows.
        let mut sorted = visible.clone();
        sorted.sort_unstable();
        for (line, name) in entries.iter().zip(&sorted) {
            let expected = format!("<skill name=\"{name}\">");
            prop_assert!(line.starts_with(&expected), "{}", line);
        }
    }

    /// (e) With a character budget, the output never exceeds it once the smallest
    /// possible rendering (frame plus the note naming every skill) fits.
    /// XML and Markdown; JSON is [`json_budget_is_respected`].
    #[test]
    fn char_budget_is_respected(
        skills in skills_strategy(60),
        format in proptest::sample::select(vec![CatalogFormat::Xml, CatalogFormat::Markdown]),
        position in 0.0f64..=1.0,
        cap in proptest::option::of(1usize..80),
    ) {
        let catalog = Catalog::new(skills.iter().map(|(n, d, h)| metadata(n, d, *h)));
        check_budget(&catalog, format, false, position, cap)?;
    }

    /// (e) The same for the default token estimate.
    #[test]
    fn token_budget_is_respected(
        skills in skills_strategy(60),
        format in proptest::sample::select(vec![CatalogFormat::Xml, CatalogFormat::Markdown]),
        position in 0.0f64..=1.0,
        cap in proptest::option::of(1usize..80),
    ) {
        let catalog = Catalog::new(skills.iter().map(|(n, d, h)| metadata(n, d, *h)));
        check_budget(&catalog, format, true, position, cap)?;
    }

    /// (e) JSON, characters and tokens.
    #[test]
    fn json_budget_is_respected(
        skills in skills_strategy(60),
        position in 0.0f64..=1.0,
        tokens in proptest::bool::ANY,
        cap in proptest::option::of(1usize..80),
    ) {
        let catalog = Catalog::new(skills.iter().map(|(n, d, h)| metadata(n, d, *h)));
        check_budget(&catalog, CatalogFormat::Json, tokens, position, cap)?;
    }
}

/// Checks a budget chosen at `position` (0.0 = the smallest rendering, 1.0 = the
/// full one): the output fits, and a budget that fits everything leaves nothing
/// out. Below the smallest rendering, names alone may still fit.
fn check_budget(
    catalog: &Catalog,
    format: CatalogFormat,
    tokens: bool,
    position: f64,
    cap: Option<usize>,
) -> Result<(), TestCaseError> {
    let limit = |max| {
        if tokens {
            BudgetLimit::Tokens(max)
        } else {
            BudgetLimit::Chars(max)
        }
    };
    let cost: fn(&str) -> usize = if tokens {
        estimate_tokens
    } else {
        |s| s.chars().count()
    };
    let render = |max| {
        catalog.render(
            &RenderOptions::default()
                .with_format(format)
                .with_budget(Budget::new(Some(limit(max)), cap)),
        )
    };
    let smallest = render(0);
    let full = render(usize::MAX);
    if full.is_empty() {
        prop_assert_eq!(render(1), "");
        return Ok(());
    }
    let (low, high) = (cost(&smallest), cost(&full));
    // Truncation is intended: the budget is a whole number.
    let max = low + ((high.saturating_sub(low)) as f64 * position) as usize;
    let out = render(max);
    if high <= max {
        prop_assert_eq!(&out, &full, "everything fits: nothing is left out");
    } else {
        prop_assert!(
            cost(&out) <= max,
            "{:?}: rendered {} > {}:\n{}",
            format,
            cost(&out),
            max,
            out
        );
    }
    if low > 0 {
        // Below the rendering that leaves everything out, the catalog either
        // fits (names only are cheaper than the note naming them) or is that
        // rendering.
        let below = render(low - 1);
        prop_assert!(
            below == smallest || cost(&below) < low,
            "below the smallest: {}",
            below
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// (b) Arbitrary text never panics, and a document comes back iff there is no
    /// error, in both modes.
    #[test]
    fn parse_never_panics_on_arbitrary_text(src in any::<String>()) {
        for mode in [Mode::Strict, Mode::Lenient] {
            let options = ValidationOptions::default().with_mode(mode);
            check_outcome_consistency(&parse_skill_md(&src, ORIGIN, &options))?;
            check_outcome_consistency(&parse_skill_md_bytes(src.as_bytes(), ORIGIN, &options))?;
        }
    }

    /// (b) The same for text shaped like a `SKILL.md`.
    #[test]
    fn parse_never_panics_on_skill_like_text(src in skill_md_like()) {
        for mode in [Mode::Strict, Mode::Lenient] {
            let options = ValidationOptions::default().with_mode(mode);
            let outcome = parse_skill_md(&src, ORIGIN, &options);
            check_outcome_consistency(&outcome)?;
            prop_assert_eq!(&outcome, &parse_skill_md_bytes(src.as_bytes(), ORIGIN, &options));
        }
    }

    /// (b) Arbitrary bytes (often not UTF-8) never panic.
    #[test]
    fn parse_bytes_never_panics(
        prefix in proptest::option::of(Just(b"---\nname: x\ndescription: ".to_vec())),
        bytes in proptest::collection::vec(any::<u8>(), 0..400),
    ) {
        let mut input = prefix.unwrap_or_default();
        input.extend_from_slice(&bytes);
        for mode in [Mode::Strict, Mode::Lenient] {
            let outcome = parse_skill_md_bytes(&input, ORIGIN, &ValidationOptions::default().with_mode(mode));
            check_outcome_consistency(&outcome)?;
            if std::str::from_utf8(&input).is_err() {
                prop_assert_eq!(outcome.diagnostics.len(), 1);
                prop_assert_eq!(outcome.diagnostics[0].code.as_str(), "not-utf8");
                prop_assert!(outcome.diagnostics[0].line.is_some());
            }
        }
    }

    /// (c) A path `ResourcePath::parse` accepts never has a `..` component, a
    /// leading `/`, a backslash or NUL.
    #[test]
    fn resource_path_refuses_escapes(
        leading in proptest::option::of(prop_oneof![Just("/"), Just("\\"), Just("C:"), Just("//")]),
        parts in proptest::collection::vec(
            (
                prop_oneof![
                    4 => "[a-zA-Z0-9_é -][a-zA-Z0-9_.é -]{0,6}",
                    2 => Just("..".to_owned()),
                    1 => Just(".".to_owned()),
                    1 => Just(String::new()),
                    1 => Just("a\0b".to_owned()),
                    1 => Just("..\\..".to_owned()),
                    1 => any::<String>(),
                ],
                prop_oneof![4 => Just("/"), 1 => Just("\\"), 1 => Just("/./"), 1 => Just("\0")],
            ),
            1..6,
        ),
    ) {
        let mut raw = leading.unwrap_or_default().to_owned();
        for (i, (part, sep)) in parts.iter().enumerate() {
            if i > 0 {
                raw.push_str(sep);
            }
            raw.push_str(part);
        }
        check_resource_path(&raw)?;
    }

    /// (c) The same for arbitrary strings.
    #[test]
    fn resource_path_refuses_escapes_arbitrary(raw in any::<String>()) {
        check_resource_path(&raw)?;
    }

    /// (c) Ordinary relative paths are accepted unchanged.
    #[test]
    fn resource_path_accepts_plain_relative_paths(
        parts in proptest::collection::vec("[a-zA-Z0-9_é-][a-zA-Z0-9_.é -]{0,10}", 1..6)
    ) {
        prop_assume!(parts.iter().all(|p| p != "." && p != ".."));
        let raw = parts.join("/");
        let path = ResourcePath::parse(&raw);
        prop_assert!(path.is_ok(), "{:?}: {:?}", raw, path.err().map(|e| e.to_string()));
        let path = path.expect("checked");
        prop_assert_eq!(path.as_str(), raw.as_str());
        prop_assert_eq!(path.components().count(), parts.len());
    }
}

fn check_resource_path(raw: &str) -> Result<(), TestCaseError> {
    match ResourcePath::parse(raw) {
        Ok(path) => {
            prop_assert_eq!(path.as_str(), raw);
            prop_assert!(!raw.split('/').any(|c| c == ".." || c == "."), "{:?}", raw);
            prop_assert!(!raw.starts_with('/'), "{:?}", raw);
            prop_assert!(!raw.contains('\\'), "{:?}", raw);
            prop_assert!(!raw.contains('\0'), "{:?}", raw);
            prop_assert!(!raw.is_empty() && !raw.ends_with('/'), "{:?}", raw);
            prop_assert!(!raw.chars().any(char::is_control), "{:?}", raw);
        }
        Err(err) => prop_assert_eq!(err.kind(), skills_core::ErrorKind::InvalidPath),
    }
    Ok(())
}

/// Renders `catalog` with every character budget from the smallest rendering up to
/// the full one and returns the budgets that were exceeded.
fn char_budget_overruns(catalog: &Catalog, format: CatalogFormat) -> Vec<(usize, usize)> {
    let render = |max| {
        catalog.render(
            &RenderOptions::default()
                .with_format(format)
                .with_budget(Budget::chars(max)),
        )
    };
    let smallest = render(0).chars().count();
    let full = render(usize::MAX).chars().count();
    (smallest..=full)
        .filter_map(|max| {
            let got = render(max).chars().count();
            (got > max).then_some((max, got))
        })
        .collect()
}

/// The budget reserves room for the worst-case "left out" note by picking the
/// longest names; "longest" must be counted in characters, not bytes, or
/// multi-byte names make the reservation too small.
#[test]
fn budget_note_reservation_counts_characters() {
    let mut skills = Vec::new();
    // 20 names of 10 characters but 28 bytes, with short descriptions…
    for c in 'a'..='t' {
        skills.push(metadata(&format!("日日日日日日日日日{c}"), "Short.", false));
    }
    // …and 20 names of 27 characters (27 bytes) that sort first, with long ones.
    for c in 'a'..='t' {
        skills.push(metadata(
            &format!("ascii-name-of-27-chars-xyz{c}"),
            &"A long description. ".repeat(8),
            false,
        ));
    }
    let catalog = Catalog::new(skills);
    for format in [CatalogFormat::Xml, CatalogFormat::Markdown] {
        let overruns = char_budget_overruns(&catalog, format);
        assert!(overruns.is_empty(), "{format:?}: {overruns:?}");
    }
}

/// In JSON the "left out" names are a full array (not the capped note the budget
/// reserves room for), and every entry after the first costs a comma the budget
/// does not count; many skills must still respect the budget.
#[test]
fn json_char_budget_with_many_skills() {
    let catalog = Catalog::new((0..120).map(|i| {
        metadata(
            &format!("skill-{i:03}"),
            &format!("Does task number {i}. Use when the user asks for task {i}."),
            false,
        )
    }));
    let overruns = char_budget_overruns(&catalog, CatalogFormat::Json);
    assert!(
        overruns.is_empty(),
        "{} budgets exceeded, e.g. {:?}",
        overruns.len(),
        &overruns[..overruns.len().min(5)]
    );
}

/// Few skills: only the uncounted commas.
#[test]
fn json_char_budget_with_few_skills() {
    let catalog = Catalog::new((0..12).map(|i| metadata(&format!("s{i:02}"), "d", false)));
    let overruns = char_budget_overruns(&catalog, CatalogFormat::Json);
    assert!(overruns.is_empty(), "{overruns:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// (f) With random tiers and priorities and a character budget: `off` and
    /// `manual` skills never appear, pinned ones always appear whole, entries
    /// stay in name order, and the catalog fits unless the report says the
    /// pinned skills alone do not.
    #[test]
    fn tiers_and_priorities_keep_the_budget_rules(
        skills in skills_strategy(40),
        rules in proptest::collection::vec((0usize..6, -3i32..4), 40),
        budget in 0usize..6_000,
        format in proptest::sample::select(FORMATS.to_vec()),
    ) {
        use skills_core::{Tier, VisibilityPolicy};
        let catalog = Catalog::new(skills.iter().map(|(n, d, h)| metadata(n, d, *h)));
        let mut policy = VisibilityPolicy::new();
        for (skill, (tier, priority)) in catalog.entries().iter().zip(&rules) {
            policy.set_tier(skill.name.as_str(), Tier::ALL[*tier]);
            policy.set_priority(skill.name.as_str(), *priority);
        }
        let report = catalog.render_report(
            &RenderOptions::default()
                .with_format(format)
                .with_budget(Budget::chars(budget))
                .with_visibility(policy.clone()),
        );
        let text = &report.text;
        if !report.over_budget {
            prop_assert!(text.chars().count() <= budget, "{} > {budget}", text.chars().count());
        }
        // Positions of the listed names, in output order.
        let mut positions = Vec::new();
        for skill in catalog.entries() {
            let name = skill.name.as_str();
            let tier = policy.tier(skill);
            let marker = match format {
                CatalogFormat::Json => format!("{{\"name\":{}", serde_json::Value::from(name)),
                CatalogFormat::Markdown => format!("- `{name}`"),
                _ => {
                    let mut escaped = String::new();
                    skills_core::escape_xml(&mut escaped, name);
                    format!("<skill name=\"{escaped}\"")
                }
            };
            let at = text.find(&marker);
            if !tier.is_listed() {
                // Each marker ends where the name does, so it is exact.
                prop_assert!(at.is_none(), "{name} ({tier}) is listed:\n{text}");
                continue;
            }
            if tier.is_pinned() {
                prop_assert!(at.is_some(), "pinned {name} missing:\n{text}");
                prop_assert!(!report.shortened.iter().any(|n| n == name));
                prop_assert!(!report.omitted.iter().any(|n| n == name));
            }
            if let Some(at) = at {
                positions.push(at);
            }
        }
        prop_assert!(positions.windows(2).all(|w| w[0] < w[1]), "not in name order:\n{text}");
    }
}
