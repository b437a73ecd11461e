//! The search index (F-DIS-12): ranking sanity, tie order, determinism across
//! insertion orders, tokens, bounds and hidden skills.

use proptest::prelude::*;
use skills_core::{Catalog, Skill};
use skills_core::{
    FieldWeights, MAX_QUERY_TERMS, SearchDocument, SearchField, SearchHit, SearchIndex,
    SearchOptions, search_tokens as tokens,
};

use super::support::{FIXTURE_SKILLS, fixture_metadata, in_code};

fn names(hits: &[SearchHit]) -> Vec<&str> {
    hits.iter().map(|h| h.name.as_str()).collect()
}

/// Filler skills so document frequencies look like a real library.
fn filler(n: usize) -> Vec<SearchDocument> {
    (0..n)
        .map(|i| {
            SearchDocument::new(
                format!("filler-{i:03}"),
                "Summarizes meeting notes into action items. Use for meeting recaps.",
            )
            .with_body("Read the notes, list decisions, owners and dates.")
        })
        .collect()
}

#[test]
fn name_match_beats_body_match() {
    let mut docs = filler(20);
    docs.push(SearchDocument::new(
        "pdf-tools",
        "Handles portable documents.",
    ));
    docs.push(
        SearchDocument::new("report-writer", "Writes quarterly reports.")
            .with_body("Export the final report as a PDF and attach it."),
    );
    let hits = SearchIndex::build(docs).search("pdf", 10);
    assert_eq!(names(&hits), ["pdf-tools", "report-writer"]);
    assert_eq!(hits[0].fields, [SearchField::Name]);
    assert_eq!(hits[1].fields, [SearchField::Body]);
    assert!(hits[0].score > hits[1].score);
}

#[test]
fn description_beats_references() {
    let mut docs = filler(20);
    docs.push(SearchDocument::new(
        "alpha",
        "Fills invoice forms for accounting.",
    ));
    docs.push(
        SearchDocument::new("beta", "Keeps the ledger balanced.")
            .with_reference("references/guide.md", "Sometimes an invoice needs a fix."),
    );
    let hits = SearchIndex::build(docs).search("invoice", 10);
    assert_eq!(names(&hits), ["alpha", "beta"]);
    assert_eq!(hits[0].fields, [SearchField::Description]);
    assert_eq!(hits[1].fields, [SearchField::References]);
}

#[test]
fn field_weights_are_configurable() {
    let docs = || {
        let mut docs = filler(5);
        docs.push(SearchDocument::new("alpha", "Fills invoice forms."));
        docs.push(
            SearchDocument::new("beta", "Keeps the ledger.")
                .with_reference("references/guide.md", "Invoice fixes."),
        );
        docs
    };
    let weights = FieldWeights {
        references: 10.0,
        description: 0.1,
        ..FieldWeights::default()
    };
    let index = SearchIndex::build_with(docs(), SearchOptions::default().with_weights(weights));
    assert_eq!(names(&index.search("invoice", 10)), ["beta", "alpha"]);

    let off = FieldWeights {
        references: 0.0,
        ..FieldWeights::default()
    };
    let index = SearchIndex::build_with(docs(), SearchOptions::default().with_weights(off));
    assert_eq!(names(&index.search("invoice", 10)), ["alpha"]);
}

#[test]
fn exact_compound_name_ranks_first() {
    let index = SearchIndex::build([
        SearchDocument::new("pdf-tools", "Reads documents."),
        SearchDocument::new("pdf-viewer", "Shows documents with tools."),
        SearchDocument::new("tools", "Lists tools."),
    ]);
    assert_eq!(index.search("pdf-tools", 10)[0].name, "pdf-tools");
    assert_eq!(index.search("PDF_Tools", 10)[0].name, "pdf-tools");
    // A query for one part still finds both hyphenated names.
    assert_eq!(names(&index.search("pdf", 10)), ["pdf-tools", "pdf-viewer"]);
}

#[test]
fn ties_break_by_name() {
    let docs = ["zeta", "alpha", "mid", "beta"]
        .map(|n| SearchDocument::new(n, "Converts spreadsheets to charts."));
    let index = SearchIndex::build(docs);
    let hits = index.search("spreadsheets", 10);
    assert_eq!(names(&hits), ["alpha", "beta", "mid", "zeta"]);
    assert!(hits.windows(2).all(|w| w[0].score == w[1].score));
    // The limit keeps the first names of a tie.
    assert_eq!(names(&index.search("spreadsheets", 2)), ["alpha", "beta"]);
    assert!(index.search("spreadsheets", 0).is_empty());
}

#[test]
fn duplicate_names_keep_the_first() {
    let index = SearchIndex::build([
        SearchDocument::new("same", "Talks about apples."),
        SearchDocument::new("same", "Talks about pears."),
    ]);
    assert_eq!(index.len(), 1);
    assert_eq!(names(&index.search("apples", 5)), ["same"]);
    assert!(index.search("pears", 5).is_empty());
}

#[test]
fn unicode_terms() {
    assert_eq!(tokens("CAFÉ Straße ΣΟΦΙΑ"), ["café", "straße", "σοφια"]);
    // NFD input and the fullwidth form match NFC text (NFKC).
    assert_eq!(tokens("cafe\u{301}"), ["café"]);
    assert_eq!(tokens("ＰＤＦ"), ["pdf"]);
    assert_eq!(tokens("日本語のテキスト"), ["日本語のテキスト"]);

    let index = SearchIndex::build([
        SearchDocument::new("café-menu", "Plans a café menu with seasonal dishes."),
        SearchDocument::new("straße", "Routen für die Straße."),
        SearchDocument::new("plain", "Nothing here."),
    ]);
    assert_eq!(names(&index.search("Cafe\u{301}", 10)), ["café-menu"]);
    assert_eq!(names(&index.search("STRASSE straße", 10)), ["straße"]);
    assert_eq!(names(&index.search("café-menu", 10)), ["café-menu"]);
}

#[test]
fn stop_words_and_plurals() {
    assert_eq!(
        tokens("The state-of-the-art tools for you"),
        ["state-of-the-art", "state", "art", "tool"]
    );
    assert_eq!(tokens("does this"), Vec::<String>::new());
    let index = SearchIndex::build([
        SearchDocument::new("tables", "Extracts a table from the page."),
        SearchDocument::new("other", "Something else entirely."),
    ]);
    assert!(index.search("the and of with", 10).is_empty());
    assert_eq!(names(&index.search("the tables", 10)), ["tables"]);
    assert_eq!(names(&index.search("table", 10)), ["tables"]);
}

#[test]
fn empty_and_huge_queries() {
    let mut docs = filler(3);
    docs.push(SearchDocument::new("target", "Finds needles."));
    let index = SearchIndex::build(docs);
    assert!(index.search("", 10).is_empty());
    assert!(index.search("   \n\t-_- ...", 10).is_empty());
    assert!(index.search("unknownword", 10).is_empty());
    assert!(SearchIndex::default().search("anything", 10).is_empty());

    // Past the term cap, further terms are ignored.
    let mut huge: String = (0..MAX_QUERY_TERMS).map(|i| format!("w{i} ")).collect();
    huge.push_str("needles");
    assert!(index.search(&huge, 10).is_empty());
    // A long query of the same word is fine (and bounded in bytes).
    let repeated = "meeting ".repeat(200_000);
    let hits = index.search(&repeated, 10);
    assert_eq!(hits.len(), 3);
    assert!(hits.iter().all(|h| h.score.is_finite() && h.score > 0.0));
}

#[test]
fn hidden_skills_are_excluded_by_default() {
    // The fixture set has `deploy-prod` with `disable-model-invocation: true`.
    let metadata = fixture_metadata(&[0, 1, 2, 3, 4, 5]);
    let catalog = Catalog::new(metadata.clone());
    let docs = || catalog.entries().iter().map(SearchDocument::from_metadata);
    let index = SearchIndex::build(docs());
    assert_eq!(index.len(), FIXTURE_SKILLS.len() - 1);
    assert!(index.search("deploy production", 10).is_empty());

    let all = SearchIndex::build_with(docs(), SearchOptions::default().with_include_hidden(true));
    assert_eq!(all.len(), FIXTURE_SKILLS.len());
    assert_eq!(names(&all.search("deploy production", 10)), ["deploy-prod"]);

    // The catalog's visible set and the index agree.
    let rendered = catalog.render(&Default::default());
    for name in index.names() {
        assert!(rendered.contains(&format!("\"{name}\"")), "{name}");
    }
}

#[test]
fn from_skill_indexes_the_body_and_references() {
    let skill: Skill = in_code("notes", "Keeps notes.", "Use the zettelkasten method.")
        .skill()
        .clone();
    let doc = SearchDocument::from_skill(&skill)
        .with_references([("references/linking.md", "Backlinks connect ideas.")]);
    let index = SearchIndex::build([doc, SearchDocument::new("other", "Unrelated.")]);
    assert_eq!(
        index.search("zettelkasten", 5)[0].fields,
        [SearchField::Body]
    );
    let hit = &index.search("backlinks linking", 5)[0];
    assert_eq!(hit.name, "notes");
    assert_eq!(hit.fields, [SearchField::References]);
}

#[test]
fn hits_serialize() {
    let index = SearchIndex::build([SearchDocument::new("pdf-tools", "Reads PDFs.")]);
    let json = serde_json::to_value(index.search("pdf", 1)).expect("serializes");
    assert_eq!(json[0]["name"], "pdf-tools");
    assert_eq!(
        json[0]["fields"],
        serde_json::json!(["name", "description"])
    );
}

const VOCAB: &[&str] = &[
    "pdf", "tables", "invoice", "chart", "notes", "deploy", "review", "api", "café", "the",
    "forms", "report", "merge", "git", "diff", "résumé",
];

fn text(words: &[usize]) -> String {
    words
        .iter()
        .map(|&i| VOCAB[i % VOCAB.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn arb_docs() -> impl Strategy<Value = Vec<SearchDocument>> {
    prop::collection::btree_map(
        "[a-z]{1,6}(-[a-z]{1,4})?",
        (
            prop::collection::vec(0usize..64, 0..12),
            prop::collection::vec(0usize..64, 0..40),
            prop::collection::vec(0usize..64, 0..20),
            any::<bool>(),
        ),
        1..24,
    )
    .prop_map(|map| {
        map.into_iter()
            .map(|(name, (d, b, r, hidden))| {
                SearchDocument::new(name, text(&d))
                    .with_body(text(&b))
                    .with_reference("references/r.md", text(&r))
                    .with_hidden(hidden)
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn any_permutation_gives_identical_hits(
        docs in arb_docs(),
        seed in any::<u64>(),
        query in prop::collection::vec(0usize..64, 0..6),
        include_hidden in any::<bool>(),
    ) {
        let options = SearchOptions::default().with_include_hidden(include_hidden);
        let mut shuffled = docs.clone();
        // Fisher–Yates with a tiny LCG from the seed.
        let mut state = seed | 1;
        for i in (1..shuffled.len()).rev() {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let j = usize::try_from(state >> 33).unwrap_or(0) % (i + 1);
            shuffled.swap(i, j);
        }
        let a = SearchIndex::build_with(docs, options);
        let b = SearchIndex::build_with(shuffled, options);
        // Query word order does not matter either.
        let q = text(&query);
        let mut reversed = query.clone();
        reversed.reverse();
        let hits = a.search(&q, 50);
        let bits = |hits: &[SearchHit]| -> Vec<(String, u64, Vec<SearchField>)> {
            hits.iter().map(|h| (h.name.clone(), h.score.to_bits(), h.fields.clone())).collect()
        };
        prop_assert_eq!(bits(&hits), bits(&b.search(&q, 50)));
        prop_assert_eq!(bits(&hits), bits(&a.search(&text(&reversed), 50)));
        for h in &hits {
            prop_assert!(h.score.is_finite() && h.score > 0.0);
        }
        prop_assert!(hits.windows(2).all(|w| w[0].score > w[1].score
            || (w[0].score == w[1].score && w[0].name < w[1].name)));
        // A smaller limit is a prefix of a larger one.
        let top = a.search(&q, 3);
        prop_assert_eq!(bits(&top), bits(&hits[..hits.len().min(3)]));
    }
}
