//! The requests a model sends (`skill_run`, `skill_exec`, `skill_write_stdin`)
//! and the results a runtime answers with.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::inputs::{InputSpec, StagedInput};
use crate::outputs::{OutputFile, OutputSpec, SavedArtifact};

/// What to run, in which skill and where: the fields run and exec requests
/// share (flattened into both, so the JSON the model sends is flat).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct CommandSpec {
    /// The skill to run in (staged under `skills/<skill>`).
    #[schemars(description = "The skill to run in")]
    pub skill: String,
    /// The command, run with `bash -c` (or without a shell under a policy).
    #[schemars(description = "Shell command, run with bash -c in the skill's folder")]
    pub command: String,
    /// The working folder: relative to the skill root, or starting with
    /// `$WORKSPACE_DIR`, `$SKILLS_DIR`, `$WORK_DIR`, `$OUTPUT_DIR` or `$RUN_DIR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        description = "Working folder: relative to the skill, or starting with $WORKSPACE_DIR, \
                       $SKILLS_DIR, $WORK_DIR, $OUTPUT_DIR or $RUN_DIR"
    )]
    pub cwd: Option<String>,
    /// Extra environment variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(description = "Extra environment variables")]
    pub env: BTreeMap<String, String>,
    /// Timeout in seconds; the runtime's default when `None`. An
    /// interactive session is killed when it runs out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Seconds before the command is killed")]
    pub timeout: Option<u64>,
    /// Inputs to stage before running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(description = "Files to place into the workspace before running")]
    pub inputs: Vec<InputSpec>,
}

impl CommandSpec {
    /// Runs `command` in `skill`.
    pub fn new(skill: impl Into<String>, command: impl Into<String>) -> Self {
        Self {
            skill: skill.into(),
            command: command.into(),
            ..Self::default()
        }
    }
}

/// What a command reads and what becomes of the files it leaves: the fields
/// `skill_run` and `skill_exec` share (flattened into both, with the same
/// JSON names: trpc's).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RunIo {
    /// Text written to standard input; for a run, standard input is closed
    /// when `None` (an exec session types it once it started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Text for standard input (a run closes it after this text)")]
    pub stdin: Option<String>,
    /// Text an `$EDITOR` invoked by the command "types": the runtime sets
    /// `EDITOR`/`VISUAL` to a helper that writes this text into the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Text an $EDITOR opened by the command writes")]
    pub editor_text: Option<String>,
    /// Globs of files to collect (`out/*.txt`, `$OUTPUT_DIR/**`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(
        description = "Globs of files to collect, relative to the workspace (out/*.txt, \
                       $OUTPUT_DIR/**)"
    )]
    pub output_files: Vec<String>,
    /// The declarative outputs manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Which files to collect and what to do with them")]
    pub outputs: Option<OutputSpec>,
    /// Save collected files as artifacts.
    #[serde(default)]
    #[schemars(description = "Persist collected files via the artifact service")]
    pub save_as_artifacts: bool,
    /// Leave file contents out of the result (refs and sizes only).
    #[serde(default)]
    #[schemars(description = "Leave file contents out (refs and sizes only)")]
    pub omit_inline_content: bool,
    /// A prefix for the names of saved artifacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "Prefix of saved artifact names")]
    pub artifact_prefix: Option<String>,
}

/// A `skill_run` request, as the model sends it (trpc field names).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct RunRequest {
    /// The skill, the command, where and how long.
    #[serde(flatten)]
    pub spec: CommandSpec,
    /// Standard input, editor text, the files to collect and what to do
    /// with them.
    #[serde(flatten)]
    pub io: RunIo,
}

/// The builder methods of the [`RunIo`] fields, for a request holding one
/// in `io`.
macro_rules! io_builders {
    () => {
        /// Sets standard input.
        #[must_use]
        pub fn stdin(mut self, stdin: impl Into<String>) -> Self {
            self.io.stdin = Some(stdin.into());
            self
        }

        /// Sets the editor text.
        #[must_use]
        pub fn editor_text(mut self, text: impl Into<String>) -> Self {
            self.io.editor_text = Some(text.into());
            self
        }

        /// Adds an output glob.
        #[must_use]
        pub fn output_file(mut self, glob: impl Into<String>) -> Self {
            self.io.output_files.push(glob.into());
            self
        }

        /// Sets the outputs manifest.
        #[must_use]
        pub fn outputs(mut self, outputs: OutputSpec) -> Self {
            self.io.outputs = Some(outputs);
            self
        }

        /// Sets `save_as_artifacts`.
        #[must_use]
        pub fn save_as_artifacts(mut self, save: bool) -> Self {
            self.io.save_as_artifacts = save;
            self
        }

        /// Sets `omit_inline_content`.
        #[must_use]
        pub fn omit_inline_content(mut self, omit: bool) -> Self {
            self.io.omit_inline_content = omit;
            self
        }

        /// Sets the artifact prefix.
        #[must_use]
        pub fn artifact_prefix(mut self, prefix: impl Into<String>) -> Self {
            self.io.artifact_prefix = Some(prefix.into());
            self
        }
    };
}

impl RunRequest {
    io_builders!();

    /// Runs `command` in `skill`.
    pub fn new(skill: impl Into<String>, command: impl Into<String>) -> Self {
        Self {
            spec: CommandSpec::new(skill, command),
            ..Self::default()
        }
    }

    /// Sets the working folder.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<String>) -> Self {
        self.spec.cwd = Some(cwd.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.spec.env.insert(key.into(), value.into());
        self
    }

    /// Sets the timeout in seconds.
    #[must_use]
    pub fn timeout_secs(mut self, secs: u64) -> Self {
        self.spec.timeout = Some(secs);
        self
    }

    /// Adds an input.
    #[must_use]
    pub fn input(mut self, input: InputSpec) -> Self {
        self.spec.inputs.push(input);
        self
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunResult {
    /// Standard output (head and tail kept when over the cap, with a note).
    pub stdout: String,
    /// Standard error, capped the same way.
    pub stderr: String,
    /// The exit code; `None` when the command was killed by a signal.
    pub exit_code: Option<i32>,
    /// `true` when the timeout ended the command.
    pub timed_out: bool,
    /// Wall-clock time from spawn to exit.
    pub duration_ms: u64,
    /// The run's folder, relative to the workspace root (`runs/run_<timestamp>`).
    pub run_dir: String,
    /// Collected files.
    #[serde(default)]
    pub output_files: Vec<OutputFile>,
    /// The one output that best answers the request (the only text file, or
    /// the first of the manifest's files), inlined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_output: Option<OutputFile>,
    /// Files saved as artifacts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifact_files: Vec<SavedArtifact>,
    /// Inputs staged for the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub staged_inputs: Vec<StagedInput>,
    /// Things the model should know (truncation, refused links, limits hit,
    /// no artifact service).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl RunResult {
    /// `true` when the command exited with code 0 in time.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// A `skill_exec` request: start an interactive command.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ExecRequest {
    /// The skill, the command, where and how long.
    #[serde(flatten)]
    pub spec: CommandSpec,
    /// Standard input typed once it started, editor text, the files to
    /// collect when it exits and what to do with them (as for a run).
    #[serde(flatten)]
    pub io: RunIo,
    /// Run on a terminal (a PTY) rather than pipes; default `true`.
    #[serde(default = "default_true")]
    #[schemars(description = "Run on a terminal (default true)")]
    pub tty: bool,
    /// How long to wait for first output before answering, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "How long to wait for first output")]
    pub yield_ms: Option<u64>,
}

fn default_true() -> bool {
    true
}

impl ExecRequest {
    /// Starts `command` in `skill` on a terminal.
    pub fn new(skill: impl Into<String>, command: impl Into<String>) -> Self {
        Self {
            spec: CommandSpec::new(skill, command),
            io: RunIo::default(),
            tty: true,
            yield_ms: None,
        }
    }

    io_builders!();

    /// Sets the working folder.
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<String>) -> Self {
        self.spec.cwd = Some(cwd.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.spec.env.insert(key.into(), value.into());
        self
    }

    /// Adds an input.
    #[must_use]
    pub fn input(mut self, input: InputSpec) -> Self {
        self.spec.inputs.push(input);
        self
    }

    /// Sets whether a terminal is used.
    #[must_use]
    pub fn tty(mut self, tty: bool) -> Self {
        self.tty = tty;
        self
    }

    /// Sets the timeout in seconds.
    #[must_use]
    pub fn timeout_secs(mut self, secs: u64) -> Self {
        self.spec.timeout = Some(secs);
        self
    }

    /// Sets the first wait in milliseconds.
    #[must_use]
    pub fn yield_ms(mut self, ms: u64) -> Self {
        self.yield_ms = Some(ms);
        self
    }
}

/// A `skill_write_stdin` request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct WriteStdinRequest {
    /// The exec session.
    pub session_id: String,
    /// Text to type.
    #[serde(default)]
    #[schemars(description = "Text to type")]
    pub chars: String,
    /// Press Enter after the text.
    #[serde(default)]
    #[schemars(description = "Press Enter after the text")]
    pub submit: bool,
    /// How long to wait for output afterwards, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "How long to wait for output, in milliseconds")]
    pub yield_ms: Option<u64>,
}

/// A `skill_poll_session` request: the new output of an exec session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct PollRequest {
    /// The exec session.
    pub session_id: String,
    /// How long to wait for some output, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(description = "How long to wait for output, in milliseconds")]
    pub yield_ms: Option<u64>,
}

/// A `skill_kill_session` request: end an exec session.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct KillRequest {
    /// The exec session.
    pub session_id: String,
}

impl WriteStdinRequest {
    /// Types `chars` into `session_id`.
    pub fn new(session_id: impl Into<String>, chars: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            chars: chars.into(),
            submit: false,
            yield_ms: None,
        }
    }

    /// Presses Enter after the text.
    #[must_use]
    pub fn submit(mut self, submit: bool) -> Self {
        self.submit = submit;
        self
    }

    /// Sets the wait in milliseconds.
    #[must_use]
    pub fn yield_ms(mut self, ms: u64) -> Self {
        self.yield_ms = Some(ms);
        self
    }
}

/// The state of an exec session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExecStatus {
    /// Still running.
    Running,
    /// Exited on its own.
    Exited,
    /// Killed by [`WorkspaceRuntime::kill_exec`](crate::WorkspaceRuntime::kill_exec) or a cleanup.
    Killed,
    /// Killed by its timeout.
    TimedOut,
}

/// What an exec session seems to wait for (see [`Interaction`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InteractionKind {
    /// A line of text (`Name: `, `>>> `).
    Line,
    /// One of numbered options listed just before the prompt
    /// (`1) csv`, `2) json`, `Choose: `): answer with the number.
    Choice,
    /// Yes or no (`Continue? [y/N]`).
    Confirm,
    /// A secret (`Password: `); what is typed is not echoed.
    Secret,
}

/// Best effort: the program of an exec session seems to wait for input
/// (its output ends like a prompt and nothing arrived for a while).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Interaction {
    /// Always `true`: present only while the program seems to wait.
    pub waiting: bool,
    /// What it seems to ask for.
    pub kind: InteractionKind,
    /// The prompt: the last line of its output, trimmed.
    pub prompt: String,
    /// For [`InteractionKind::Choice`]: the numbered options seen, as
    /// printed (`1) csv`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

impl Interaction {
    /// A hint that the program waits for `kind` after `prompt`.
    pub fn new(kind: InteractionKind, prompt: impl Into<String>) -> Self {
        Self {
            waiting: true,
            kind,
            prompt: prompt.into(),
            options: Vec::new(),
        }
    }

    /// Sets the numbered options.
    #[must_use]
    pub fn with_options(mut self, options: Vec<String>) -> Self {
        self.options = options;
        self
    }
}

/// What an exec session printed since the last look, and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecOutput {
    /// The exec session's id.
    pub session_id: String,
    /// Its state.
    pub status: ExecStatus,
    /// Output since the previous answer (capped, with a note when cut).
    pub output: String,
    /// The exit code once it has exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Best effort, while it runs: it seems to wait for input, and for what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interaction: Option<Interaction>,
    /// Once it ended (exited, killed or timed out): the final
    /// `skill_run`-style result, with the files the request asked to
    /// collect (and save), its `stdout` the tail of everything it printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Box<RunResult>>,
}

impl ExecOutput {
    /// An answer for `session_id`.
    pub fn new(
        session_id: impl Into<String>,
        status: ExecStatus,
        output: impl Into<String>,
    ) -> Self {
        Self {
            session_id: session_id.into(),
            status,
            output: output.into(),
            exit_code: None,
            interaction: None,
            result: None,
        }
    }

    /// Sets the exit code.
    #[must_use]
    pub fn with_exit_code(mut self, code: Option<i32>) -> Self {
        self.exit_code = code;
        self
    }

    /// Sets the waiting-for-input hint.
    #[must_use]
    pub fn with_interaction(mut self, interaction: Option<Interaction>) -> Self {
        self.interaction = interaction;
        self
    }

    /// Sets the final result.
    #[must_use]
    pub fn with_result(mut self, result: Option<RunResult>) -> Self {
        self.result = result.map(Box::new);
        self
    }

    /// `true` when the program seems to wait for input.
    pub fn waiting_for_input(&self) -> bool {
        self.interaction.is_some()
    }
}

/// A file read back from a workspace (a `workspace://` reference).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WorkspaceFile {
    /// Its path relative to the workspace root.
    pub name: String,
    /// The sniffed MIME type.
    pub mime_type: String,
    /// The full size.
    pub size_bytes: u64,
    /// Up to the requested number of bytes.
    pub bytes: Vec<u8>,
    /// `true` when `bytes` is shorter than the file.
    pub truncated: bool,
}

impl WorkspaceFile {
    /// A file read back.
    pub fn new(
        name: impl Into<String>,
        mime_type: impl Into<String>,
        size_bytes: u64,
        bytes: Vec<u8>,
    ) -> Self {
        let truncated = (bytes.len() as u64) < size_bytes;
        Self {
            name: name.into(),
            mime_type: mime_type.into(),
            size_bytes,
            bytes,
            truncated,
        }
    }
}

/// What [`WorkspaceRuntime::cleanup`](crate::WorkspaceRuntime::cleanup) removed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CleanupReport {
    /// The session.
    pub session_id: String,
    /// `true` when a workspace existed and was removed.
    pub removed: bool,
    /// How many exec sessions were killed.
    pub killed_sessions: usize,
}

impl CleanupReport {
    /// A cleanup report.
    pub fn new(session_id: impl Into<String>, removed: bool, killed_sessions: usize) -> Self {
        Self {
            session_id: session_id.into(),
            removed,
            killed_sessions,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn run_request_json() {
        let req: RunRequest = serde_json::from_str(
            r#"{"skill":"demo","command":"echo hi","timeout":5,"inputs":[{"src":"host:///tmp/a","dst":"work/inputs/a"}],
               "outputs":{"globs":["$OUTPUT_DIR/*"],"MaxFiles":3,"inline":true},"omit_inline_content":true}"#,
        )
        .unwrap();
        assert_eq!(req.spec.timeout, Some(5));
        assert_eq!(req.spec.inputs[0].to.as_deref(), Some("work/inputs/a"));
        assert_eq!(req.io.outputs.as_ref().unwrap().max_files, Some(3));
        assert!(req.io.omit_inline_content);
        let file = OutputFile::new("out/a.txt", "text/plain", 2);
        let json = serde_json::to_value(&file).unwrap();
        assert_eq!(json["ref"], "workspace://out/a.txt");
    }

    #[test]
    fn exec_request_takes_the_run_fields() {
        let req: ExecRequest = serde_json::from_str(
            r#"{"skill":"demo","command":"./wizard","stdin":"y\n","editor_text":"msg",
               "output_files":["out/*.txt"],"outputs":{"globs":["out/b"],"save":true},
               "save_as_artifacts":true,"omit_inline_content":true,"artifact_prefix":"w/",
               "yield_ms":50}"#,
        )
        .unwrap();
        assert!(req.tty);
        assert_eq!(req.yield_ms, Some(50));
        let io = &req.io;
        assert_eq!(io.stdin.as_deref(), Some("y\n"));
        assert_eq!(io.editor_text.as_deref(), Some("msg"));
        assert_eq!(io.output_files, ["out/*.txt"]);
        assert!(io.outputs.as_ref().unwrap().save);
        assert!(io.save_as_artifacts && io.omit_inline_content);
        assert_eq!(io.artifact_prefix.as_deref(), Some("w/"));
        // The same names as a run request's, flat.
        let run: RunRequest = serde_json::from_value(serde_json::to_value(&req).unwrap()).unwrap();
        assert_eq!(run.io, req.io);
    }

    #[test]
    fn exec_output_json() {
        let running =
            ExecOutput::new("exec-1", ExecStatus::Running, "Pick: ").with_interaction(Some(
                Interaction::new(InteractionKind::Choice, "Pick:")
                    .with_options(vec!["1) a".into(), "2) b".into()]),
            ));
        assert!(running.waiting_for_input());
        assert_eq!(
            serde_json::to_value(&running).unwrap(),
            serde_json::json!({"session_id": "exec-1", "status": "running", "output": "Pick: ",
                "interaction": {"waiting": true, "kind": "choice", "prompt": "Pick:",
                                "options": ["1) a", "2) b"]}})
        );
        let result = RunResult {
            exit_code: Some(0),
            ..RunResult::default()
        };
        let done = ExecOutput::new("exec-1", ExecStatus::Exited, "")
            .with_exit_code(Some(0))
            .with_result(Some(result));
        let json = serde_json::to_value(&done).unwrap();
        assert_eq!(json["result"]["exit_code"], 0, "{json}");
        assert!(json.get("interaction").is_none(), "{json}");
        let back: ExecOutput = serde_json::from_value(json).unwrap();
        assert_eq!(back, done);
    }
}
