use super::*;

/// GO-2020-0001 as the Go vulnerability database publishes it (abridged), with a second
/// import whose symbol is a method.
const GO_OSV: &str = r#"{"schema_version":"1.3.1","id":"GO-2020-0001",
  "affected":[{"package":{"name":"github.com/gin-gonic/gin","ecosystem":"Go"},
    "ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.6.0"}]}],
    "ecosystem_specific":{"imports":[
      {"path":"github.com/gin-gonic/gin","symbols":["LoggerWithConfig","defaultLogFormatter"]},
      {"path":"github.com/gin-gonic/gin/render","symbols":["JSON.Render"],"goos":["linux"]}]}}]}"#;

#[test]
fn go_osv_imports_keep_their_paths_and_symbols() {
    let vulnerable = from_osv_json(GO_OSV).expect("parses");
    assert_eq!(vulnerable.len(), 1);
    let v = &vulnerable[0];
    assert_eq!(v.ecosystem, Ecosystem::Go);
    assert_eq!(v.package, "github.com/gin-gonic/gin");
    assert_eq!(v.imports.len(), 2);
    assert_eq!(v.imports[0].path, "github.com/gin-gonic/gin");
    let names: Vec<&str> = v.imports[0]
        .symbols
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["LoggerWithConfig", "defaultLogFormatter"]);
    let method = &v.imports[1].symbols[0];
    assert_eq!(method.segments, ["JSON", "Render"]);
    assert!(method.is_method());
    assert!(!v.imports[0].symbols[0].is_method());
}

#[test]
fn go_osv_without_ecosystem_specific_has_no_imports() {
    // The data kit's JSONL strips ecosystem_specific: such a record names nothing to search.
    let json = r#"{"id":"GO-2020-0003","affected":[{"package":{"name":"github.com/revel/revel","ecosystem":"Go"},
      "ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"1.0.0"}]}]}]}"#;
    let vulnerable = from_osv_json(json).expect("parses");
    assert!(vulnerable[0].imports.is_empty());
}

#[test]
fn rustsec_osv_export_reads_affects_functions() {
    let json = r#"{"id":"RUSTSEC-2021-0003","affected":[{"package":{"name":"smallvec","ecosystem":"crates.io",
      "purl":"pkg:cargo/smallvec"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0.6.3"},{"fixed":"0.6.14"}]}],
      "ecosystem_specific":{"affects":{"arch":[],"os":[],"functions":["smallvec::SmallVec::insert_many"]},
      "affected_functions":null},"database_specific":{"informational":null}}]}"#;
    let v = &from_osv_json(json).expect("parses")[0];
    assert_eq!(v.ecosystem, Ecosystem::CratesIo);
    assert_eq!(v.imports[0].path, "smallvec");
    assert_eq!(
        v.imports[0].symbols[0].segments,
        ["SmallVec", "insert_many"]
    );
    assert_eq!(
        v.imports[0].symbols[0].name,
        "smallvec::SmallVec::insert_many"
    );
}

#[test]
fn pypi_osv_without_imports_falls_back_to_the_distribution_module() {
    let json = r#"{"id":"PYSEC-2021-142","affected":[
      {"package":{"name":"PyYAML","ecosystem":"PyPI"},"ranges":[]},
      {"package":{"name":"Flask-Cors","ecosystem":"PyPI"},"ranges":[]}]}"#;
    let vulnerable = from_osv_json(json).expect("parses");
    assert_eq!(vulnerable[0].imports[0].path, "yaml");
    assert_eq!(vulnerable[1].imports[0].path, "flask_cors");
    assert!(vulnerable[1].imports[0].symbols.is_empty());
}

/// RUSTSEC-2026-0074's shape: the `[affected.functions]` table.
const RUSTSEC_TABLE: &str = r#"```toml
[advisory]
id = "RUSTSEC-2026-0074"
package = "libcrux-sha3"
date = "2026-03-04"
aliases = ["GHSA-q29p-9pfr-j652"]

[affected.functions]
"libcrux_sha3::portable::incremental::Shake128Xof::squeeze" = [ "<= 0.0.7" ]
"libcrux_sha3::portable::incremental::Shake256Xof::squeeze" = [ "<= 0.0.7" ]

[versions]
patched = [">= 0.0.8 "]
```

# Incorrect Output of Incremental Portable SHAKE API
"#;

#[test]
fn rustsec_markdown_reads_the_affected_functions_table() {
    let v = from_rustsec_markdown(RUSTSEC_TABLE).expect("parses");
    assert_eq!(v.package, "libcrux-sha3");
    assert_eq!(v.imports.len(), 1);
    assert_eq!(v.imports[0].path, "libcrux_sha3");
    let segments: Vec<&[String]> = v.imports[0]
        .symbols
        .iter()
        .map(|s| s.segments.as_slice())
        .collect();
    assert_eq!(segments.len(), 2);
    assert_eq!(
        segments[0],
        ["portable", "incremental", "Shake128Xof", "squeeze"]
    );
}

#[test]
fn rustsec_markdown_reads_the_inline_functions_spelling() {
    let md = "```toml\n[advisory]\nid = \"RUSTSEC-2025-0001\"\npackage = \"zlib-rs\"\n\n\
              [affected]\nfunctions = { \"zlib_rs::inflate::inflate\" = [\"<= 0.3.1\"] }\n\n\
              [versions]\npatched = [\">= 0.4.0\"]\n```\n\n# title\n";
    let v = from_rustsec_markdown(md).expect("parses");
    assert_eq!(v.imports[0].path, "zlib_rs");
    assert_eq!(v.imports[0].symbols[0].segments, ["inflate", "inflate"]);
}

#[test]
fn rustsec_markdown_without_functions_names_the_crate_only() {
    let md = "```toml\n[advisory]\nid = \"RUSTSEC-2021-0120\"\npackage = \"abomonation\"\n\n\
              [versions]\npatched = []\n```\n";
    let v = from_rustsec_markdown(md).expect("parses");
    assert_eq!(v.imports[0].path, "abomonation");
    assert!(v.imports[0].symbols.is_empty());
}

#[test]
fn rustsec_markdown_without_front_matter_is_an_error() {
    assert!(matches!(
        from_rustsec_markdown("# just a title\n"),
        Err(SymbolsError::NoFrontMatter)
    ));
}

#[test]
fn one_stored_affected_entry_reads_like_the_record() {
    // affected_packages.affected keeps one entry, ecosystem_specific included.
    let entry = r#"{"package":{"ecosystem":"Go","name":"golang.org/x/net"},
      "ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"0.17.0"}]}],
      "ecosystem_specific":{"imports":[{"path":"golang.org/x/net/http2"}]}}"#;
    let v = from_osv_affected_json(entry)
        .expect("parses")
        .expect("a Go package");
    assert_eq!(v.imports[0].path, "golang.org/x/net/http2");
    assert!(v.imports[0].symbols.is_empty());
    let npm = r#"{"package":{"ecosystem":"Hackage","name":"aeson"}}"#;
    assert_eq!(from_osv_affected_json(npm).expect("parses"), None);
}
