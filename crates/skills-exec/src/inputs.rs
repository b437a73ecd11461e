//! Inputs (F-EXE-5): `artifact://`, `host://`, `workspace://` and `skill://`
//! sources placed into the workspace, and conversation attachments staged
//! into `work/inputs` with sanitized, de-duplicated names.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_core::{
    Attachment, INPUTS_SUBDIR, InputMode, InputSource, InputSpec, SKILLS_SUBDIR, StagedInput,
    WORKSPACE_SCHEME, WorkspaceError, WorkspaceErrorKind, WorkspaceResult, normalize_relative,
};
use tracing::Instrument;

use crate::engine::{Engine, Launcher, Ws, lock};
use crate::fsutil::{Opened, blocking, io_error, is_within, join_rel, open_beneath, remove_within};
use crate::stage;

impl Engine {
    pub(crate) async fn stage_inputs(
        &self,
        session_id: &str,
        inputs: &[InputSpec],
    ) -> WorkspaceResult<Vec<StagedInput>> {
        let (ws, _) = self.workspace(session_id).await?;
        self.stage_inputs_in(&ws, inputs)
            .instrument(tracing::info_span!(
                "workspace.stage.inputs",
                session = session_id,
                count = inputs.len()
            ))
            .await
    }

    pub(crate) async fn stage_inputs_in(
        &self,
        ws: &Arc<Ws>,
        inputs: &[InputSpec],
    ) -> WorkspaceResult<Vec<StagedInput>> {
        let mut staged = Vec::with_capacity(inputs.len());
        for input in inputs {
            staged.push(self.stage_one_input(ws, input).await?);
        }
        Ok(staged)
    }

    async fn stage_one_input(
        &self,
        ws: &Arc<Ws>,
        input: &InputSpec,
    ) -> WorkspaceResult<StagedInput> {
        let source = input.source()?;
        let default_name = match &source {
            InputSource::Artifact { name, .. } => {
                name.rsplit('/').next().unwrap_or(name).to_owned()
            }
            InputSource::Host(p)
            | InputSource::Workspace(p)
            | InputSource::Skill { path: p, .. } => p.rsplit('/').next().unwrap_or(p).to_owned(),
            _ => "input".to_owned(),
        };
        let dst = match &input.to {
            Some(to) => normalize_relative(to.strip_prefix(WORKSPACE_SCHEME).unwrap_or(to))?,
            None => format!(
                "{INPUTS_SUBDIR}/{}",
                skills_core::sanitize_file_name(&default_name)
            ),
        };
        if dst.is_empty()
            || dst == SKILLS_SUBDIR
            || dst.starts_with(&format!("{SKILLS_SUBDIR}/"))
            || dst == "metadata.json"
        {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!(
                    "input destination {dst:?} is not allowed (use work/, out/ or work/inputs/)"
                ),
            ));
        }
        let link = input.mode == InputMode::Link && matches!(self.cfg.launcher, Launcher::Local);
        let root = ws.root.clone();
        match source {
            InputSource::Artifact { name, version } => {
                let Some(service) = &self.cfg.artifacts else {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorKind::Unavailable,
                        "artifact:// inputs need an artifact service; none is configured",
                    ));
                };
                let version = match version {
                    Some(v) => Some(v),
                    None => lock(&ws.pinned).get(&name).copied(),
                };
                let artifact = service.load(&ws.session_id, &name, version).await?;
                if input.pin {
                    lock(&ws.pinned).insert(name.clone(), artifact.version);
                }
                let size = artifact.bytes.len() as u64;
                let d = dst.clone();
                blocking(move || write_beneath(&root, &d, &artifact.bytes)).await?;
                Ok(StagedInput::new(&input.from, dst, size).with_version(artifact.version))
            }
            InputSource::Host(path) => {
                let host = PathBuf::from(&path).canonicalize().map_err(|e| {
                    WorkspaceError::new(WorkspaceErrorKind::NotFound, format!("input {path}: {e}"))
                })?;
                if !self
                    .cfg
                    .host_input_roots
                    .iter()
                    .any(|r| is_within(r, &host))
                {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorKind::PolicyDenied,
                        format!("host input {path} is outside the allowed host input folders"),
                    ));
                }
                let d = dst.clone();
                let size = blocking(move || place_host(&root, &d, &host, link)).await?;
                Ok(StagedInput::new(&input.from, dst, size))
            }
            InputSource::Workspace(rel) => {
                let d = dst.clone();
                let size = blocking(move || copy_beneath(&root, &rel, &root, &d)).await?;
                Ok(StagedInput::new(&input.from, dst, size))
            }
            InputSource::Skill { name, path } => {
                stage::check_skill_name(&name)?;
                if !lock(&ws.skills).contains_key(&name) {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorKind::SkillNotLoaded,
                        format!("skill `{name}` is not staged in this session"),
                    ));
                }
                let skill_root = root.join(SKILLS_SUBDIR).join(&name);
                let d = dst.clone();
                let size = blocking(move || copy_beneath(&skill_root, &path, &root, &d)).await?;
                Ok(StagedInput::new(&input.from, dst, size))
            }
            _ => Err(WorkspaceError::new(
                WorkspaceErrorKind::Unsupported,
                "unknown input source",
            )),
        }
    }

    pub(crate) async fn stage_attachments(
        &self,
        session_id: &str,
        attachments: &[Attachment],
    ) -> WorkspaceResult<Vec<StagedInput>> {
        let (ws, _) = self.workspace(session_id).await?;
        let root = ws.root.clone();
        let files: Vec<(String, Vec<u8>)> = attachments
            .iter()
            .map(|a| (a.name.clone(), a.bytes.clone()))
            .collect();
        blocking(move || {
            let dir = root.join(INPUTS_SUBDIR);
            let mut out = Vec::new();
            for (name, bytes) in files {
                let clean = skills_core::sanitize_file_name(&name);
                let unique = skills_core::dedupe_file_name(&clean, &|n: &str| {
                    std::fs::symlink_metadata(dir.join(n)).is_ok()
                });
                let rel = format!("{INPUTS_SUBDIR}/{unique}");
                write_beneath(&root, &rel, &bytes)?;
                out.push(StagedInput::new(name, rel, bytes.len() as u64));
            }
            Ok(out)
        })
        .instrument(tracing::info_span!(
            "workspace.stage.attachments",
            session = session_id
        ))
        .await
    }
}

/// Writes `bytes` to `rel` under `root`, creating folders, refusing a
/// destination whose folder leads out of the workspace.
pub(crate) fn write_beneath(root: &Path, rel: &str, bytes: &[u8]) -> WorkspaceResult<()> {
    let dst = checked_destination(root, rel)?;
    std::fs::write(&dst, bytes).map_err(|e| io_error(format!("writing {rel}"), e))
}

fn checked_destination(root: &Path, rel: &str) -> WorkspaceResult<PathBuf> {
    let dst = join_rel(root, rel);
    let parent = dst.parent().unwrap_or(root);
    std::fs::create_dir_all(parent)
        .map_err(|e| io_error(format!("creating the folder of {rel}"), e))?;
    let canonical_root = root
        .canonicalize()
        .map_err(|e| io_error("workspace root", e))?;
    let canonical_parent = parent.canonicalize().map_err(|e| io_error(rel, e))?;
    if !is_within(&canonical_root, &canonical_parent) {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::PathEscape,
            format!("input destination {rel} leads out of the workspace"),
        ));
    }
    if let Ok(meta) = std::fs::symlink_metadata(&dst) {
        if meta.is_dir() && !meta.file_type().is_symlink() {
            remove_within(root, &dst).map_err(|e| io_error(rel, e))?;
        } else {
            std::fs::remove_file(&dst).map_err(|e| io_error(rel, e))?;
        }
    }
    Ok(dst)
}

/// Most bytes one copied input may hold: 1 GiB.
const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Copies the file `src_rel` beneath `src_root` to `dst_rel` beneath `root`.
fn copy_beneath(
    src_root: &Path,
    src_rel: &str,
    root: &Path,
    dst_rel: &str,
) -> WorkspaceResult<u64> {
    match open_beneath(src_root, src_rel, MAX_INPUT_BYTES) {
        Ok(Opened::File { bytes, .. }) => {
            write_beneath(root, dst_rel, &bytes)?;
            Ok(bytes.len() as u64)
        }
        Ok(Opened::Outside) => Err(WorkspaceError::new(
            WorkspaceErrorKind::PathEscape,
            format!("input {src_rel} leads out of its root"),
        )),
        Ok(Opened::NotRegular) => Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            format!("input {src_rel} is not a regular file"),
        )),
        Err(e) => Err(WorkspaceError::new(
            WorkspaceErrorKind::NotFound,
            format!("input {src_rel}: {e}"),
        )),
    }
}

/// Places a host file or folder (already canonical and allowed).
fn place_host(root: &Path, dst_rel: &str, host: &Path, link: bool) -> WorkspaceResult<u64> {
    let dst = checked_destination(root, dst_rel)?;
    let meta = std::fs::metadata(host).map_err(|e| io_error(host.display(), e))?;
    if link {
        crate::fsutil::symlink(host, &dst).map_err(|e| io_error(dst_rel, e))?;
        return Ok(if meta.is_file() { meta.len() } else { 0 });
    }
    if meta.is_file() {
        return std::fs::copy(host, &dst).map_err(|e| io_error(dst_rel, e));
    }
    copy_tree(host, &dst)
}

fn copy_tree(src: &Path, dst: &Path) -> WorkspaceResult<u64> {
    std::fs::create_dir_all(dst).map_err(|e| io_error(dst.display(), e))?;
    let mut total = 0;
    for entry in std::fs::read_dir(src)
        .map_err(|e| io_error(src.display(), e))?
        .flatten()
    {
        let Ok(ft) = entry.file_type() else { continue };
        let to = dst.join(entry.file_name());
        if ft.is_dir() {
            total += copy_tree(&entry.path(), &to)?;
        } else if ft.is_file() {
            total += std::fs::copy(entry.path(), &to).map_err(|e| io_error(to.display(), e))?;
        }
        if total > MAX_INPUT_BYTES {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::TooLarge,
                "host input larger than 1 GiB",
            ));
        }
    }
    Ok(total)
}
