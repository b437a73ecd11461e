//! The runtime options `skills run`, `skills agent --run` and
//! `skills mcp --run` share: where saved artifacts go, whether every
//! collected file is saved, and which host folders `host://` inputs may
//! come from. One clap [`Args`](clap::Args) struct, flattened into the three
//! commands, and the one place their runtime is built.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_exec::{
    ContainerOptions, ContainerRuntime, FsArtifacts, InMemoryArtifacts, LocalRuntime,
    RuntimeBuilder, SandboxRuntime,
};

use crate::agent::RunMode;
use skills_workspace::{WorkspaceError, WorkspaceRuntime};

/// Artifact and input options of a runtime.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct RuntimeFlags {
    /// Keep saved artifacts in DIR (`DIR/<session>/<name>/<version>`,
    /// kept after the command ends) instead of in memory.
    #[arg(long, value_name = "DIR")]
    pub(crate) artifacts: Option<PathBuf>,
    /// Save every collected output file as an artifact, even when the
    /// request does not ask to (`save_as_artifacts`, `outputs.save`).
    #[arg(long)]
    pub(crate) save_artifacts: bool,
    /// Allow `host://` inputs from files below DIR (repeatable; none are
    /// allowed by default).
    #[arg(long = "allow-input", value_name = "DIR")]
    pub(crate) allow_input: Vec<PathBuf>,
    /// The image of the `container` runtime (default: $SKILLS_CONTAINER_IMAGE,
    /// else `localhost/skills-runner:latest`, built offline by
    /// deploy/runner/build-image.sh).
    #[arg(long = "container-image", value_name = "IMAGE")]
    pub(crate) container_image: Option<String>,
}

impl RuntimeFlags {
    /// `builder` with these options: a filesystem artifact store at
    /// `--artifacts` (in memory without it), forced saving, host input
    /// folders.
    pub(crate) fn apply(&self, builder: RuntimeBuilder) -> RuntimeBuilder {
        let mut builder = match &self.artifacts {
            Some(dir) => builder.artifacts(Arc::new(FsArtifacts::new(dir))),
            None => builder.artifacts(Arc::new(InMemoryArtifacts::new())),
        }
        .force_save_artifacts(self.save_artifacts);
        for dir in &self.allow_input {
            builder = builder.allow_host_inputs(dir);
        }
        builder
    }

    /// Refuses these flags on a command without `--run` (`skills agent`,
    /// `skills mcp`), where they would silently do nothing.
    pub(crate) fn require_run(&self, run: bool) -> Result<(), crate::failure::Failure> {
        let set = self.artifacts.is_some() || self.save_artifacts || !self.allow_input.is_empty();
        if set && !run {
            return Err(crate::failure::Failure::usage(
                "--artifacts, --save-artifacts and --allow-input are for the run tools: \
                 add --run local, --run sandbox or --run container",
            ));
        }
        Ok(())
    }

    /// Refuses `--container-image` for a runtime other than `container`,
    /// where it would silently do nothing.
    pub(crate) fn require_container(
        &self,
        mode: Option<RunMode>,
    ) -> Result<(), crate::failure::Failure> {
        if self.container_image.is_some() && mode != Some(RunMode::Container) {
            return Err(crate::failure::Failure::usage(
                "--container-image is for the container runtime: add --run container \
                 (skills run: --runtime container)",
            ));
        }
        Ok(())
    }

    /// Checks what can be checked before anything runs: every
    /// `--allow-input` folder exists (a missing one would silently allow
    /// nothing).
    pub(crate) fn check(&self) -> Result<(), String> {
        for dir in &self.allow_input {
            if !dir.is_dir() {
                return Err(format!("--allow-input {}: no such folder", dir.display()));
            }
        }
        Ok(())
    }

    /// The container image: `--container-image`, else
    /// `$SKILLS_CONTAINER_IMAGE`, else the default.
    pub(crate) fn image(&self) -> String {
        self.container_image
            .clone()
            .or_else(|| {
                std::env::var(skills_exec::IMAGE_ENV)
                    .ok()
                    .filter(|v| !v.trim().is_empty())
            })
            .unwrap_or_else(|| skills_exec::DEFAULT_IMAGE.to_owned())
    }

    /// Builds the runtime of `mode`, with its workspaces under `root`.
    pub(crate) async fn runtime(
        &self,
        root: &Path,
        mode: RunMode,
    ) -> Result<Arc<dyn WorkspaceRuntime>, WorkspaceError> {
        Ok(match mode {
            RunMode::Local => Arc::new(self.apply(LocalRuntime::builder(root)).build()?),
            RunMode::Sandbox => {
                Arc::new(self.apply(SandboxRuntime::builder(root)).build_sandbox()?)
            }
            RunMode::Container => Arc::new(
                self.apply(ContainerRuntime::builder(root))
                    .build_container(ContainerOptions::new().image(self.image()))
                    .await?,
            ),
        })
    }
}
