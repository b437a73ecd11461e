//! The `Tools:` section of a skill body (F-FMT-5).
//!
//! A skill may declare the host tools it needs:
//!
//! ```text
//! Tools:
//! - get_weather
//! - search_city   # trailing comments are ignored
//! # - old_api     (a commented-out line)
//! ```
//!
//! The heading is matched case-insensitively and may be a Markdown heading
//! (`## Tools` or `## Tools:`). Items are `-` or `*` list lines; blank lines and
//! lines starting with `#` inside the list are skipped; the first other line ends
//! the section. Only the first such section counts. Lines inside fenced code blocks
//! are ignored.

/// Parses the tool names declared in `body`, in order, without duplicates.
pub fn declared_tools(body: &str) -> Vec<String> {
    let mut tools: Vec<String> = Vec::new();
    // A section starts at a heading reading `tools`: a body without the word
    // has none, told without splitting it into lines.
    if !mentions_tools(body) {
        return tools;
    }
    let mut in_section = false;
    let mut in_fence = false;
    for line in body.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            if in_section {
                break;
            }
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if !in_section {
            in_section = is_heading(trimmed);
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some(item) = trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
        else {
            break;
        };
        let item = match item.find('#') {
            Some(i) => &item[..i],
            None => item,
        }
        .trim()
        .trim_matches('`');
        if !item.is_empty() && !tools.iter().any(|t| t == item) {
            tools.push(item.to_owned());
        }
    }
    tools
}

/// Whether `text` contains `tools` in any ASCII case. Compares every
/// position in blocks without stopping inside one, which the compiler turns
/// into vector code: a fraction of the cost of walking the lines.
fn mentions_tools(text: &str) -> bool {
    const WORD: [u8; 5] = *b"tools";
    const BLOCK: usize = 256;
    let bytes = text.as_bytes();
    let Some(starts) = bytes.len().checked_sub(WORD.len() - 1) else {
        return false;
    };
    let mut from = 0;
    while from < starts {
        let to = (from + BLOCK).min(starts);
        let len = to - from;
        // `x | 0x20` equals a lowercase ASCII letter only for that letter in
        // either case.
        let at = |k: usize| &bytes[from + k..from + k + len];
        let (t, o1, o2, l, s) = (at(0), at(1), at(2), at(3), at(4));
        let mut hit = false;
        for i in 0..len {
            hit |= ((t[i] | 0x20) == WORD[0])
                & ((o1[i] | 0x20) == WORD[1])
                & ((o2[i] | 0x20) == WORD[2])
                & ((l[i] | 0x20) == WORD[3])
                & ((s[i] | 0x20) == WORD[4]);
        }
        if hit {
            return true;
        }
        from = to;
    }
    false
}

fn is_heading(line: &str) -> bool {
    let text = line.trim_start_matches('#').trim();
    let text = text.strip_suffix(':').unwrap_or(text).trim_end();
    let is_markdown_heading = line.starts_with('#');
    text.eq_ignore_ascii_case("tools") && (is_markdown_heading || line.ends_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_word_in_any_case_and_place() {
        let filler = "x".repeat(300);
        for text in [
            "tools",
            "TOOLS",
            "ToOlS",
            "a Tools:",
            "tool",
            "tools!",
            "",
            "tool s",
            "t\u{f4}ols",
        ] {
            let expected = text.to_ascii_lowercase().contains("tools");
            assert_eq!(mentions_tools(text), expected, "{text:?}");
            // Across block edges.
            for cut in [250, 253, 254, 255, 256, 257] {
                let long = format!("{}{text}{filler}", &filler[..cut]);
                assert_eq!(mentions_tools(&long), expected, "{cut} {text:?}");
            }
        }
        assert!(declared_tools("Intro\n\nSee these ToOls.\n").is_empty());
    }

    #[test]
    fn parses_items_and_skips_comments() {
        let body = "Intro\n\nTools:\n- get_weather\n- search_city  # note\n# comment\n# - old_api\n\n* `forecast`\n- get_weather\nOverview\n- not_a_tool\n";
        assert_eq!(
            declared_tools(body),
            vec!["get_weather", "search_city", "forecast"]
        );
    }

    #[test]
    fn heading_forms() {
        assert_eq!(declared_tools("## TOOLS\n- a\n"), vec!["a"]);
        assert_eq!(declared_tools("tools:\n- a\n"), vec!["a"]);
        assert!(declared_tools("Tools are great\n- a\n").is_empty());
        assert!(declared_tools("no section\n- a\n").is_empty());
    }

    #[test]
    fn ignores_fenced_examples() {
        let body = "```\nTools:\n- fake\n```\nTools:\n- real\n";
        assert_eq!(declared_tools(body), vec!["real"]);
    }
}
