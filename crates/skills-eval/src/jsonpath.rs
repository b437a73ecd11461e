//! The small JSON path language of `json_path` checks.
//!
//! Written by hand because a check needs only plain member and index steps:
//! `$`, `.name`, `['any name']`, `[0]` (JSONPath, RFC 9535, without
//! wildcards, slices or filters), or a JSON Pointer (`/a/b/0`, RFC 6901).
//! A full JSONPath crate would add a dependency and a query language to
//! review for no check an author writes.

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Member(String),
    Index(usize),
}

/// A parsed path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JsonPath {
    steps: Vec<Step>,
}

/// Most steps in a path.
const MAX_STEPS: usize = 64;

impl JsonPath {
    /// Parses `$.a.b[0]`, `$['a b']` or `/a/b/0`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let steps = if text.starts_with('/') || text.is_empty() {
            pointer(text)
        } else if let Some(rest) = text.strip_prefix('$') {
            dotted(rest)?
        } else {
            return Err(format!(
                "a bad `path` {text:?}: start with `$` (`$.a.b[0]`) or `/` (`/a/b/0`)"
            ));
        };
        if steps.len() > MAX_STEPS {
            return Err(format!("a bad `path`: more than {MAX_STEPS} steps"));
        }
        Ok(Self { steps })
    }

    /// The value at the path in `value`, if any.
    pub fn find<'a>(&self, value: &'a Value) -> Option<&'a Value> {
        self.steps.iter().try_fold(value, |value, step| match step {
            Step::Member(name) => value.as_object()?.get(name),
            Step::Index(i) => match value {
                Value::Array(items) => items.get(*i),
                // A pointer's number token also names an object's member.
                Value::Object(members) => members.get(&i.to_string()),
                _ => None,
            },
        })
    }
}

fn pointer(text: &str) -> Vec<Step> {
    text.split('/')
        .skip(1)
        .map(|token| {
            let token = token.replace("~1", "/").replace("~0", "~");
            match token.parse::<usize>() {
                // A pointer's number token indexes arrays and names members.
                Ok(_) if token.starts_with('0') && token.len() > 1 => Step::Member(token),
                Ok(i) => Step::Index(i),
                Err(_) => Step::Member(token),
            }
        })
        .collect()
}

fn dotted(mut rest: &str) -> Result<Vec<Step>, String> {
    let bad = |why: &str| format!("a bad `path`: {why}");
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() {
                return Err(bad("an empty member name after `.`"));
            }
            steps.push(Step::Member(name.to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']").ok_or_else(|| bad("`['` without `']`"))?;
            steps.push(Step::Member(after[..end].to_owned()));
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(|| bad("`[` without `]`"))?;
            let index = after[..end]
                .trim()
                .parse::<usize>()
                .map_err(|_| bad("an index is a number (`[0]`)"))?;
            steps.push(Step::Index(index));
            rest = &after[end + 1..];
        } else {
            return Err(bad("expected `.name`, `['name']` or `[0]`"));
        }
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_members_and_indexes_both_ways() {
        let doc = json!({"a": {"b c": [10, {"d": true}]}, "0": "zero"});
        let at = |p: &str| JsonPath::parse(p).ok().and_then(|p| p.find(&doc).cloned());
        assert_eq!(at("$['a']['b c'][1].d"), Some(json!(true)));
        assert_eq!(at("/a/b c/0"), Some(json!(10)));
        assert_eq!(at("$.a.missing"), None);
        assert_eq!(at("$.a['b c'][9]"), None);
        assert_eq!(at("$"), Some(doc.clone()));
        assert_eq!(at(""), Some(doc.clone()));
    }

    #[test]
    fn refuses_what_it_does_not_know() {
        for bad in ["a.b", "$.", "$[x]", "$['a'", "$[1", "$.a..b", "$*"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad}");
        }
    }
}
