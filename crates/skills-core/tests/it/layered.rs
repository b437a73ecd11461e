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
