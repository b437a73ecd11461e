//! Artifacts (F-EXE-6): files a run saves beyond its workspace, with versions.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Mutex;

use async_trait::async_trait;
use skills_workspace::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult, validate_session_id};

use crate::fsutil::{blocking, io_error};

/// One version of a saved artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Artifact {
    /// Its name (may hold `/`, e.g. `reports/a.txt`).
    pub name: String,
    /// Its version, from 1.
    pub version: u64,
    /// Its MIME type.
    pub mime_type: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Where runs save files (`save_as_artifacts`, `outputs.save`) and where
/// `artifact://` inputs come from. Artifacts are scoped by session; every save
/// creates a new version.
#[async_trait]
pub trait ArtifactService: Send + Sync + fmt::Debug {
    /// Saves a new version of `name`; returns its version number.
    async fn save(
        &self,
        session_id: &str,
        name: &str,
        mime_type: &str,
        bytes: Vec<u8>,
    ) -> WorkspaceResult<u64>;

    /// Loads a version of `name` (the latest for `None`).
    async fn load(
        &self,
        session_id: &str,
        name: &str,
        version: Option<u64>,
    ) -> WorkspaceResult<Artifact>;

    /// The versions of `name`, ascending (empty when there is none).
    async fn versions(&self, session_id: &str, name: &str) -> WorkspaceResult<Vec<u64>>;
}

fn check_name(name: &str) -> WorkspaceResult<()> {
    if name.is_empty() || name.len() > 512 || name.contains('\0') {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            format!("invalid artifact name {name:?}"),
        ));
    }
    Ok(())
}

fn not_found(name: &str, version: Option<u64>) -> WorkspaceError {
    let v = version.map(|v| format!("@{v}")).unwrap_or_default();
    WorkspaceError::new(
        WorkspaceErrorKind::NotFound,
        format!("no artifact {name}{v}"),
    )
}

/// Artifacts in memory, lost when dropped; for tests and short-lived agents.
#[derive(Debug, Default)]
pub struct InMemoryArtifacts {
    store: Mutex<HashMap<(String, String), Vec<Artifact>>>,
}

impl InMemoryArtifacts {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl ArtifactService for InMemoryArtifacts {
    async fn save(
        &self,
        session_id: &str,
        name: &str,
        mime_type: &str,
        bytes: Vec<u8>,
    ) -> WorkspaceResult<u64> {
        validate_session_id(session_id)?;
        check_name(name)?;
        let mut store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let list = store
            .entry((session_id.to_owned(), name.to_owned()))
            .or_default();
        let version = list.last().map_or(1, |a| a.version + 1);
        list.push(Artifact {
            name: name.to_owned(),
            version,
            mime_type: mime_type.to_owned(),
            bytes,
        });
        Ok(version)
    }

    async fn load(
        &self,
        session_id: &str,
        name: &str,
        version: Option<u64>,
    ) -> WorkspaceResult<Artifact> {
        let store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let list = store
            .get(&(session_id.to_owned(), name.to_owned()))
            .ok_or_else(|| not_found(name, version))?;
        let found = match version {
            Some(v) => list.iter().find(|a| a.version == v),
            None => list.last(),
        };
        found.cloned().ok_or_else(|| not_found(name, version))
    }

    async fn versions(&self, session_id: &str, name: &str) -> WorkspaceResult<Vec<u64>> {
        let store = self.store.lock().unwrap_or_else(|p| p.into_inner());
        Ok(store
            .get(&(session_id.to_owned(), name.to_owned()))
            .map(|l| l.iter().map(|a| a.version).collect())
            .unwrap_or_default())
    }
}

/// Artifacts in a folder: `<root>/<session>/<encoded name>/<version>` with the
/// MIME type in `<version>.mime`. Names are percent-encoded into one folder
/// name, so no name can reach outside the root.
#[derive(Debug, Clone)]
pub struct FsArtifacts {
    root: PathBuf,
}

impl FsArtifacts {
    /// A store under `root` (created on first save).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    fn dir(&self, session_id: &str, name: &str) -> WorkspaceResult<PathBuf> {
        validate_session_id(session_id)?;
        check_name(name)?;
        let encoded: String = name
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_') {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        Ok(self.root.join(session_id).join(encoded))
    }
}

fn list_versions(dir: &std::path::Path) -> Vec<u64> {
    let mut v: Vec<u64> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

#[async_trait]
impl ArtifactService for FsArtifacts {
    async fn save(
        &self,
        session_id: &str,
        name: &str,
        mime_type: &str,
        bytes: Vec<u8>,
    ) -> WorkspaceResult<u64> {
        let dir = self.dir(session_id, name)?;
        let mime = mime_type.to_owned();
        blocking(move || {
            use std::io::Write;
            std::fs::create_dir_all(&dir).map_err(|e| io_error("artifact folder", e))?;
            let mut version = list_versions(&dir).last().copied().unwrap_or(0) + 1;
            loop {
                let path = dir.join(version.to_string());
                match std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)
                {
                    Ok(mut f) => {
                        std::fs::write(dir.join(format!("{version}.mime")), &mime)
                            .map_err(|e| io_error("saving artifact", e))?;
                        f.write_all(&bytes)
                            .map_err(|e| io_error("saving artifact", e))?;
                        return Ok(version);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => version += 1,
                    Err(e) => return Err(io_error("saving artifact", e)),
                }
            }
        })
        .await
    }

    async fn load(
        &self,
        session_id: &str,
        name: &str,
        version: Option<u64>,
    ) -> WorkspaceResult<Artifact> {
        let dir = self.dir(session_id, name)?;
        let name = name.to_owned();
        blocking(move || {
            let v = match version {
                Some(v) => v,
                None => *list_versions(&dir)
                    .last()
                    .ok_or_else(|| not_found(&name, None))?,
            };
            let bytes = std::fs::read(dir.join(v.to_string())).map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    not_found(&name, version)
                } else {
                    io_error("loading artifact", e)
                }
            })?;
            let mime_type = std::fs::read_to_string(dir.join(format!("{v}.mime")))
                .unwrap_or_else(|_| "application/octet-stream".to_owned());
            Ok(Artifact {
                name,
                version: v,
                mime_type,
                bytes,
            })
        })
        .await
    }

    async fn versions(&self, session_id: &str, name: &str) -> WorkspaceResult<Vec<u64>> {
        let dir = self.dir(session_id, name)?;
        blocking(move || Ok(list_versions(&dir))).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn exercise(store: &dyn ArtifactService) {
        assert_eq!(
            store
                .save("s", "reports/a.txt", "text/plain", b"one".to_vec())
                .await
                .unwrap(),
            1
        );
        assert_eq!(
            store
                .save("s", "reports/a.txt", "text/plain", b"two".to_vec())
                .await
                .unwrap(),
            2
        );
        assert_eq!(
            store.load("s", "reports/a.txt", None).await.unwrap().bytes,
            b"two"
        );
        assert_eq!(
            store
                .load("s", "reports/a.txt", Some(1))
                .await
                .unwrap()
                .bytes,
            b"one"
        );
        assert_eq!(store.versions("s", "reports/a.txt").await.unwrap(), [1, 2]);
        assert_eq!(
            store
                .load("other", "reports/a.txt", None)
                .await
                .unwrap_err()
                .kind(),
            WorkspaceErrorKind::NotFound
        );
        assert_eq!(
            store
                .load("s", "reports/a.txt", Some(9))
                .await
                .unwrap_err()
                .kind(),
            WorkspaceErrorKind::NotFound
        );
        assert!(store.save("../x", "a", "text/plain", vec![]).await.is_err());
    }

    #[tokio::test]
    async fn in_memory() {
        exercise(&InMemoryArtifacts::new()).await;
    }

    #[tokio::test]
    async fn on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsArtifacts::new(dir.path());
        exercise(&store).await;
        assert!(dir.path().join("s/reports%2Fa%2Etxt/2").is_file());
    }
}
