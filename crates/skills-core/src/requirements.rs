//! What a skill needs from the machine it runs on (binaries, environment
//! variables, host tools, operating systems), and a pure check of those needs
//! against a [`Probe`].
//!
//! The parsing of the spellings found in the wild lives in `validate/requires.rs`; this
//! module holds the parsed shape and the check. The check asks a [`Probe`]
//! instead of the machine, so this crate stays free of I/O: `skills-fs` offers
//! a probe of the real machine, tests pass their own.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a skill declares it needs before it can work (F-REQ).
///
/// Empty lists mean "nothing needed". Read from the spellings documented in
/// `docs/skill-format.md` ("Requirements").
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Requirements {
    /// Programs that must all be on `PATH`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bins: Vec<String>,
    /// Programs of which at least one must be on `PATH`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub any_bins: Vec<String>,
    /// Environment variables that must be set (and not empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Tools the host must offer the model (an MCP server's tool, say).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Operating systems the skill works on (`linux`, `macos`, `windows`);
    /// empty = any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub os: Vec<String>,
}

impl Requirements {
    /// Whether nothing is required.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// What `probe` says is missing, in a fixed order: operating system,
    /// binaries, any-of binaries, environment variables, tools. Empty when the
    /// skill can work. A tool the probe cannot judge ([`Probe::has_tool`]
    /// answering `None`) is not reported.
    pub fn missing(&self, probe: &dyn Probe) -> Vec<Missing> {
        let mut out = Vec::new();
        if !self.os.is_empty() {
            let actual = probe.os();
            if !self
                .os
                .iter()
                .any(|os| normalize_os(os) == normalize_os(actual))
            {
                out.push(Missing::Os {
                    allowed: self.os.clone(),
                    actual: actual.to_owned(),
                });
            }
        }
        out.extend(
            self.bins
                .iter()
                .filter(|bin| !probe.has_bin(bin))
                .map(|bin| Missing::Bin(bin.clone())),
        );
        if !self.any_bins.is_empty() && !self.any_bins.iter().any(|bin| probe.has_bin(bin)) {
            out.push(Missing::AnyBin(self.any_bins.clone()));
        }
        out.extend(
            self.env
                .iter()
                .filter(|var| !probe.has_env(var))
                .map(|var| Missing::Env(var.clone())),
        );
        out.extend(
            self.tools
                .iter()
                .filter(|tool| probe.has_tool(tool) == Some(false))
                .map(|tool| Missing::Tool(tool.clone())),
        );
        out
    }
}

/// The spelling of an operating system as [`std::env::consts::OS`] gives it,
/// for the common other spellings (`darwin`, `osx`, `win32`, `win`).
pub fn normalize_os(os: &str) -> String {
    let lower = os.trim().to_ascii_lowercase();
    match lower.as_str() {
        "darwin" | "osx" | "mac" | "macosx" => "macos".to_owned(),
        "win32" | "win" | "win64" => "windows".to_owned(),
        _ => lower,
    }
}

/// Answers the questions of [`Requirements::missing`] about one machine and
/// one host.
pub trait Probe {
    /// Whether a program of this name is on `PATH`.
    fn has_bin(&self, name: &str) -> bool;
    /// Whether this environment variable is set and not empty.
    fn has_env(&self, name: &str) -> bool;
    /// The operating system, as [`std::env::consts::OS`] spells it.
    fn os(&self) -> &str;
    /// Whether the host offers this tool; `None` when it cannot tell (a CLI
    /// listing skills has no tool table), in which case the need is not checked.
    fn has_tool(&self, name: &str) -> Option<bool> {
        let _ = name;
        None
    }
}

/// One unmet requirement.
///
/// Serializes as an object with a `kind` (`bin`, `any_bin`, `env`, `tool`,
/// `os`) and the names: `{"kind": "bin", "name": "jq"}`, `{"kind":
/// "any_bin", "names": ["rg", "ag"]}`, `{"kind": "os", "allowed": ["macos"],
/// "actual": "linux"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Missing {
    /// A program that is not on `PATH`.
    Bin(String),
    /// None of these programs is on `PATH`.
    AnyBin(Vec<String>),
    /// An environment variable that is unset or empty.
    Env(String),
    /// A tool the host does not offer.
    Tool(String),
    /// The skill does not work on this operating system.
    Os {
        /// The systems it works on.
        allowed: Vec<String>,
        /// This one.
        actual: String,
    },
}

impl Serialize for Missing {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(Some(if matches!(self, Self::Os { .. }) {
            3
        } else {
            2
        }))?;
        match self {
            Self::Bin(name) => {
                map.serialize_entry("kind", "bin")?;
                map.serialize_entry("name", name)?;
            }
            Self::AnyBin(names) => {
                map.serialize_entry("kind", "any_bin")?;
                map.serialize_entry("names", names)?;
            }
            Self::Env(name) => {
                map.serialize_entry("kind", "env")?;
                map.serialize_entry("name", name)?;
            }
            Self::Tool(name) => {
                map.serialize_entry("kind", "tool")?;
                map.serialize_entry("name", name)?;
            }
            Self::Os { allowed, actual } => {
                map.serialize_entry("kind", "os")?;
                map.serialize_entry("allowed", allowed)?;
                map.serialize_entry("actual", actual)?;
            }
        }
        map.end()
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bin(bin) => write!(f, "bin {bin}"),
            Self::AnyBin(bins) => write!(f, "one of bins {}", bins.join(", ")),
            Self::Env(var) => write!(f, "env {var}"),
            Self::Tool(tool) => write!(f, "tool {tool}"),
            Self::Os { allowed, actual } => {
                write!(f, "os {actual} (works on {})", allowed.join(", "))
            }
        }
    }
}

/// `missing` as one line, e.g. `bin jq; env GITHUB_TOKEN`.
pub fn describe_missing(missing: &[Missing]) -> String {
    missing
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake;

    impl Probe for Fake {
        fn has_bin(&self, name: &str) -> bool {
            name == "git"
        }
        fn has_env(&self, name: &str) -> bool {
            name == "HOME"
        }
        fn os(&self) -> &str {
            "linux"
        }
        fn has_tool(&self, name: &str) -> Option<bool> {
            Some(name == "github")
        }
    }

    #[test]
    fn missing_lists_what_the_probe_lacks_in_a_fixed_order() {
        let req = Requirements {
            bins: vec!["git".into(), "jq".into()],
            any_bins: vec!["rg".into(), "ag".into()],
            env: vec!["HOME".into(), "GITHUB_TOKEN".into()],
            tools: vec!["github".into(), "slack".into()],
            os: vec!["darwin".into(), "win32".into()],
        };
        let missing = req.missing(&Fake);
        assert_eq!(
            describe_missing(&missing),
            "os linux (works on darwin, win32); bin jq; one of bins rg, ag; env GITHUB_TOKEN; tool slack"
        );
        assert!(Requirements::default().missing(&Fake).is_empty());
        let fine = Requirements {
            bins: vec!["git".into()],
            os: vec!["Linux".into()],
            ..Requirements::default()
        };
        assert!(fine.missing(&Fake).is_empty());
    }

    #[test]
    fn missing_serializes_as_objects_with_a_kind() {
        let all = [
            Missing::Bin("jq".into()),
            Missing::AnyBin(vec!["rg".into(), "ag".into()]),
            Missing::Env("TOKEN".into()),
            Missing::Tool("github".into()),
            Missing::Os {
                allowed: vec!["macos".into()],
                actual: "linux".into(),
            },
        ];
        let json = serde_json::to_string(&all).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            json,
            r#"[{"kind":"bin","name":"jq"},{"kind":"any_bin","names":["rg","ag"]},{"kind":"env","name":"TOKEN"},{"kind":"tool","name":"github"},{"kind":"os","allowed":["macos"],"actual":"linux"}]"#
        );
    }

    #[test]
    fn os_spellings_normalize() {
        assert_eq!(normalize_os("darwin"), "macos");
        assert_eq!(normalize_os("Win32"), "windows");
        assert_eq!(normalize_os(" linux "), "linux");
    }
}
