//! A skill's documents (F-PRV-10) on real files: listing, reads by name, and the
//! unknown-document error that lists the available ones.

use skills_core::{ErrorKind, ResourcePath};
use skills_core::{list_docs, read_doc};

use super::support::{Root, assert_good_loads, block_on, expect_kind, get};

const DOCS: [&str; 5] = [
    "README.txt",
    "notes.md",
    "references/deep/er/b.txt",
    "references/guide.md",
    "references/z.md",
];

fn root() -> Root {
    let root = Root::new();
    root.skill("pdf", "Body.");
    root.write("pdf/notes.md", "notes\n");
    root.write("pdf/README.txt", "readme\n");
    root.write("pdf/references/guide.md", "guide\n");
    root.write("pdf/references/z.md", "z\n");
    root.write("pdf/references/deep/er/b.txt", "one\ntwo\n");
    root.write("pdf/references/chart.png", b"\x89PNG\0");
    root.write("pdf/scripts/run.md", "not a doc\n");
    root.write("pdf/assets/form.txt", "not a doc\n");
    root.write("pdf/tool.py", "print()\n");
    root.write("pdf/.hidden.md", "hidden\n");
    root
}

#[test]
fn lists_the_docs_of_a_skill_on_disk() {
    let root = root();
    let provider = root.provider();
    let skill = get(&provider, "pdf").expect("get");
    let docs: Vec<_> = list_docs(&skill);
    assert_eq!(
        docs.iter().map(ResourcePath::as_str).collect::<Vec<_>>(),
        DOCS
    );
    assert_good_loads(&provider);
}

#[test]
fn reads_docs_by_name() {
    let root = root();
    let provider = root.provider();
    let doc = block_on(read_doc(&provider, "pdf", "references/deep/er/b.txt")).expect("read");
    assert_eq!(doc.text, "one\ntwo\n");
    assert_eq!(doc.total_lines, 2);
    let doc = block_on(read_doc(&provider, "pdf", "README.txt")).expect("read");
    assert_eq!(doc.text, "readme\n");
}

#[test]
fn unknown_doc_lists_the_available_ones() {
    let root = root();
    let provider = root.provider();
    for unknown in [
        "guide.md",
        "SKILL.md",
        "scripts/run.md",
        "assets/form.txt",
        "references/chart.png",
        ".hidden.md",
        "../good/SKILL.md",
        "/etc/passwd",
    ] {
        let err = expect_kind(
            block_on(read_doc(&provider, "pdf", unknown)),
            ErrorKind::ResourceNotFound,
        );
        assert!(err.message().contains(&format!("`{unknown}`")), "{err}");
        assert_eq!(err.available(), DOCS, "{unknown}");
    }
}

#[cfg(unix)]
#[test]
fn a_doc_symlinked_outside_the_skill_is_neither_listed_nor_read() {
    let root = root();
    let secret = root.outside().join("secret.md");
    std::fs::write(&secret, "secret\n").expect("write");
    std::os::unix::fs::symlink(&secret, root.join("pdf/references/leak.md")).expect("symlink");
    let provider = root.provider();
    let skill = get(&provider, "pdf").expect("get");
    assert!(
        !list_docs(&skill)
            .iter()
            .any(|d| d.as_str() == "references/leak.md")
    );
    let err = expect_kind(
        block_on(read_doc(&provider, "pdf", "references/leak.md")),
        ErrorKind::ResourceNotFound,
    );
    assert_eq!(err.available(), DOCS);
}
