//! Composing providers (F-PRV-9): layers with precedence, filtered views, and a
//! swappable provider whose skill set can be replaced while agents use it.
//!
//! Layered and filtered views keep the catalog they built last together with the
//! inner catalogs it was built from, and rebuild only when an inner catalog
//! changed (compared in O(1) when the inner provider returns the same snapshot,
//! which every provider in this workspace does while nothing changed).

use std::fmt;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;

use crate::catalog::Catalog;
use crate::diagnostic::{Code, Diagnostic};
use crate::error::{ErrorKind, Result};
use crate::metadata::SkillMetadata;
use crate::provider::{Skill, SkillProvider, not_found};
use crate::resource::{LineRange, ResourceBytes, ResourceContent};

/// A catalog built from other catalogs, with the inputs it was built from.
#[derive(Debug)]
struct Derived {
    inputs: Vec<Catalog>,
    output: Catalog,
}

/// The last derived catalog, shared by clones of a view.
///
/// The lock only guards swapping the `Arc`: readers clone it out and compare
/// outside the lock, so no inner provider is ever called while it is held.
#[derive(Debug, Default)]
struct DerivedCache(RwLock<Option<Arc<Derived>>>);

impl DerivedCache {
    fn last(&self) -> Option<Arc<Derived>> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The cached output when it was built from the catalogs `inputs` yields
    /// (compared one by one as they come, without collecting them); `None`
    /// when one differs or `inputs` gives up (yields `None`).
    fn hit(&self, inputs: impl ExactSizeIterator<Item = Option<Catalog>>) -> Option<Catalog> {
        let derived = self.last()?;
        if derived.inputs.len() != inputs.len() {
            return None;
        }
        for (old, new) in derived.inputs.iter().zip(inputs) {
            if !old.same_entries(&new?) {
                return None;
            }
        }
        Some(derived.output.clone())
    }

    /// The cached output when it was built from exactly `inputs`; otherwise
    /// builds it with `build`, stores it and returns it.
    fn get_or_build(
        &self,
        inputs: Vec<Catalog>,
        build: impl FnOnce(&[Catalog]) -> Catalog,
    ) -> Catalog {
        if let Some(hit) = self.hit(inputs.iter().cloned().map(Some)) {
            return hit;
        }
        let output = build(&inputs);
        let derived = Arc::new(Derived {
            inputs,
            output: output.clone(),
        });
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Some(derived);
        output
    }
}

/// Several providers as one. Earlier layers win: when two layers have a skill with
/// the same name, the earlier layer's skill is used and a `layer-collision`
/// warning names both layers.
///
/// The merged catalog is cached and rebuilt only when a layer's catalog changes.
#[derive(Debug, Clone, Default)]
pub struct LayeredProvider {
    layers: Vec<(String, Arc<dyn SkillProvider>)>,
    merged: Arc<DerivedCache>,
}

impl LayeredProvider {
    /// An empty stack of layers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a layer below the existing ones (lower precedence), with a label used
    /// in collision warnings (e.g. `project`, `user`, a path).
    #[must_use]
    pub fn with_layer(
        mut self,
        label: impl Into<String>,
        provider: Arc<dyn SkillProvider>,
    ) -> Self {
        self.layers.push((label.into(), provider));
        self.merged = Arc::default();
        self
    }

    async fn catalogs(&self) -> Result<Vec<Catalog>> {
        let mut out = Vec::with_capacity(self.layers.len());
        for (_, layer) in &self.layers {
            out.push(match layer.list_cached() {
                Some(catalog) => catalog,
                None => layer.list().await?,
            });
        }
        Ok(out)
    }

    /// The first layer that has `name`, with the merged catalog.
    async fn owner(&self, name: &str) -> Result<&Arc<dyn SkillProvider>> {
        let catalogs = self.catalogs().await?;
        for ((_, layer), catalog) in self.layers.iter().zip(&catalogs) {
            if catalog.contains(name) {
                return Ok(layer);
            }
        }
        Err(not_found(name, &self.merged.get_or_build(catalogs, merge)))
    }
}

fn merge(catalogs: &[Catalog]) -> Catalog {
    // `Catalog::new` keeps the first entry of equal names: the earliest layer.
    Catalog::new(catalogs.iter().flat_map(|c| c.entries().iter().cloned()))
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
impl SkillProvider for LayeredProvider {
    async fn list(&self) -> Result<Catalog> {
        if let Some(hit) = self.list_cached() {
            return Ok(hit);
        }
        Ok(self.merged.get_or_build(self.catalogs().await?, merge))
    }

    /// The cached merge when every layer can confirm its catalog without
    /// waiting and none changed since the merge.
    fn list_cached(&self) -> Option<Catalog> {
        self.merged
            .hit(self.layers.iter().map(|(_, layer)| layer.list_cached()))
    }

    async fn get(&self, name: &str) -> Result<Arc<Skill>> {
        self.owner(name).await?.get(name).await
    }

    async fn read_resource_bytes(&self, name: &str, path: &str) -> Result<ResourceBytes> {
        self.owner(name)
            .await?
            .read_resource_bytes(name, path)
            .await
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent> {
        self.owner(name)
            .await?
            .read_resource(name, path, range)
            .await
    }

    async fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut seen: Vec<(&str, String)> = Vec::new();
        for (label, layer) in &self.layers {
            out.extend(layer.diagnostics().await);
            let catalog = match layer.list().await {
                Ok(c) => c,
                Err(err) => {
                    out.push(Diagnostic::warning(
                        Code::LayerUnavailable,
                        format!("layer `{label}` could not list its skills: {err}"),
                    ));
                    continue;
                }
            };
            for name in catalog.names() {
                match seen.iter().find(|(_, n)| n == name) {
                    Some((winner, _)) => out.push(Diagnostic::warning(
                        Code::LayerCollision,
                        format!(
                            "skill `{name}` exists in layer `{winner}` and in layer `{label}`; the one in `{winner}` is used"
                        ),
                    )),
                    None => seen.push((label.as_str(), name.to_owned())),
                }
            }
        }
        out
    }
}

/// A predicate deciding which skills a view shows.
pub type SkillFilter = Arc<dyn Fn(&SkillMetadata) -> bool + Send + Sync>;

/// A view of a provider that shows only the skills a predicate accepts, e.g. per
/// tenant or per request. Hidden skills behave exactly like missing ones.
///
/// The filtered catalog is cached and rebuilt only when the inner catalog
/// changes, so the predicate must depend on the metadata alone.
#[derive(Clone)]
pub struct FilteredProvider {
    inner: Arc<dyn SkillProvider>,
    filter: SkillFilter,
    filtered: Arc<DerivedCache>,
}

impl fmt::Debug for FilteredProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteredProvider")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl FilteredProvider {
    /// A view of `inner` showing only skills for which `filter` returns `true`.
    pub fn new<F>(inner: Arc<dyn SkillProvider>, filter: F) -> Self
    where
        F: Fn(&SkillMetadata) -> bool + Send + Sync + 'static,
    {
        Self {
            inner,
            filter: Arc::new(filter),
            filtered: Arc::default(),
        }
    }

    /// The filtered catalog, rebuilt only when the inner one changed.
    async fn catalog(&self) -> Result<Catalog> {
        if let Some(hit) = self.list_cached() {
            return Ok(hit);
        }
        let all = self.inner.list().await?;
        Ok(self.filtered.get_or_build(vec![all], |inputs| {
            Catalog::new(
                inputs
                    .iter()
                    .flat_map(|c| c.entries().iter())
                    .filter(|m| (self.filter)(m))
                    .cloned(),
            )
        }))
    }

    async fn visible(&self, name: &str) -> Result<()> {
        let catalog = self.catalog().await?;
        if catalog.contains(name) {
            Ok(())
        } else {
            Err(not_found(name, &catalog))
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
impl SkillProvider for FilteredProvider {
    async fn list(&self) -> Result<Catalog> {
        self.catalog().await
    }

    /// The cached view when the inner provider can confirm its catalog without
    /// waiting and it did not change since the view was built.
    fn list_cached(&self) -> Option<Catalog> {
        self.filtered.hit(std::iter::once(self.inner.list_cached()))
    }

    /// Asks the inner provider, then applies the filter to the skill's own
    /// metadata (the filter depends on nothing else), so a hit costs the inner
    /// `get` plus one call of the filter. A hidden or missing skill gets the
    /// "no skill named …" error of this view, which names only visible skills.
    async fn get(&self, name: &str) -> Result<Arc<Skill>> {
        match self.inner.get(name).await {
            Ok(skill) if (self.filter)(&skill.metadata) => Ok(skill),
            Ok(_) => Err(not_found(name, &self.catalog().await?)),
            Err(err) if err.kind() == ErrorKind::SkillNotFound => {
                Err(not_found(name, &self.catalog().await?))
            }
            Err(err) => Err(err),
        }
    }

    async fn read_resource_bytes(&self, name: &str, path: &str) -> Result<ResourceBytes> {
        self.visible(name).await?;
        self.inner.read_resource_bytes(name, path).await
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent> {
        self.visible(name).await?;
        self.inner.read_resource(name, path, range).await
    }

    async fn diagnostics(&self) -> Vec<Diagnostic> {
        self.inner.diagnostics().await
    }
}

/// A provider whose inner provider can be replaced at any time, e.g. to publish
/// a new set of in-code skills without restarting the agents that hold it.
/// Each call reads whichever provider is current when it starts.
#[derive(Debug)]
pub struct SwappableProvider {
    current: RwLock<Arc<dyn SkillProvider>>,
}

impl SwappableProvider {
    /// Starts with `provider`.
    pub fn new(provider: Arc<dyn SkillProvider>) -> Self {
        Self {
            current: RwLock::new(provider),
        }
    }

    /// Replaces the provider; calls already running finish on the old one.
    pub fn replace(&self, provider: Arc<dyn SkillProvider>) {
        // A poisoned lock only means a writer panicked mid-assignment of an
        // `Arc`, which cannot leave it half-written: keep going.
        let mut guard = self.current.write().unwrap_or_else(|p| p.into_inner());
        *guard = provider;
    }

    /// The provider calls go to right now.
    pub fn current(&self) -> Arc<dyn SkillProvider> {
        let guard = self.current.read().unwrap_or_else(|p| p.into_inner());
        Arc::clone(&guard)
    }
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
impl SkillProvider for SwappableProvider {
    async fn list(&self) -> Result<Catalog> {
        self.current().list().await
    }

    fn list_cached(&self) -> Option<Catalog> {
        self.current().list_cached()
    }

    async fn get(&self, name: &str) -> Result<Arc<Skill>> {
        self.current().get(name).await
    }

    async fn read_resource_bytes(&self, name: &str, path: &str) -> Result<ResourceBytes> {
        self.current().read_resource_bytes(name, path).await
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent> {
        self.current().read_resource(name, path, range).await
    }

    async fn diagnostics(&self) -> Vec<Diagnostic> {
        self.current().diagnostics().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::in_code::{InCodeProvider, define_skill};

    fn provider(skills: &[(&str, &str)]) -> Arc<dyn SkillProvider> {
        let built = skills
            .iter()
            .map(|(n, d)| define_skill(*n, *d).body(*d).build().expect("valid"));
        Arc::new(InCodeProvider::new(built).expect("provider"))
    }

    #[test]
    fn earlier_layers_win_and_collisions_warn() {
        let layered = LayeredProvider::new()
            .with_layer(
                "project",
                provider(&[("a", "project a"), ("b", "project b")]),
            )
            .with_layer("user", provider(&[("a", "user a"), ("c", "user c")]));
        pollster::block_on(async {
            let list = layered.list().await.expect("list");
            assert_eq!(list.names().collect::<Vec<_>>(), vec!["a", "b", "c"]);
            assert_eq!(
                list.get("a").map(|m| m.description.as_str()),
                Some("project a")
            );
            assert_eq!(layered.get("a").await.expect("get").body, "project a");
            assert_eq!(layered.get("c").await.expect("get").body, "user c");
            let e = layered.get("zz").await.expect_err("missing");
            assert_eq!(e.available(), ["a", "b", "c"]);
            let diags = layered.diagnostics().await;
            assert_eq!(diags.len(), 1);
            assert_eq!(diags[0].code, Code::LayerCollision);
            assert!(diags[0].message.contains("`project`") && diags[0].message.contains("`user`"));
        });
    }

    #[test]
    fn swappable_provider_serves_the_latest_set() {
        let swap = SwappableProvider::new(provider(&[("a", "x")]));
        pollster::block_on(async {
            assert_eq!(swap.list().await.expect("list").len(), 1);
            swap.replace(provider(&[("a", "x2"), ("b", "y")]));
            let list = swap.list().await.expect("list");
            assert_eq!(list.names().collect::<Vec<_>>(), vec!["a", "b"]);
            assert_eq!(swap.get("a").await.expect("get").body, "x2");
            assert_eq!(swap.current().list().await.expect("list").len(), 2);
        });
    }

    #[test]
    fn derived_catalogs_are_rebuilt_only_when_an_inner_catalog_changes() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let inner = Arc::new(SwappableProvider::new(provider(&[("a", "x"), ("b", "y")])));
        let calls = Arc::new(AtomicUsize::new(0));
        let counter = calls.clone();
        let view = FilteredProvider::new(inner.clone(), move |m| {
            counter.fetch_add(1, Ordering::SeqCst);
            m.name.as_str() != "b"
        });
        let layered = LayeredProvider::new()
            .with_layer("one", inner.clone())
            .with_layer("two", provider(&[("c", "z")]));
        pollster::block_on(async {
            let first = view.list().await.expect("list");
            let merged = layered.list().await.expect("list");
            for _ in 0..5 {
                assert!(view.list().await.expect("list").same_entries(&first));
                assert!(view.get("a").await.is_ok());
                assert!(layered.list().await.expect("list").same_entries(&merged));
            }
            // Two entries filtered once for the view; each `get` asks the
            // filter about the one skill it returns, nothing more.
            assert_eq!(calls.load(Ordering::SeqCst), 2 + 5);
            inner.replace(provider(&[("a", "x"), ("b", "y"), ("d", "w")]));
            let names = |c: Catalog| c.names().map(str::to_owned).collect::<Vec<_>>();
            assert_eq!(names(view.list().await.expect("list")), ["a", "d"]);
            assert_eq!(calls.load(Ordering::SeqCst), 7 + 3);
            assert_eq!(
                names(layered.list().await.expect("list")),
                ["a", "b", "c", "d"]
            );
        });
    }

    #[test]
    fn filtered_view_hides_skills() {
        let view = FilteredProvider::new(provider(&[("a", "x"), ("b", "y")]), |m| {
            m.name.as_str() != "b"
        });
        pollster::block_on(async {
            assert_eq!(view.list().await.expect("list").len(), 1);
            let e = view.get("b").await.expect_err("hidden");
            assert_eq!(e.kind(), ErrorKind::SkillNotFound);
            assert_eq!(e.available(), ["a"]);
            assert!(view.read_resource("b", "x", None).await.is_err());
        });
    }
}
