//! The workspace layout and the pure path rules every runtime shares.

use crate::error::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};

/// `WORKSPACE_DIR`: the workspace root, as the command sees it.
pub const ENV_WORKSPACE_DIR: &str = "WORKSPACE_DIR";
/// `SKILLS_DIR`: the folder holding the staged skills (`$WORKSPACE_DIR/skills`).
pub const ENV_SKILLS_DIR: &str = "SKILLS_DIR";
/// `WORK_DIR`: scratch space shared by the runs of a session (`$WORKSPACE_DIR/work`).
pub const ENV_WORK_DIR: &str = "WORK_DIR";
/// `OUTPUT_DIR`: where commands put files to hand back (`$WORKSPACE_DIR/out`).
pub const ENV_OUTPUT_DIR: &str = "OUTPUT_DIR";
/// `RUN_DIR`: this run's own folder (`$WORKSPACE_DIR/runs/run_<timestamp>`).
pub const ENV_RUN_DIR: &str = "RUN_DIR";
/// `SKILL_NAME`: the name of the skill being run.
pub const ENV_SKILL_NAME: &str = "SKILL_NAME";

/// The folder of staged skills, relative to the workspace root.
pub const SKILLS_SUBDIR: &str = "skills";
/// The shared scratch folder, relative to the workspace root.
pub const WORK_SUBDIR: &str = "work";
/// Where staged inputs land, relative to the workspace root.
pub const INPUTS_SUBDIR: &str = "work/inputs";
/// The output folder, relative to the workspace root.
pub const OUTPUT_SUBDIR: &str = "out";
/// The folder of per-run folders, relative to the workspace root.
pub const RUNS_SUBDIR: &str = "runs";
/// The scheme of references to files inside a workspace.
pub const WORKSPACE_SCHEME: &str = "workspace://";

/// Normalizes a `/`-separated relative path lexically: drops `.` and empty
/// parts, applies `..`, and refuses absolute paths, NUL bytes, backslashes and
/// any `..` above the start.
pub fn normalize_relative(path: &str) -> WorkspaceResult<String> {
    let escape = |why: &str| {
        WorkspaceError::new(
            WorkspaceErrorKind::PathEscape,
            format!("path {path:?}: {why}"),
        )
    };
    if path.starts_with('/') {
        return Err(escape("absolute paths are not allowed"));
    }
    if path.contains('\0') || path.contains('\\') {
        return Err(escape("NUL bytes and backslashes are not allowed"));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(escape("it leaves the workspace"));
                }
            }
            other => parts.push(other),
        }
    }
    Ok(parts.join("/"))
}

const DIR_VARS: [(&str, &str); 4] = [
    (ENV_WORKSPACE_DIR, ""),
    (ENV_SKILLS_DIR, SKILLS_SUBDIR),
    (ENV_WORK_DIR, WORK_SUBDIR),
    (ENV_OUTPUT_DIR, OUTPUT_SUBDIR),
];

/// Splits a leading `$VAR` or `${VAR}` off `path`: `(VAR, rest)`.
fn leading_var(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix('$')?;
    let (name, after) = if let Some(braced) = rest.strip_prefix('{') {
        let end = braced.find('}')?;
        (&braced[..end], &braced[end + 1..])
    } else {
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (&rest[..end], &rest[end..])
    };
    if !(after.is_empty() || after.starts_with('/')) {
        return None;
    }
    Some((name, after.trim_start_matches('/')))
}

/// Resolves a run's `cwd` to a path relative to the workspace root.
///
/// * `None` or empty: the skill's folder, `skills/<skill>`.
/// * A path starting with `$WORKSPACE_DIR`, `$SKILLS_DIR`, `$WORK_DIR`,
///   `$OUTPUT_DIR` or `$RUN_DIR` (also `${…}`): relative to that folder.
/// * `workspace_root` itself or a path below it (an absolute path a command
///   printed): relative to the root.
/// * Anything else: relative to the skill's folder.
///
/// Any result outside the workspace is an error
/// ([`WorkspaceErrorKind::PathEscape`]), never silently reset.
pub fn resolve_cwd(
    cwd: Option<&str>,
    skill: &str,
    run_dir: &str,
    workspace_root: &str,
) -> WorkspaceResult<String> {
    let cwd = cwd.unwrap_or("").trim();
    let skill_dir = format!("{SKILLS_SUBDIR}/{skill}");
    if cwd.is_empty() {
        return Ok(skill_dir);
    }
    let joined = if let Some((var, rest)) = leading_var(cwd) {
        let base = if var == ENV_RUN_DIR {
            run_dir.to_owned()
        } else if var == ENV_SKILL_NAME {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!("cwd {cwd:?}: $SKILL_NAME is a name, not a folder"),
            ));
        } else if let Some((_, sub)) = DIR_VARS.iter().find(|(v, _)| *v == var) {
            (*sub).to_owned()
        } else {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!(
                    "cwd {cwd:?}: unknown variable ${var}; use $WORKSPACE_DIR, $SKILLS_DIR, $WORK_DIR, $OUTPUT_DIR or $RUN_DIR"
                ),
            ));
        };
        if base.is_empty() {
            rest.to_owned()
        } else {
            format!("{base}/{rest}")
        }
    } else if cwd.starts_with('/') {
        let root = workspace_root.trim_end_matches('/');
        match cwd.strip_prefix(root) {
            Some(rest) if !root.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
                rest.trim_start_matches('/').to_owned()
            }
            _ => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::PathEscape,
                    format!("cwd {cwd:?} is outside the workspace"),
                ));
            }
        }
    } else {
        format!("{skill_dir}/{cwd}")
    };
    normalize_relative(&joined).map_err(|e| {
        WorkspaceError::new(
            WorkspaceErrorKind::PathEscape,
            format!("cwd {cwd:?} leaves the workspace ({})", e.message()),
        )
    })
}

/// Normalizes an output glob to a pattern relative to the workspace root:
/// `$OUTPUT_DIR/x` → `out/x` (likewise the other folder variables),
/// `workspace://x` → `x`; refuses absolute patterns and `..`.
pub fn normalize_output_glob(glob: &str) -> WorkspaceResult<String> {
    let glob = glob.trim();
    let glob = glob.strip_prefix(WORKSPACE_SCHEME).unwrap_or(glob);
    let joined = match leading_var(glob) {
        Some((var, rest)) => match DIR_VARS.iter().find(|(v, _)| *v == var) {
            Some((_, "")) => rest.to_owned(),
            Some((_, sub)) => format!("{sub}/{rest}"),
            None => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    format!("output glob {glob:?}: unknown variable ${var}"),
                ));
            }
        },
        None => glob.to_owned(),
    };
    if joined.split('/').any(|p| p == "..") {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::PathEscape,
            format!("output glob {glob:?} leaves the workspace"),
        ));
    }
    let normalized = normalize_relative(&joined)?;
    if normalized.is_empty() {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            format!("output glob {glob:?} is empty"),
        ));
    }
    Ok(normalized)
}

/// A safe file name for an attachment: the last path part, with every
/// character other than ASCII letters, digits, `.`, `-` and `_` replaced by
/// `_`, leading dots removed, at most 100 bytes; `file` when nothing is left.
pub fn sanitize_file_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut out: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = out.trim_start_matches('.').len();
    out.drain(..out.len() - trimmed);
    out.truncate(100);
    if out.is_empty() || out.chars().all(|c| c == '_') {
        return "file".to_owned();
    }
    out
}

/// `name` made unique against `taken`: `a.txt`, then `a-1.txt`, `a-2.txt`, ….
pub fn dedupe_file_name(name: &str, taken: &dyn Fn(&str) -> bool) -> String {
    if !taken(name) {
        return name.to_owned();
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    let mut n = 1u64;
    loop {
        let candidate = format!("{stem}-{n}{ext}");
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cwd_rules() {
        let r = |c: &str| resolve_cwd(Some(c), "demo", "runs/run_1", "/ws/s1");
        assert_eq!(
            resolve_cwd(None, "demo", "runs/run_1", "/ws").unwrap(),
            "skills/demo"
        );
        assert_eq!(r("scripts").unwrap(), "skills/demo/scripts");
        assert_eq!(r("$OUTPUT_DIR").unwrap(), "out");
        assert_eq!(r("${WORK_DIR}/inputs").unwrap(), "work/inputs");
        assert_eq!(r("$RUN_DIR").unwrap(), "runs/run_1");
        assert_eq!(r("$WORKSPACE_DIR").unwrap(), "");
        assert_eq!(r("../../out").unwrap(), "out");
        assert_eq!(r("/ws/s1/work").unwrap(), "work");
        for bad in [
            "../../..",
            "/etc",
            "/ws/s10",
            "$WORK_DIR/../../x",
            "a/../../../..",
        ] {
            assert_eq!(
                r(bad).unwrap_err().kind(),
                WorkspaceErrorKind::PathEscape,
                "{bad}"
            );
        }
        assert_eq!(
            r("$HOME").unwrap_err().kind(),
            WorkspaceErrorKind::InvalidRequest
        );
    }

    #[test]
    fn output_globs() {
        assert_eq!(
            normalize_output_glob("$OUTPUT_DIR/*.txt").unwrap(),
            "out/*.txt"
        );
        assert_eq!(
            normalize_output_glob("workspace://out/**").unwrap(),
            "out/**"
        );
        assert_eq!(normalize_output_glob("./out/a").unwrap(), "out/a");
        assert!(normalize_output_glob("../x").is_err());
        assert!(normalize_output_glob("out/../../x").is_err());
        assert!(normalize_output_glob("/etc/*").is_err());
        assert!(normalize_output_glob("").is_err());
    }

    #[test]
    fn names() {
        assert_eq!(sanitize_file_name("../../etc/passwd"), "passwd");
        assert_eq!(sanitize_file_name("my report (1).pdf"), "my_report__1_.pdf");
        assert_eq!(sanitize_file_name("..."), "file");
        assert_eq!(sanitize_file_name(".bashrc"), "bashrc");
        let taken = |n: &str| n == "a.txt" || n == "a-1.txt";
        assert_eq!(dedupe_file_name("a.txt", &taken), "a-2.txt");
    }
}
