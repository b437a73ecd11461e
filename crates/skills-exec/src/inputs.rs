//! Inputs (F-EXE-5): `artifact://`, `host://`, `workspace://` and `skill://`
//! sources placed into the workspace, and conversation attachments staged
//! into `work/inputs` with sanitized, de-duplicated names. Every write goes
//! through handles on the session folder and counts against its disk cap
//! (threat model: H2, H3, H5, H7).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_workspace::{
    Attachment, INPUTS_SUBDIR, InputMode, InputSource, InputSpec, SKILLS_SUBDIR, StagedInput,
    WORKSPACE_SCHEME, WorkspaceError, WorkspaceErrorKind, WorkspaceResult, normalize_relative,
};
use tracing::Instrument;

use crate::engine::{Engine, Launcher, Ws, lock};
use crate::fsutil::{DirHandle, Opened, blocking, io_error, is_within, walk_error};
use crate::quota::{Usage, WorkspaceLimits};
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
                skills_workspace::sanitize_file_name(&default_name)
            ),
        };
        if dst.is_empty() || dst == SKILLS_SUBDIR || dst.starts_with(&format!("{SKILLS_SUBDIR}/")) {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!(
                    "input destination {dst:?} is not allowed (use work/, out/ or work/inputs/)"
                ),
            ));
        }
        let link = input.mode == InputMode::Link && matches!(self.cfg.launcher, Launcher::Local);
        self.check_disk(ws, "staging inputs refused").await?;
        let place = Place {
            ws: Arc::clone(ws),
            rel: dst.clone(),
            limits: self.cfg.limits,
            owners: self.owners(),
        };
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
                let size = blocking(move || place.write(&mut artifact.bytes.as_slice())).await?;
                Ok(StagedInput::new(&input.from, dst, size).with_version(artifact.version))
            }
            InputSource::Host(path) => {
                let host = PathBuf::from(&path).canonicalize().map_err(|e| {
                    WorkspaceError::new(WorkspaceErrorKind::NotFound, format!("input {path}: {e}"))
                })?;
                let Some(allowed) = self
                    .cfg
                    .host_input_roots
                    .iter()
                    .find(|r| is_within(r, &host))
                    .cloned()
                else {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorKind::PolicyDenied,
                        format!("host input {path} is outside the allowed host input folders"),
                    ));
                };
                let size = blocking(move || place.host(&allowed, &host, link)).await?;
                Ok(StagedInput::new(&input.from, dst, size))
            }
            InputSource::Workspace(rel) => {
                let size = blocking(move || {
                    let src = place
                        .ws
                        .dir
                        .try_clone()
                        .map_err(|e| io_error("workspace", e))?;
                    place.copy_from(&src, &rel, &place.owners)
                })
                .await?;
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
                let size = blocking(move || {
                    let src = place
                        .ws
                        .dir
                        .walk(&format!("{SKILLS_SUBDIR}/{name}"))
                        .map_err(|e| walk_error(&format!("skill {name}"), e))?;
                    place.copy_from(&src, &path, &place.owners)
                })
                .await?;
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
        self.check_disk(&ws, "staging attachments refused").await?;
        let files: Vec<(String, Vec<u8>)> = attachments
            .iter()
            .map(|a| (a.name.clone(), a.bytes.clone()))
            .collect();
        let limits = self.cfg.limits;
        blocking(move || {
            let dir = ws
                .dir
                .walk_create(INPUTS_SUBDIR)
                .map_err(|e| walk_error(&format!("{INPUTS_SUBDIR}/"), e))?;
            // All or none: refuse before writing anything when they do not
            // fit together, so a refused call leaves nothing to stage twice.
            let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
            let usage = *lock(&ws.usage);
            if total > usage.bytes_left(&limits) || (files.len() as u64) > usage.files_left(&limits)
            {
                return Err(over_budget(
                    &format!("{} attached files", files.len()),
                    &usage,
                    &limits,
                ));
            }
            let mut out = Vec::new();
            for (name, bytes) in files {
                let size = bytes.len() as u64;
                let usage = *lock(&ws.usage);
                if size > usage.bytes_left(&limits) || usage.files_left(&limits) == 0 {
                    return Err(over_budget(&name, &usage, &limits));
                }
                let clean = skills_workspace::sanitize_file_name(&name);
                let mut placed = None;
                // A name taken meanwhile (by a command) is skipped: files are
                // only ever created new here, never written through (H2).
                for _ in 0..NAME_ATTEMPTS {
                    let unique = skills_workspace::dedupe_file_name(&clean, &|n: &str| {
                        !matches!(dir.stat_at(n), Ok(None))
                    });
                    match dir.create_file(&unique, 0o644) {
                        Ok(mut f) => {
                            f.write_all(&bytes)
                                .map_err(|e| io_error(format!("writing {unique}"), e))?;
                            placed = Some(unique);
                            break;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(io_error(format!("writing {unique}"), e)),
                    }
                }
                let Some(unique) = placed else {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorKind::Io,
                        format!("no free name for attachment {name:?}"),
                    ));
                };
                lock(&ws.usage).add(size, 1);
                out.push(StagedInput::new(
                    name,
                    format!("{INPUTS_SUBDIR}/{unique}"),
                    size,
                ));
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

/// Attempts at a free attachment name.
const NAME_ATTEMPTS: usize = 16;
/// Most bytes one input may hold: 1 GiB (and never more than what is left
/// of the workspace's disk cap).
const MAX_INPUT_BYTES: u64 = 1 << 30;

fn over_budget(what: &str, usage: &Usage, limits: &WorkspaceLimits) -> WorkspaceError {
    WorkspaceError::new(
        WorkspaceErrorKind::LimitExceeded,
        format!(
            "input {what:?} does not fit in what is left of the workspace's disk cap \
             ({} bytes, {} files; threat model H7)",
            usage.bytes_left(limits),
            usage.files_left(limits)
        ),
    )
}

/// Where one input goes: a checked relative destination in a workspace.
/// Everything is done through handles on the session folder: a folder on the
/// way that is a link makes it fail, never redirects it (H2, H5).
struct Place {
    ws: Arc<Ws>,
    rel: String,
    limits: WorkspaceLimits,
    owners: Vec<u32>,
}

impl Place {
    /// The destination's folder (made when missing, handed to the sandbox's
    /// user) and file name.
    fn parent(&self) -> WorkspaceResult<(DirHandle, &str)> {
        let (parent, name) = self.rel.rsplit_once('/').unwrap_or(("", &self.rel));
        let dir = self
            .ws
            .dir
            .walk_create(parent)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::InvalidInput => {
                    io_error(format!("input destination {}", self.rel), e)
                }
                _ => {
                    let err = walk_error(&format!("input destination {}", self.rel), e);
                    if err.kind() == WorkspaceErrorKind::PathEscape {
                        WorkspaceError::new(
                            WorkspaceErrorKind::PathEscape,
                            format!("input destination {} leads out of the workspace", self.rel),
                        )
                    } else {
                        err
                    }
                }
            })?;
        Ok((dir, name))
    }

    /// The bytes one file may still take.
    fn cap(&self) -> WorkspaceResult<u64> {
        let usage = *lock(&self.ws.usage);
        if usage.files_left(&self.limits) == 0 {
            return Err(over_budget(&self.rel, &usage, &self.limits));
        }
        Ok(usage.bytes_left(&self.limits).min(MAX_INPUT_BYTES))
    }

    /// Writes what `src` gives to the destination, replacing what was there.
    fn write(&self, src: &mut dyn Read) -> WorkspaceResult<u64> {
        let cap = self.cap()?;
        let (dir, name) = self.parent()?;
        let written = dir
            .replace_with(name, src, cap, 0o644)
            .map_err(|e| self.write_error(e, cap))?;
        lock(&self.ws.usage).add(written, 1);
        Ok(written)
    }

    fn write_error(&self, e: std::io::Error, cap: u64) -> WorkspaceError {
        if e.kind() == std::io::ErrorKind::FileTooLarge {
            WorkspaceError::new(
                WorkspaceErrorKind::TooLarge,
                format!(
                    "input {} is larger than {cap} bytes (the input cap, or what is left of the \
                     workspace's disk cap)",
                    self.rel
                ),
            )
        } else {
            io_error(format!("writing {}", self.rel), e)
        }
    }

    /// Copies the regular file `rel` beneath `src` (the session, a staged
    /// skill, an allowed host folder) to the destination (H3: read beneath,
    /// never a FIFO; hard links only of `owners`, any when empty).
    fn copy_from(&self, src: &DirHandle, rel: &str, owners: &[u32]) -> WorkspaceResult<u64> {
        match src.open_regular_beneath(rel, owners) {
            Ok(Ok((mut file, _))) => self.write(&mut file),
            Ok(Err(Opened::Outside)) => Err(WorkspaceError::new(
                WorkspaceErrorKind::PathEscape,
                format!("input {rel} leads out of its root"),
            )),
            Ok(Err(Opened::ForeignLink)) => Err(WorkspaceError::new(
                WorkspaceErrorKind::PathEscape,
                format!("input {rel} is a hard link to a file of another user"),
            )),
            Ok(Err(_)) => Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!("input {rel} is not a regular file"),
            )),
            Err(e) => Err(WorkspaceError::new(
                WorkspaceErrorKind::NotFound,
                format!("input {rel}: {e}"),
            )),
        }
    }

    /// Places the host file or folder `host` (canonical, below the allowed
    /// folder `allowed`): read through a handle on `allowed`, so a link
    /// swapped in on the host side cannot lead out of it either.
    fn host(&self, allowed: &Path, host: &Path, link: bool) -> WorkspaceResult<u64> {
        if link {
            let (dir, name) = self.parent()?;
            dir.symlink(host, name)
                .map_err(|e| io_error(format!("linking {}", self.rel), e))?;
            lock(&self.ws.usage).add(0, 1);
            return Ok(std::fs::metadata(host)
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map_or(0, |m| m.len()));
        }
        let src = DirHandle::open_path(allowed).map_err(|e| io_error(allowed.display(), e))?;
        let rel = host
            .strip_prefix(allowed)
            .ok()
            .and_then(Path::to_str)
            .ok_or_else(|| {
                WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    format!("host input {} is not a UTF-8 path", host.display()),
                )
            })?
            .to_owned();
        let is_dir = src
            .walk(&rel)
            .ok()
            .and_then(|d| d.meta().ok())
            .is_some_and(|m| m.is_dir());
        if !is_dir {
            return self.copy_from(&src, &rel, &[]);
        }
        self.copy_tree(&src.walk(&rel).map_err(|e| io_error(host.display(), e))?)
    }

    /// Copies the folder `src` (links skipped) to the destination, replacing
    /// what was there.
    fn copy_tree(&self, src: &DirHandle) -> WorkspaceResult<u64> {
        let (parent, name) = self.parent()?;
        parent
            .remove_tree(name)
            .map_err(|e| io_error(&self.rel, e))?;
        let dst = parent
            .create_dir(name, 0o755)
            .map_err(|e| io_error(&self.rel, e))?;
        let mut entries = Vec::new();
        let files_left =
            usize::try_from(lock(&self.ws.usage).files_left(&self.limits)).unwrap_or(usize::MAX);
        let end = src
            .walk_tree("", files_left, &mut |e| {
                entries.push((e.rel.to_owned(), e.meta));
                true
            })
            .map_err(|e| io_error(&self.rel, e))?;
        if end.stopped || end.too_deep {
            return Err(over_budget(&self.rel, &lock(&self.ws.usage), &self.limits));
        }
        let mut total = 0u64;
        for (rel, meta) in entries {
            let shown = format!("{}/{rel}", self.rel);
            if meta.is_dir() {
                dst.walk_create(&rel).map_err(|e| walk_error(&shown, e))?;
                lock(&self.ws.usage).add(0, 1);
            } else if meta.is_file() {
                let (p, n) = rel.rsplit_once('/').unwrap_or(("", &rel));
                let dir = dst.walk(p).map_err(|e| walk_error(&shown, e))?;
                let Ok(Ok((mut file, _))) = src.open_regular_beneath(&rel, &[]) else {
                    continue;
                };
                let cap = self.cap()?.min(MAX_INPUT_BYTES.saturating_sub(total));
                let written = dir
                    .replace_with(n, &mut file, cap, 0o644)
                    .map_err(|e| self.write_error(e, cap))?;
                lock(&self.ws.usage).add(written, 1);
                total += written;
            }
        }
        Ok(total)
    }
}
