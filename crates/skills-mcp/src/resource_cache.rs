//! Skill files kept in memory for `resources/read`, per skill snapshot.
//!
//! Reading a file through the provider is race-free but costs a trip to the
//! blocking pool and three system calls (open beneath the skill folder,
//! read, close) on every request: most of the time of a read over HTTP. So
//! small files are kept, each with the skill snapshot (`Arc<Skill>`) it was
//! read under, and served while the provider hands out that same snapshot:
//! the rule the manifest cache follows, so a file served from here is the
//! one its digest describes, and an edit shows up when the provider's
//! staleness check gives a new snapshot (the filesystem provider: one
//! cooldown, 2 s by default). A snapshot is held by a `Weak`, which keeps
//! no skill alive and cannot be mistaken for a newer one at the same
//! address.
//!
//! A file is kept as `resources/read` serves it (text, or base64 for a
//! binary file), so the UTF-8 and binary checks and the encoding run once
//! per snapshot rather than on every read.
//!
//! Bounded: files up to [`MAX_CACHED_FILE_BYTES`], [`CACHE_BYTES`] in all,
//! the least recently read dropped first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use rmcp::model::ResourceContents;
use skills_core::{ResourceBytes, Skill, SkillProvider};

/// Largest file kept in memory; larger ones are read from the provider on
/// every request.
pub(crate) const MAX_CACHED_FILE_BYTES: usize = 256 * 1024;

/// Bytes of files kept in memory at most, all skills together.
pub(crate) const CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Files by skill name, then by path.
#[derive(Debug, Default)]
pub(crate) struct ResourceCache {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    skills: HashMap<String, HashMap<String, Entry>>,
    bytes: usize,
    /// Bumped on every hit and insert: the recency of an entry.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    snapshot: Weak<Skill>,
    file: Arc<ServedFile>,
    used: u64,
}

/// A file as `resources/read` serves it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ServedFile {
    form: Form,
    mime: String,
}

#[derive(Debug, PartialEq, Eq)]
enum Form {
    /// UTF-8 text without NUL bytes.
    Text(String),
    /// Anything else, base64-encoded.
    Blob(String),
}

impl ServedFile {
    /// Text when the bytes are UTF-8 and do not look binary
    /// ([`skills_core::looks_binary`]), else a base64 blob.
    fn new(file: &ResourceBytes) -> Self {
        let form = match std::str::from_utf8(&file.bytes) {
            Ok(text) if !skills_core::looks_binary(&file.bytes) => Form::Text(text.to_owned()),
            _ => Form::Blob(BASE64_STANDARD.encode(&file.bytes)),
        };
        Self {
            form,
            mime: file.mime.clone(),
        }
    }

    /// The `resources/read` contents for `uri`.
    pub(crate) fn contents(&self, uri: String) -> ResourceContents {
        match &self.form {
            Form::Text(text) => ResourceContents::text(text.as_str(), uri),
            Form::Blob(blob) => ResourceContents::blob(blob.as_str(), uri),
        }
        .with_mime_type(self.mime.as_str())
    }

    /// Bytes held.
    fn size(&self) -> usize {
        match &self.form {
            Form::Text(s) | Form::Blob(s) => s.len(),
        }
    }
}

impl ResourceCache {
    /// The file `path` of the skill `name`: from memory when it was read
    /// under the snapshot the provider hands out now, else from the
    /// provider (and kept, when small enough).
    ///
    /// # Errors
    ///
    /// The provider's, for an unknown skill or a file it cannot read.
    pub(crate) async fn read(
        &self,
        provider: &dyn SkillProvider,
        name: &str,
        path: &str,
    ) -> Result<Arc<ServedFile>, skills_core::Error> {
        let snapshot = provider.get(name).await?;
        if let Some(file) = self.hit(name, path, &snapshot) {
            return Ok(file);
        }
        let bytes = provider.read_resource_bytes(name, path).await?;
        let file = Arc::new(ServedFile::new(&bytes));
        if bytes.bytes.len() <= MAX_CACHED_FILE_BYTES {
            self.insert(name, path, &snapshot, Arc::clone(&file));
        }
        Ok(file)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn hit(&self, name: &str, path: &str, snapshot: &Arc<Skill>) -> Option<Arc<ServedFile>> {
        let mut state = self.state();
        state.clock += 1;
        let clock = state.clock;
        let entry = state.skills.get_mut(name)?.get_mut(path)?;
        if !std::ptr::eq(entry.snapshot.as_ptr(), Arc::as_ptr(snapshot)) {
            return None;
        }
        entry.used = clock;
        Some(Arc::clone(&entry.file))
    }

    fn insert(&self, name: &str, path: &str, snapshot: &Arc<Skill>, file: Arc<ServedFile>) {
        let size = file.size();
        let mut state = self.state();
        // A file read under an older snapshot goes, whatever its size.
        if let Some(old) = state
            .skills
            .get_mut(name)
            .and_then(|files| files.remove(path))
        {
            state.bytes -= old.file.size();
        }
        while state.bytes + size > CACHE_BYTES && state.evict_least_recent() {}
        if state.bytes + size > CACHE_BYTES {
            return;
        }
        state.clock += 1;
        let entry = Entry {
            snapshot: Arc::downgrade(snapshot),
            file,
            used: state.clock,
        };
        state.bytes += size;
        state
            .skills
            .entry(name.to_owned())
            .or_default()
            .insert(path.to_owned(), entry);
    }
}

impl State {
    /// Drops the least recently read file; `false` when there is none.
    fn evict_least_recent(&mut self) -> bool {
        let oldest = self
            .skills
            .iter()
            .flat_map(|(name, files)| files.iter().map(move |(path, e)| (e.used, name, path)))
            .min_by_key(|(used, _, _)| *used)
            .map(|(_, name, path)| (name.clone(), path.clone()));
        let Some((name, path)) = oldest else {
            return false;
        };
        if let Some(files) = self.skills.get_mut(&name) {
            if let Some(entry) = files.remove(&path) {
                self.bytes -= entry.file.size();
            }
            if files.is_empty() {
                self.skills.remove(&name);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use skills_core::{Catalog, InCodeProvider, define_skill};

    use super::*;

    /// An in-code provider that counts file reads and can swap its skills
    /// (a new snapshot, as after an edit).
    #[derive(Debug)]
    struct Counting {
        inner: Mutex<Arc<InCodeProvider>>,
        reads: AtomicUsize,
    }

    fn provider(text: &str) -> Arc<InCodeProvider> {
        Arc::new(
            InCodeProvider::new([define_skill("pdf", "Reads PDFs. Use for PDFs.")
                .body("Body.")
                .resource("notes.md", text)
                .resource("big.txt", "x".repeat(MAX_CACHED_FILE_BYTES + 1))
                .build()
                .expect("a valid skill")])
            .expect("a valid provider"),
        )
    }

    impl Counting {
        fn current(&self) -> Arc<InCodeProvider> {
            Arc::clone(&self.inner.lock().unwrap_or_else(PoisonError::into_inner))
        }
    }

    #[async_trait::async_trait]
    impl SkillProvider for Counting {
        async fn list(&self) -> skills_core::Result<Catalog> {
            self.current().list().await
        }

        async fn get(&self, name: &str) -> skills_core::Result<Arc<Skill>> {
            self.current().get(name).await
        }

        async fn read_resource(
            &self,
            name: &str,
            path: &str,
            range: Option<skills_core::LineRange>,
        ) -> skills_core::Result<skills_core::ResourceContent> {
            self.current().read_resource(name, path, range).await
        }

        async fn read_resource_bytes(
            &self,
            name: &str,
            path: &str,
        ) -> skills_core::Result<ResourceBytes> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            self.current().read_resource_bytes(name, path).await
        }
    }

    #[tokio::test]
    async fn a_file_is_read_once_per_snapshot_and_big_ones_every_time() {
        let counting = Counting {
            inner: Mutex::new(provider("first")),
            reads: AtomicUsize::new(0),
        };
        let cache = ResourceCache::default();
        let text = |file: &ServedFile| match &file.form {
            Form::Text(text) => text.clone(),
            Form::Blob(_) => panic!("a text file served as a blob"),
        };
        for _ in 0..3 {
            let file = cache
                .read(&counting, "pdf", "notes.md")
                .await
                .expect("read");
            assert_eq!(text(&file), "first");
        }
        assert_eq!(counting.reads.load(Ordering::SeqCst), 1);
        for _ in 0..2 {
            cache.read(&counting, "pdf", "big.txt").await.expect("read");
        }
        assert_eq!(counting.reads.load(Ordering::SeqCst), 3);
        // A new snapshot: the file is read again, and the new bytes served.
        *counting
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = provider("second");
        let file = cache
            .read(&counting, "pdf", "notes.md")
            .await
            .expect("read");
        assert_eq!(text(&file), "second");
        assert_eq!(counting.reads.load(Ordering::SeqCst), 4);
        assert!(cache.read(&counting, "pdf", "missing.md").await.is_err());
        assert!(cache.read(&counting, "nope", "notes.md").await.is_err());
    }

    #[test]
    fn binary_files_are_served_as_base64_and_text_as_text() {
        let path = skills_core::ResourcePath::parse("a.bin").expect("a path");
        let served =
            |bytes: &[u8]| ServedFile::new(&ResourceBytes::new(path.clone(), bytes.to_vec()));
        assert_eq!(
            served(b"plain text\n").form,
            Form::Text("plain text\n".to_owned())
        );
        assert_eq!(
            served(b"nul\0inside").form,
            Form::Blob("bnVsAGluc2lkZQ==".to_owned())
        );
        assert_eq!(served(b"\xff\xfe").form, Form::Blob("//4=".to_owned()));
        let contents = served(b"hi").contents("skill://pdf/a.bin".to_owned());
        assert_eq!(
            serde_json::to_value(&contents).expect("serializes")["text"],
            "hi"
        );
    }

    #[tokio::test]
    async fn the_budget_drops_the_least_recently_read_file() {
        let cache = ResourceCache::default();
        let skill = provider("x").get("pdf").await.expect("the skill");
        let file = |n: usize| {
            Arc::new(ServedFile {
                form: Form::Text("x".repeat(n)),
                mime: "text/plain".to_owned(),
            })
        };
        let quarter = CACHE_BYTES / 4;
        for i in 0..4 {
            cache.insert("pdf", &format!("{i}"), &skill, file(quarter));
        }
        assert!(cache.hit("pdf", "0", &skill).is_some());
        cache.insert("pdf", "4", &skill, file(quarter));
        // 1 was the least recently read (0 was just read).
        assert!(cache.hit("pdf", "1", &skill).is_none());
        assert!(cache.hit("pdf", "0", &skill).is_some());
        assert!(cache.hit("pdf", "4", &skill).is_some());
        assert!(cache.state().bytes <= CACHE_BYTES);
    }
}
