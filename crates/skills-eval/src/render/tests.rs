#![allow(clippy::unwrap_used)]

use super::common::one_line;
use super::*;
use crate::compare::compare;
use crate::outputs::OutputReport;
use crate::queries::Split;
use crate::triggers::TriggerReport;

/// One query result as JSON.
#[allow(clippy::too_many_arguments)]
fn query(
    text: &str,
    skill: Option<&str>,
    should: bool,
    split: &str,
    triggered: u32,
    loaded: &str,
    none: u32,
    errors: u32,
    messages: &str,
    passed: bool,
) -> String {
    let loaded_runs: u32 = serde_json::from_str::<std::collections::BTreeMap<String, u32>>(loaded)
        .unwrap()
        .values()
        .sum();
    let runs = loaded_runs + none + errors;
    let completed = runs - errors;
    let rate = if completed == 0 {
        "null".to_owned()
    } else {
        format!("{}", f64::from(triggered) / f64::from(completed))
    };
    format!(
        r#"{{"query":{},"skill":{},"should_trigger":{should},"split":"{split}","runs":{runs},
            "triggered":{triggered},"loaded":{loaded},"none":{none},"errors":{errors},"timeouts":0,
            "error_messages":{messages},"trigger_rate":{rate},"passed":{passed}}}"#,
        serde_json::to_string(text).unwrap(),
        serde_json::to_string(&skill).unwrap(),
    )
}

fn report(queries: &[String]) -> TriggerReport {
    let text = format!(
        r#"{{"model":"test-model","runs_per_query":3,"threshold":0.5,"catalog":["docx","pdf"],
            "queries":[{}],
            "usage":{{"requests":12,"input_tokens":4000,"output_tokens":120,"cache_read_tokens":1000,"cache_creation_tokens":0}},
            "retries":1,"elapsed_ms":4250}}"#,
        queries.join(",")
    );
    TriggerReport::from_json(&text).unwrap()
}

fn sample() -> TriggerReport {
    report(&[
        query(
            "fill in this PDF form",
            Some("pdf"),
            true,
            "train",
            3,
            r#"{"pdf":3}"#,
            0,
            0,
            "[]",
            true,
        ),
        query(
            "merge two PDFs",
            Some("pdf"),
            true,
            "validation",
            1,
            r#"{"pdf":1,"docx":1}"#,
            1,
            0,
            "[]",
            false,
        ),
        query(
            "write a letter in Word",
            Some("docx"),
            true,
            "train",
            3,
            r#"{"docx":3}"#,
            0,
            0,
            "[]",
            true,
        ),
        query(
            "what is 2+2",
            None,
            false,
            "validation",
            1,
            r#"{"pdf":1}"#,
            1,
            1,
            r#"["rate limited"]"#,
            false,
        ),
    ])
}

#[test]
fn a_small_trigger_table_reads_exactly_so() {
    let expected = "\
Trigger eval: model test-model, 3 run(s) per query, threshold 50.0%, split all
Queries: 2 passed, 2 failed

skill  queries  trigger rate  false-trigger  precision  recall  failed
-----  -------  ------------  -------------  ---------  ------  ------
docx         1  100.0% (3/3)              -      75.0%  100.0%       0
pdf          2   66.7% (4/6)              -      80.0%   66.7%       1

Failing queries (2):
  - pdf, should trigger, triggered 33.3% (1/3): \"merge two PDFs\"
      loaded: (none) ×1, docx ×1, pdf ×1
  - (no skill), should not trigger, triggered 50.0% (1/2): \"what is 2+2\"
      loaded: (none) ×1, pdf ×1
      failed runs: 1 error(s), 0 timeout(s); first: rate limited

Confusions (expected skill -> loaded instead):
  pdf -> (none) ×1
  pdf -> docx   ×1

Cost of the whole eval: 12 request(s), 4000 input token(s) (25.0% from cache), 120 output token(s), 1 retry, 4.2 s elapsed
";
    assert_eq!(trigger_table(&sample(), None), expected);
}

#[test]
fn the_split_narrows_the_table() {
    let train = trigger_table(&sample(), Some(Split::Train));
    assert!(
        train.contains("split train\nQueries: 2 passed, 0 failed\n"),
        "{train}"
    );
    assert!(train.contains("Failing queries: none\n"), "{train}");
    assert!(train.contains("Confusions: none\n"), "{train}");
    let validation = trigger_table(&sample(), Some(Split::Validation));
    assert!(validation.contains("split validation\nQueries: 0 passed, 2 failed\n"));
    assert!(!validation.contains("docx         1"), "{validation}");
}

#[test]
fn rates_without_runs_show_a_dash() {
    // Only a should-not-trigger query about pdf: no trigger rate, no recall,
    // and nothing loaded it: no precision.
    let r = report(&[query(
        "convert this to markdown",
        Some("pdf"),
        false,
        "train",
        0,
        "{}",
        3,
        0,
        "[]",
        true,
    )]);
    let table = trigger_table(&r, None);
    let row = table.lines().find(|l| l.starts_with("pdf")).unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["pdf", "1", "-", "0.0%", "(0/3)", "-", "-", "0"]
    );
    assert!(trigger_html(&r, None).contains("<td>-</td>"));
}

#[test]
fn long_and_multi_line_text_stays_on_one_clipped_line() {
    let long = format!("first line\nsecond\tline\r\n\u{1b}[31m{}", "é".repeat(200));
    let r = report(&[query(
        &long,
        Some("pdf"),
        true,
        "train",
        0,
        "{}",
        3,
        0,
        "[]",
        false,
    )]);
    let table = trigger_table(&r, None);
    let line = table.lines().find(|l| l.contains("first line")).unwrap();
    assert!(
        line.contains("\"first line second line \u{fffd}[31mééé"),
        "{line}"
    );
    assert!(line.ends_with("…\""), "{line}");
    assert!(!table.contains('\u{1b}') && !table.contains('\r') && !table.contains('\t'));
    assert!(!table.contains("\nsecond"));
    // 80 characters at most, the ellipsis included.
    let quoted = line.split('"').nth(1).unwrap();
    assert_eq!(quoted.chars().count(), 80);

    assert_eq!(one_line("  a \n\n b  ", 80), "a b");
    assert_eq!(one_line("abcdef", 4), "abc…");
    assert_eq!(one_line("abcd", 4), "abcd");
    assert_eq!(one_line("ab\u{202e}cd", 80), "ab\u{fffd}cd");
    assert_eq!(one_line("", 80), "");
    assert_eq!(one_line("abc", 0), "…");
}

#[test]
fn html_escapes_every_piece_of_text() {
    let evil = "<script>alert('x')</script> & \"quoted\"";
    let r = report(&[
        query(
            evil,
            Some("pdf"),
            true,
            "train",
            0,
            r#"{"<b>docx</b>":3}"#,
            0,
            0,
            "[]",
            false,
        ),
        query(
            "fine",
            Some("pdf"),
            true,
            "train",
            3,
            r#"{"pdf":3}"#,
            0,
            0,
            "[]",
            true,
        ),
    ]);
    let page = trigger_html(&r, Some(&compare(&sample(), &r, None)));
    assert!(page.starts_with("<!doctype html>\n<html lang=\"en\">"));
    assert!(page.contains("<title>Trigger eval: test-model</title>"));
    assert!(!page.contains("<script"), "{page}");
    assert!(!page.contains("<b>docx"));
    assert!(
        page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quoted&quot;")
    );
    assert!(page.contains("&lt;b&gt;docx&lt;/b&gt; ×3"));
    for id in ["rates", "failing", "confusions", "comparison"] {
        assert_eq!(
            page.matches(&format!("<table id=\"{id}\"")).count(),
            1,
            "{id}"
        );
    }
    // No script, no external resource.
    assert!(!page.contains("src=") && !page.contains("href=") && !page.contains("@import"));
    assert!(page.ends_with("</body></html>\n"));
}

#[test]
fn the_trigger_page_has_a_row_and_a_bar_per_skill() {
    let page = trigger_html(&sample(), None);
    assert_eq!(page.matches("data-skill=").count(), 2);
    assert!(page.contains(
        "<tr data-skill=\"pdf\"><td>pdf</td><td>2</td><td><div class=\"rate\"><div style=\"width:66.7%\"></div></div>66.7% (4/6)</td>"
    ), "{page}");
    assert!(!page.contains("id=\"comparison\""));
    // Two failing queries, two confusions.
    let failing = page.split("<table id=\"failing\">").nth(1).unwrap();
    let failing = failing.split("</table>").next().unwrap();
    assert_eq!(failing.matches("<tr>").count(), 3);
    assert!(failing.contains("1 error(s), 0 timeout(s): rate limited"));
}

#[test]
fn comparison_deltas_are_signed_percentage_points() {
    let before = sample();
    let after = report(&[
        query(
            "fill in this PDF form",
            Some("pdf"),
            true,
            "train",
            1,
            r#"{"pdf":1}"#,
            2,
            0,
            "[]",
            false,
        ),
        query(
            "merge two PDFs",
            Some("pdf"),
            true,
            "validation",
            3,
            r#"{"pdf":3}"#,
            0,
            0,
            "[]",
            true,
        ),
        query(
            "write a letter in Word",
            Some("docx"),
            true,
            "train",
            3,
            r#"{"docx":3}"#,
            0,
            0,
            "[]",
            true,
        ),
        query(
            "what is 2+2",
            None,
            false,
            "validation",
            1,
            r#"{"pdf":1}"#,
            1,
            1,
            r#"["rate limited"]"#,
            false,
        ),
    ]);
    let c = compare(&before, &after, None);
    let table = comparison_table(&c);
    let pdf = table.lines().find(|l| l.starts_with("pdf")).unwrap();
    // pdf trigger rate 4/6 -> 4/6 (0.0 pp); precision 4/5 -> 4/5.
    assert!(pdf.contains("66.7% -> 66.7%"), "{pdf}");
    let docx = table.lines().find(|l| l.starts_with("docx")).unwrap();
    // docx precision 3/4 -> 3/3: +25.0 pp.
    assert!(
        docx.contains("75.0% -> 100.0%") && docx.contains("+25.0 pp"),
        "{docx}"
    );
    assert!(
        table.contains("Queries passed: 2 -> 2, failed: 2 -> 2\n"),
        "{table}"
    );
    assert!(
        table
            .contains("Fixed (1):\n  - pdf, should trigger, 33.3% -> 100.0%: \"merge two PDFs\"\n"),
        "{table}"
    );
    assert!(
        table.contains(
            "Broke (1):\n  - pdf, should trigger, 100.0% -> 33.3%: \"fill in this PDF form\"\n"
        ),
        "{table}"
    );

    // And the other way round: the sign flips.
    let back = comparison_table(&compare(&after, &before, None));
    let docx = back.lines().find(|l| l.starts_with("docx")).unwrap();
    assert!(
        docx.contains("100.0% -> 75.0%") && docx.contains("-25.0 pp"),
        "{docx}"
    );

    let page = trigger_html(&after, Some(&c));
    assert!(
        page.contains("<td class=\"better\">+25.0 pp</td>"),
        "{page}"
    );
    assert_eq!(page.matches("<tr class=\"skill\">").count(), 2);
    assert_eq!(page.matches("<tr class=\"fixed\">").count(), 1);
    assert_eq!(page.matches("<tr class=\"broke\">").count(), 1);
}

#[test]
fn percentage_points_round_and_never_show_minus_zero() {
    use super::common::pp;
    assert_eq!(pp(Some(0.125)), "+12.5 pp");
    assert_eq!(pp(Some(-0.03)), "-3.0 pp");
    assert_eq!(pp(Some(-0.00001)), "0.0 pp");
    assert_eq!(pp(None), "-");
    assert_eq!(pp(Some(f64::NAN)), "-");
}

#[test]
fn empty_and_damaged_reports_render_without_panicking() {
    let empty = report(&[]);
    let table = trigger_table(&empty, None);
    assert!(table.contains("Queries: 0 passed, 0 failed\n\nNo query about a skill.\n"));
    let _ = trigger_table(&empty, Some(Split::Validation));
    let _ = trigger_html(&empty, Some(&compare(&empty, &empty, Some(Split::Train))));
    let _ = comparison_table(&compare(&empty, &empty, None));

    // Counts that do not add up, and huge ones: the report's own arithmetic
    // would overflow; the renderers clamp first.
    let damaged = TriggerReport::from_json(
        r#"{"model":"","runs_per_query":0,"threshold":7.5,"catalog":[],
            "queries":[
              {"query":"","skill":"a","should_trigger":true,"split":"train","runs":1,"triggered":4294967295,
               "loaded":{"a":4294967295},"none":4294967295,"errors":9,"timeouts":9,"error_messages":[""],
               "trigger_rate":1e300,"passed":false},
              {"query":"x","skill":"a","should_trigger":false,"split":"validation","runs":4294967295,"triggered":4294967295,
               "loaded":{"a":4294967295},"none":0,"errors":0,"timeouts":4294967295,"error_messages":[],
               "trigger_rate":-1.0,"passed":true},
              {"query":"y","skill":"b","should_trigger":true,"split":"train","runs":1,"triggered":5,
               "loaded":{"b":5},"none":0,"errors":0,"timeouts":0,"error_messages":[],
               "trigger_rate":5.0,"passed":true}],
            "usage":{"requests":18446744073709551615,"input_tokens":18446744073709551615,"output_tokens":18446744073709551615,
                     "cache_read_tokens":18446744073709551615,"cache_creation_tokens":0},
            "retries":18446744073709551615,"elapsed_ms":18446744073709551615}"#,
    )
    .unwrap();
    let table = trigger_table(&damaged, None);
    assert!(table.contains("triggered -: \"\"\n"), "{table}");
    let page = trigger_html(&damaged, Some(&compare(&empty, &empty, None)));
    // A share above 1 draws a full bar, no more.
    assert!(
        page.contains("<div style=\"width:100.0%\"></div></div>500.0% (5/1)"),
        "{page}"
    );
    assert!(page.lines().all(|l| l.len() < 2000));

    let empty_out: OutputReport = serde_json::from_str(
        r#"{"skill_name":"","model":"","grader":null,"runs_per_case":0,"runs":[],
            "usage":{"requests":0,"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_creation_tokens":0},
            "elapsed_ms":0}"#,
    )
    .unwrap();
    let table = output_table(&empty_out);
    assert!(
        table.contains("0 passed, 0 failed, 0 not checked; pass rate -\n"),
        "{table}"
    );
    assert!(table.contains("No case runs.\n"));
    let page = output_html(&empty_out);
    assert!(page.contains("<table id=\"runs\">") && page.contains("<table id=\"failed-checks\">"));
}

fn outputs() -> OutputReport {
    let run = |id: &str, name: &str, n: u32, expectations: &str, error: &str| {
        format!(
            r#"{{"eval_id":"{id}","eval_name":{name},"prompt":"p","run_number":{n},"answer":"a",
                "expectations":{expectations},"error":{error},"timed_out":false,"tool_calls":{{}},
                "tool_errors":0,"steps":2,"retries":0,
                "usage":{{"requests":2,"input_tokens":1000,"output_tokens":234,"cache_read_tokens":0,"cache_creation_tokens":0}},
                "duration_ms":12345,"grader_duration_ms":5}}"#
        )
    };
    let ok = r#"{"text":"contains \"Total\"","kind":"contains","passed":true,"evidence":"found in the answer"}"#;
    let bad = r#"{"text":"file out/<report>.pdf exists","kind":"file_exists","passed":false,"evidence":"out/<report>.pdf does not exist\nat all"}"#;
    let llm = r#"{"text":"the tone is polite","kind":"llm","passed":null,"evidence":"not checked: a statement needs a grader model"}"#;
    let text = format!(
        r#"{{"skill_name":"pdf","model":"test-model","grader":null,"runs_per_case":2,"runs":[{},{},{}],
            "usage":{{"requests":6,"input_tokens":3000,"output_tokens":702,"cache_read_tokens":0,"cache_creation_tokens":0}},
            "elapsed_ms":30000}}"#,
        run("1", r#""fill form""#, 1, &format!("[{ok},{llm}]"), "null"),
        run(
            "1",
            r#""fill form""#,
            2,
            &format!("[{ok},{bad},{llm}]"),
            "null"
        ),
        run(
            "<2>",
            "null",
            1,
            "[]",
            r#""the model failed:\n<overloaded>""#
        ),
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_output_table_lists_runs_failed_checks_and_the_grader_note() {
    let table = output_table(&outputs());
    assert!(
        table.starts_with(
            "Output eval: skill pdf, model test-model, no grader, 2 run(s) per case\n\
         Checks: 2 passed, 1 failed, 2 not checked; pass rate 66.7%\n"
        ),
        "{table}"
    );
    assert!(table.contains(
        "\ncase           run  result  passed  failed  not checked    time  tokens  error\n\
         -------------  ---  ------  ------  ------  -----------  ------  ------  ------------------------------\n\
         1 (fill form)    1  ok           1       0            1  12.3 s    1234  -\n\
         1 (fill form)    2  failed       1       1            1  12.3 s    1234  -\n\
         <2>              1  error        0       0            0  12.3 s    1234  the model failed: <overloaded>\n"
    ), "{table}");
    assert!(table.contains(
        "Failed checks (1):\n  - case 1 run 2: file out/<report>.pdf exists\n      evidence: out/<report>.pdf does not exist at all\n"
    ), "{table}");
    assert!(
        table.contains("give --grader MODEL to check 2 statement(s)"),
        "{table}"
    );
    assert!(!table.contains("Not checked ("), "{table}");
}

#[test]
fn the_output_page_has_a_row_per_run_and_escapes() {
    let page = output_html(&outputs());
    assert!(page.starts_with("<!doctype html>\n<html lang=\"en\">"));
    assert!(page.contains("<title>Output eval: pdf</title>"));
    assert_eq!(page.matches("data-eval=").count(), 3);
    assert_eq!(page.matches("data-run=").count(), 3);
    assert!(page.contains("<tr data-eval=\"1\" data-run=\"2\">"));
    assert!(page.contains("<tr data-eval=\"&lt;2&gt;\" data-run=\"1\">"));
    assert!(!page.contains("<2>") && !page.contains("<report>") && !page.contains("<overloaded>"));
    let failed = page.split("<table id=\"failed-checks\">").nth(1).unwrap();
    assert_eq!(failed.matches("<tr>").count(), 2);
    assert!(failed.contains("out/&lt;report&gt;.pdf does not exist\nat all"));
    assert!(page.contains("to check 2 statement(s)"));

    // With a grader, no note; what it could not check is listed as such.
    let mut graded = outputs();
    graded.grader = Some("judge".to_owned());
    assert!(!output_html(&graded).contains("--grader"));
    let table = output_table(&graded);
    assert!(
        table.contains("grader judge,") && table.contains("Not checked (2):"),
        "{table}"
    );
}

#[test]
fn long_html_text_opens_to_the_rest() {
    let long = "word ".repeat(100);
    let r = report(&[query(
        &long,
        Some("pdf"),
        true,
        "train",
        0,
        "{}",
        3,
        0,
        "[]",
        false,
    )]);
    let page = trigger_html(&r, None);
    assert!(page.contains("<details><summary>"));
    assert!(page.contains(&long));
}

#[test]
fn rendering_is_deterministic() {
    assert_eq!(
        trigger_table(&sample(), None),
        trigger_table(&sample(), None)
    );
    assert_eq!(trigger_html(&sample(), None), trigger_html(&sample(), None));
    assert_eq!(output_html(&outputs()), output_html(&outputs()));
}
