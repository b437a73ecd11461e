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
