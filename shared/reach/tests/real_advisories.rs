//! The symbol readers over the data kit's real advisories (`../shared/data/advisories`):
//! every RustSec advisory in its own format, and every OSV record of the Go and RustSec
//! exports.

use std::io::Read;
use std::path::PathBuf;

use proven_reach::symbols::{from_osv_json, from_rustsec_markdown};

fn advisories(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/advisories"
    ))
    .join(name)
}

#[test]
fn every_rustsec_advisory_front_matter_is_read_and_functions_become_symbols() {
    let file = std::fs::File::open(advisories("rustsec-advisory-db.tar.gz"))
        .expect("rustsec-advisory-db.tar.gz in ../shared/data");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let (mut read, mut with_functions) = (0, 0);
    for entry in archive.entries().expect("tar entries") {
        let mut entry = entry.expect("tar entry");
        let path = entry.path().expect("entry path").display().to_string();
        if !(path.contains("/crates/") && path.ends_with(".md")) {
            continue;
        }
        let mut text = String::new();
        entry.read_to_string(&mut text).expect("UTF-8 advisory");
        let vulnerable = from_rustsec_markdown(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        read += 1;
        // A table header or an inline table on a line of its own (never a `#` comment).
        let lists_functions = text.lines().any(|l| {
            let l = l.trim();
            l == "[affected.functions]" || l.starts_with("functions = {")
        });
        let symbols: usize = vulnerable.imports.iter().map(|i| i.symbols.len()).sum();
        assert_eq!(lists_functions, symbols > 0, "{path}");
        if symbols > 0 {
            with_functions += 1;
            // Each function path starts with the crate's identifier and names something below it.
            for import in &vulnerable.imports {
                assert!(!import.path.is_empty(), "{path}");
                assert!(
                    import.symbols.iter().all(|s| !s.segments.is_empty()),
                    "{path}"
                );
            }
        }
    }
    assert!(read > 1000, "read {read} advisories");
    assert!(
        with_functions > 100,
        "{with_functions} advisories list functions"
    );
}

#[test]
fn every_go_and_rustsec_osv_record_is_read() {
    for name in ["osv-go-vulndb.jsonl", "osv-crates-rustsec.jsonl"] {
        let text = std::fs::read_to_string(advisories(name)).expect("JSONL in ../shared/data");
        let mut packages = 0;
        for (n, line) in text.lines().enumerate() {
            let vulnerable =
                from_osv_json(line).unwrap_or_else(|e| panic!("{name}:{}: {e}", n + 1));
            packages += vulnerable.len();
        }
        assert!(packages > 1000, "{name}: {packages} affected packages");
    }
}
