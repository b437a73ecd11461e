//! `SKILL.md` parsing (frontmatter, YAML, validation) in strict and lenient
//! mode, then catalog rendering of whatever parsed: nothing may panic, and a
//! rendered catalog must be byte-stable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skills_core::{Catalog, CatalogFormat, Origin, RenderOptions, ValidationOptions};

fuzz_target!(|data: &[u8]| {
    let origin = Origin::new(Some("fuzz/SKILL.md"), Some("fuzz"));
    let no_dir = Origin::new(None, None);
    for options in [ValidationOptions::strict(), ValidationOptions::lenient()] {
        for origin in [origin, no_dir] {
            let outcome = skills_core::parse_skill_md_bytes(data, origin, &options);
            for diagnostic in &outcome.diagnostics {
                let _ = diagnostic.to_string();
            }
            if let Some(document) = outcome.document {
                let catalog = Catalog::new([document.metadata]);
                for format in [CatalogFormat::Xml, CatalogFormat::Markdown] {
                    let options = RenderOptions::default().with_format(format);
                    let first = catalog.render(&options);
                    assert_eq!(first, catalog.render(&options), "catalog is not stable");
                }
            }
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = skills_core::parse_skill_md(text, origin, &ValidationOptions::lenient());
    }
});
