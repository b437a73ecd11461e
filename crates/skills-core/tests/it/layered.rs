//! The layered provider (precedence, collision warnings) and filtered views.

use std::sync::Arc;

use skills_core::{
    Code, ErrorKind, FilteredProvider, InCodeProvider, LayeredProvider, SkillProvider, define_skill,
};

use super::support::in_code;

fn layer(skills: &[(&str, &str)]) -> Arc<dyn SkillProvider> {
    let built = skills.iter().map(|(name, body)| {
        define_skill(*name, format!("{body}. Use in tests."))
            .body(*body)
            .resource("references/which.md", format!("from {body}\n"))
            .build()
            .expect("valid")
    });
    Arc::new(InCodeProvider::new(built).expect("provider"))
}

fn three_layers() -> LayeredProvider {
    LayeredProvider::new()
        .with_layer(
            "project",
            layer(&[("shared", "project shared"), ("proj-only", "project only")]),
        )
        .with_layer(
            "user",
            layer(&[("shared", "user shared"), ("common", "user common")]),
        )
        .with_layer(
            "builtin",
            layer(&[
                ("shared", "builtin shared"),
                ("common", "builtin common"),
                ("base", "builtin base"),
            ]),
        )
}

#[test]
fn earlier_layers_win_for_list_get_and_resources() {
    let layered = three_layers();
    pollster::block_on(async {
        let catalog = layered.list().await.expect("list");
        assert_eq!(
            catalog.names().collect::<Vec<_>>(),
            vec!["base", "common", "proj-only", "shared"]
        );
        assert_eq!(
            catalog.get("shared").map(|m| m.description.as_str()),
            Some("project shared. Use in tests.")
        );
        assert_eq!(
            catalog.get("common").map(|m| m.description.as_str()),
            Some("user common. Use in tests.")
        );
        for (name, body) in [
            ("shared", "project shared"),
            ("common", "user common"),
            ("base", "builtin base"),
        ] {
            assert_eq!(layered.get(name).await.expect("get").body, body);
            let content = layered
                .read_resource(name, "references/which.md", None)
                .await
                .expect("read");
            assert_eq!(content.text, format!("from {body}\n"));
        }
        let err = layered.get("missing").await.expect_err("missing");
        assert_eq!(err.kind(), ErrorKind::SkillNotFound);
        assert_eq!(err.available(), ["base", "common", "proj-only", "shared"]);
        let err = layered
            .read_resource("shared", "../../etc/passwd", None)
            .await
            .expect_err("traversal");
        assert_eq!(err.kind(), ErrorKind::InvalidPath);
    });
}

#[test]
fn collision_warnings_name_both_layers() {
    let diags = pollster::block_on(three_layers().diagnostics());
    let lines: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        vec![
            "warning[layer-collision]: skill `shared` exists in layer `project` and in layer `user`; the one in `project` is used",
            "warning[layer-collision]: skill `common` exists in layer `user` and in layer `builtin`; the one in `user` is used",
            "warning[layer-collision]: skill `shared` exists in layer `project` and in layer `builtin`; the one in `project` is used",
        ],
    );
    assert!(
        diags
            .iter()
            .all(|d| d.code == Code::LayerCollision && !d.is_error())
    );
}

#[test]
fn no_layers_and_no_collisions() {
    pollster::block_on(async {
        let empty = LayeredProvider::new();
        assert!(empty.list().await.expect("list").is_empty());
        assert!(empty.diagnostics().await.is_empty());
        let err = empty.get("x").await.expect_err("missing");
        assert_eq!(err.kind(), ErrorKind::SkillNotFound);
        assert!(err.available().is_empty());
        let disjoint = LayeredProvider::new()
            .with_layer("a", layer(&[("one", "one")]))
            .with_layer("b", layer(&[("two", "two")]));
        assert!(disjoint.diagnostics().await.is_empty());
        assert_eq!(disjoint.list().await.expect("list").len(), 2);
    });
}

#[test]
fn filtered_view_hides_skills_like_missing_ones() {
    let inner: Arc<dyn SkillProvider> = Arc::new(three_layers());
    let view = FilteredProvider::new(inner.clone(), |m| !m.name.as_str().starts_with("proj"));
    pollster::block_on(async {
        let catalog = view.list().await.expect("list");
        assert_eq!(
            catalog.names().collect::<Vec<_>>(),
            vec!["base", "common", "shared"]
        );
        // A hidden skill gives the same error as a missing one, listing only the
        // visible names.
        let hidden = view.get("proj-only").await.expect_err("hidden");
        let missing = view.get("nope").await.expect_err("missing");
        assert_eq!(hidden.kind(), ErrorKind::SkillNotFound);
        assert_eq!(hidden.available(), missing.available());
        assert_eq!(hidden.available(), ["base", "common", "shared"]);
        assert_eq!(
            hidden.to_string(),
            "no skill named `proj-only`; available: base, common, shared"
        );
        let err = view
            .read_resource("proj-only", "references/which.md", None)
            .await
            .expect_err("hidden");
        assert_eq!(err.kind(), ErrorKind::SkillNotFound);
        // Visible skills pass through, with the layer precedence of the inner provider.
        assert_eq!(
            view.get("shared").await.expect("get").body,
            "project shared"
        );
        assert_eq!(
            view.read_resource("base", "references/which.md", None)
                .await
                .expect("read")
                .text,
            "from builtin base\n"
        );
        // The inner provider is untouched.
        assert!(inner.get("proj-only").await.is_ok());
        // Diagnostics pass through from the inner provider.
        assert_eq!(view.diagnostics().await.len(), 3);
    });
}

#[test]
fn filters_compose_and_can_hide_everything() {
    let base: Arc<dyn SkillProvider> = Arc::new(
        InCodeProvider::new([
            in_code("alpha", "Alpha things.", "a"),
            in_code("beta", "Beta things.", "b"),
            in_code("gamma", "Gamma things.", "c"),
        ])
        .expect("provider"),
    );
    let no_beta: Arc<dyn SkillProvider> = Arc::new(FilteredProvider::new(base.clone(), |m| {
        m.name.as_str() != "beta"
    }));
    let only_a = FilteredProvider::new(no_beta, |m| m.name.as_str().starts_with('a'));
    let nothing = FilteredProvider::new(base, |_| false);
    pollster::block_on(async {
        assert_eq!(
            only_a
                .list()
                .await
                .expect("list")
                .names()
                .collect::<Vec<_>>(),
            vec!["alpha"]
        );
        assert_eq!(
            only_a.get("gamma").await.expect_err("hidden").available(),
            ["alpha"]
        );
        assert!(nothing.list().await.expect("list").is_empty());
        assert_eq!(
            nothing.get("alpha").await.expect_err("hidden").kind(),
            ErrorKind::SkillNotFound
        );
    });
}

/// Counts `list` calls and can hide its cached catalog, to tell the fast path
/// from the awaited one.
#[derive(Debug)]
struct Counting {
    inner: Arc<dyn SkillProvider>,
    lists: std::sync::atomic::AtomicUsize,
    cached: bool,
}

#[async_trait::async_trait]
impl SkillProvider for Counting {
    async fn list(&self) -> skills_core::Result<skills_core::Catalog> {
        self.lists
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.list().await
    }
    fn list_cached(&self) -> Option<skills_core::Catalog> {
        if self.cached {
            self.inner.list_cached()
        } else {
            None
        }
    }
    async fn get(&self, name: &str) -> skills_core::Result<Arc<skills_core::Skill>> {
        self.inner.get(name).await
    }
    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<skills_core::LineRange>,
    ) -> skills_core::Result<skills_core::ResourceContent> {
        self.inner.read_resource(name, path, range).await
    }
}

fn counting(skills: &[(&str, &str)], cached: bool) -> Arc<Counting> {
    Arc::new(Counting {
        inner: layer(skills),
        lists: Default::default(),
        cached,
    })
}

#[test]
fn warm_layered_list_uses_the_layers_cached_catalogs_and_awaits_the_others() {
    let fast = counting(&[("a", "fast a")], true);
    let slow = counting(&[("b", "slow b")], false);
    let layered = LayeredProvider::new()
        .with_layer("fast", fast.clone())
        .with_layer("slow", slow.clone());
    pollster::block_on(async {
        for _ in 0..3 {
            let names: Vec<_> = layered
                .list()
                .await
                .expect("list")
                .names()
                .map(str::to_owned)
                .collect();
            assert_eq!(names, ["a", "b"]);
        }
    });
    let count = |c: &Counting| c.lists.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(count(&fast), 0, "the fast layer answered from its cache");
    assert_eq!(
        count(&slow),
        3,
        "a layer without a cached answer is awaited"
    );
    assert!(layered.list_cached().is_none(), "one layer cannot confirm");

    let all_fast = LayeredProvider::new().with_layer("fast", fast.clone());
    assert!(all_fast.list_cached().is_none(), "nothing merged yet");
    pollster::block_on(all_fast.list()).expect("list");
    let cached = all_fast.list_cached().expect("merged and confirmed");
    assert_eq!(cached.names().collect::<Vec<_>>(), ["a"]);
    let filtered = FilteredProvider::new(Arc::new(all_fast), |_| true);
    assert!(filtered.list_cached().is_none(), "nothing filtered yet");
    pollster::block_on(filtered.list()).expect("list");
    assert!(filtered.list_cached().is_some());
}

#[test]
fn layered_list_follows_a_swapped_layer_through_the_fast_path() {
    let swappable = Arc::new(skills_core::SwappableProvider::new(layer(&[("a", "old")])));
    let layered = LayeredProvider::new().with_layer("swap", swappable.clone());
    let filtered = FilteredProvider::new(Arc::new(layered.clone()), |_| true);
    let names = |p: &dyn SkillProvider| {
        pollster::block_on(p.list())
            .expect("list")
            .names()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&layered), ["a"]);
    assert_eq!(names(&filtered), ["a"]);
    swappable.replace(layer(&[("b", "new"), ("c", "new")]));
    assert_eq!(names(&layered), ["b", "c"]);
    assert_eq!(names(&filtered), ["b", "c"]);
    assert_eq!(
        layered
            .list_cached()
            .expect("confirmed")
            .names()
            .collect::<Vec<_>>(),
        ["b", "c"]
    );
}
