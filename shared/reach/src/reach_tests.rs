use proven_domain::Ecosystem;

use super::*;
use crate::symbols::{Symbol, VulnerableImport, from_osv_json, from_rustsec_markdown};
use crate::verdict::{Site, SiteKind};

fn sites(verdict: &Verdict) -> Vec<(String, usize, SiteKind, String)> {
    match verdict {
        Verdict::Reachable { sites, .. } => sites
            .iter()
            .map(|s: &Site| (s.path.clone(), s.line, s.kind, s.symbol.clone()))
            .collect(),
        other => panic!("expected reachable, got {other:?}"),
    }
}

fn searched(verdict: &Verdict) -> &Searched {
    match verdict {
        Verdict::NotReached { searched, .. } => searched,
        other => panic!("expected not reached, got {other:?}"),
    }
}

// ---- Go ----

fn gin() -> Vulnerable {
    let json = r#"{"id":"GO-2020-0001","affected":[{"package":{"name":"github.com/gin-gonic/gin","ecosystem":"Go"},
      "ecosystem_specific":{"imports":[{"path":"github.com/gin-gonic/gin",
        "symbols":["LoggerWithConfig","Context.Render"]}]}}]}"#;
    from_osv_json(json).expect("parses").remove(0)
}

#[test]
fn go_a_call_of_the_vulnerable_function_through_an_alias_is_reachable() {
    let main = "package main\n\nimport (\n\t\"fmt\"\n\tg \"github.com/gin-gonic/gin\"\n)\n\n\
                func main() {\n\tr := g.New()\n\tr.Use(g.LoggerWithConfig(g.LoggerConfig{}))\n\tfmt.Println(r)\n}\n";
    let verdict = assess(&gin(), &[SourceFile::new("cmd/main.go", main)]);
    assert_eq!(
        sites(&verdict),
        [(
            "cmd/main.go".into(),
            10,
            SiteKind::Call,
            "LoggerWithConfig".into()
        )]
    );
    assert!(matches!(
        verdict,
        Verdict::Reachable {
            basis: Basis::Symbols,
            ..
        }
    ));
}

#[test]
fn go_an_import_without_a_vulnerable_call_is_not_reached_and_says_what_was_searched() {
    let main = "package main\n\nimport \"github.com/gin-gonic/gin\"\n\n\
                func main() {\n\tr := gin.New()\n\tr.Run(\":8080\")\n}\n";
    let other = "package util\n\nfunc Render() {}\n";
    let files = [
        SourceFile::new("main.go", main),
        SourceFile::new("util/util.go", other),
        SourceFile::new("README.md", "gin.LoggerWithConfig()"),
    ];
    let verdict = assess(&gin(), &files);
    let searched = searched(&verdict);
    assert_eq!(searched.files, ["main.go", "util/util.go"]);
    assert_eq!(searched.symbols, ["LoggerWithConfig", "Context.Render"]);
    assert_eq!(searched.imports.len(), 1);
    assert_eq!(searched.imports[0].line, 3);
}

#[test]
fn go_code_that_neither_imports_nor_calls_is_not_reached() {
    let main = "package main\n\n// gin.LoggerWithConfig in a comment\nfunc LoggerWithConfig() {}\n\
                func main() { LoggerWithConfig() }\n";
    let verdict = assess(&gin(), &[SourceFile::new("main.go", main)]);
    assert!(searched(&verdict).imports.is_empty());
}

#[test]
fn go_a_method_of_the_vulnerable_type_is_found_by_name_in_an_importing_file() {
    let handler = "package web\n\nimport \"github.com/gin-gonic/gin\"\n\n\
                   func Show(c *gin.Context) {\n\tc.Render(200, nil)\n}\n";
    let verdict = assess(&gin(), &[SourceFile::new("web/h.go", handler)]);
    let found = sites(&verdict);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].1, 6);
    assert_eq!(found[0].2, SiteKind::MethodByName);
}

#[test]
fn go_without_symbol_data_is_unknown() {
    // What the data kit's JSONL gives today: no ecosystem_specific.
    let json = r#"{"id":"GO-2020-0003","affected":[{"package":{"name":"github.com/revel/revel","ecosystem":"Go"}}]}"#;
    let vulnerable = from_osv_json(json).expect("parses").remove(0);
    let main =
        "package main\n\nimport \"github.com/revel/revel\"\n\nfunc main() { revel.Run(0) }\n";
    let verdict = assess(&vulnerable, &[SourceFile::new("main.go", main)]);
    assert_eq!(
        verdict,
        Verdict::Unknown {
            why: UnknownWhy::NoSymbols
        }
    );
}

// ---- Rust ----

fn lz4() -> Vulnerable {
    let md = "```toml\n[advisory]\nid = \"RUSTSEC-2025-0100\"\npackage = \"lz4_flex\"\n\n\
              [affected.functions]\n\"lz4_flex::block::decompress\" = [\"<= 0.11.5\"]\n\
              \"lz4_flex::frame::FrameDecoder::read_frame\" = [\"<= 0.11.5\"]\n```\n";
    from_rustsec_markdown(md).expect("parses")
}

#[test]
fn rust_a_call_of_the_vulnerable_function_through_a_use_is_reachable() {
    let src = "use lz4_flex::block::{self, compress as pack};\n\n\
               pub fn roundtrip(data: &[u8]) -> Vec<u8> {\n    let packed = pack(data);\n    \
               block::decompress(&packed, data.len()).unwrap_or_default()\n}\n";
    let verdict = assess(&lz4(), &[SourceFile::new("src/codec.rs", src)]);
    assert_eq!(
        sites(&verdict),
        [(
            "src/codec.rs".into(),
            5,
            SiteKind::Call,
            "lz4_flex::block::decompress".into()
        )]
    );
}

#[test]
fn rust_a_use_of_the_crate_without_a_vulnerable_call_is_not_reached() {
    let src = "use lz4_flex::block::compress;\n\npub fn pack(data: &[u8]) -> Vec<u8> {\n    \
               compress(data)\n}\n\nfn decompress(x: &[u8]) -> &[u8] { x }\n\
               fn f() { decompress(&[]); }\n";
    let verdict = assess(&lz4(), &[SourceFile::new("src/codec.rs", src)]);
    let searched = searched(&verdict);
    assert_eq!(searched.files, ["src/codec.rs"]);
    assert_eq!(searched.modules, ["lz4_flex"]);
    assert_eq!(searched.imports.len(), 1);
    assert_eq!(searched.imports[0].line, 1);
}

#[test]
fn rust_code_that_neither_uses_nor_calls_the_crate_is_not_reached() {
    let src = "use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n    \
               std::io::stdin().read_to_string(&mut s).ok();\n}\n";
    let verdict = assess(&lz4(), &[SourceFile::new("src/main.rs", src)]);
    assert!(searched(&verdict).imports.is_empty());
}

/// A macro's arguments are tokens to the parser, not expressions: a call written there
/// (`println!("{}", rand::thread_rng()…)`, as starship's `main.rs` wrote it) still reaches.
#[test]
fn rust_a_call_inside_a_macros_arguments_is_reachable() {
    let full = "fn a(b: &[u8]) {\n    println!(\"{:?}\", lz4_flex::block::decompress(b, 4));\n}\n";
    let used = "use lz4_flex::block::{self, decompress};\n\
                fn a(b: &[u8]) {\n    assert!(decompress(b, 4).is_ok());\n    \
                let _ = vec![block::decompress(b, 1)];\n}\n";
    // The `use` that names the function is a reference of its own.
    let (reference, call) = (SiteKind::Reference, SiteKind::Call);
    for (src, lines) in [
        (full, vec![(2, call)]),
        (used, vec![(1, reference), (3, call), (4, call)]),
    ] {
        let verdict = assess(&lz4(), &[SourceFile::new("src/lib.rs", src)]);
        let found: Vec<(usize, SiteKind, String)> = sites(&verdict)
            .into_iter()
            .map(|(_, line, kind, symbol)| (line, kind, symbol))
            .collect();
        let want: Vec<(usize, SiteKind, String)> = lines
            .into_iter()
            .map(|(l, k)| (l, k, "lz4_flex::block::decompress".to_string()))
            .collect();
        assert_eq!(found, want, "{src}");
    }
    // A name in a macro that no `use` binds to the crate, and a path of another crate, are not
    // sites.
    let other = "fn decompress(x: &[u8]) -> &[u8] { x }\n\
                 fn a(b: &[u8]) { println!(\"{:?} {:?}\", decompress(b), other::block::decompress(b)); }\n";
    let verdict = assess(&lz4(), &[SourceFile::new("src/lib.rs", other)]);
    assert!(matches!(verdict, Verdict::NotReached { .. }), "{verdict:?}");
}

#[test]
fn rust_full_paths_globs_and_type_methods_are_resolved() {
    let full = "fn a(b: &[u8]) { let _ = ::lz4_flex::block::decompress(b, 4); }\n";
    let glob = "use lz4_flex::block::*;\nfn a(b: &[u8]) { let _ = decompress(b, 4); }\n";
    let typed = "use lz4_flex::frame::FrameDecoder;\n\
                 fn a(d: &mut FrameDecoder<&[u8]>) { let _ = FrameDecoder::read_frame(d); }\n";
    for (name, src) in [("full.rs", full), ("glob.rs", glob), ("typed.rs", typed)] {
        let verdict = assess(&lz4(), &[SourceFile::new(name, src)]);
        let found = sites(&verdict);
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        assert_eq!(found[0].2, SiteKind::Call, "{name}");
    }
}

#[test]
fn rust_a_crate_without_affected_functions_is_unknown() {
    let md = "```toml\n[advisory]\nid = \"RUSTSEC-2021-0120\"\npackage = \"abomonation\"\n```\n";
    let vulnerable = from_rustsec_markdown(md).expect("parses");
    let src = "use abomonation::encode;\nfn f() { encode(); }\n";
    let verdict = assess(&vulnerable, &[SourceFile::new("src/lib.rs", src)]);
    assert_eq!(
        verdict,
        Verdict::Unknown {
            why: UnknownWhy::NoSymbols
        }
    );
}

#[test]
fn rust_a_file_that_does_not_parse_makes_an_empty_search_unknown() {
    let src = "fn f( { lz4_flex:: \n";
    let verdict = assess(&lz4(), &[SourceFile::new("src/broken.rs", src)]);
    assert!(matches!(
        verdict,
        Verdict::Unknown { why: UnknownWhy::ParseErrors { ref files } } if files == &["src/broken.rs"]
    ));
}

// ---- Python ----

fn pyyaml() -> Vulnerable {
    Vulnerable {
        ecosystem: Ecosystem::PyPI,
        package: "PyYAML".into(),
        imports: vec![VulnerableImport {
            path: "yaml".into(),
            symbols: vec![Symbol::new("yaml.load", vec!["load".into()])],
        }],
    }
}

#[test]
fn python_a_call_of_the_vulnerable_function_is_reachable() {
    let src = "import os\nfrom yaml import load as yload\n\n\
               def read(path):\n    with open(path) as f:\n        return yload(f)\n";
    let verdict = assess(&pyyaml(), &[SourceFile::new("app/config.py", src)]);
    assert_eq!(
        sites(&verdict),
        [(
            "app/config.py".into(),
            6,
            SiteKind::Call,
            "yaml.load".into()
        )]
    );
}

#[test]
fn python_an_import_without_a_vulnerable_call_is_not_reached() {
    let src = "import yaml\n\n\ndef read(text):\n    return yaml.safe_load(text)\n\n\
               def load(x):\n    return x\n\nload(1)\n";
    let verdict = assess(&pyyaml(), &[SourceFile::new("app/config.py", src)]);
    let searched = searched(&verdict);
    assert_eq!(searched.symbols, ["yaml.load"]);
    assert_eq!(searched.imports.len(), 1);
}

#[test]
fn python_code_that_neither_imports_nor_calls_is_not_reached() {
    let src = "import json\n\n# yaml.load(stream)\ndef read(t):\n    return json.loads(t)\n";
    let verdict = assess(&pyyaml(), &[SourceFile::new("app/config.py", src)]);
    assert!(searched(&verdict).imports.is_empty());
}

#[test]
fn python_without_symbols_an_import_reaches_and_says_so() {
    let json =
        r#"{"id":"PYSEC-2021-142","affected":[{"package":{"name":"PyYAML","ecosystem":"PyPI"}}]}"#;
    let vulnerable = from_osv_json(json).expect("parses").remove(0);
    let importing = "import yaml.constructor as c\n";
    let verdict = assess(&vulnerable, &[SourceFile::new("a.py", importing)]);
    assert!(matches!(
        verdict,
        Verdict::Reachable {
            basis: Basis::Imports,
            ..
        }
    ));
    assert_eq!(sites(&verdict)[0].2, SiteKind::Import);
    let other = assess(&vulnerable, &[SourceFile::new("b.py", "import yamllint\n")]);
    assert!(matches!(
        other,
        Verdict::NotReached {
            basis: Basis::Imports,
            ..
        }
    ));
}

#[test]
fn a_change_without_files_of_the_language_is_unknown() {
    let verdict = assess(&pyyaml(), &[SourceFile::new("main.go", "package main\n")]);
    assert_eq!(
        verdict,
        Verdict::Unknown {
            why: UnknownWhy::NoSourceFiles
        }
    );
}

#[test]
fn go_an_import_path_without_symbols_reaches_by_its_import() {
    // GO-2023-2102's shape: the whole package is affected.
    let json = r#"{"id":"GO-2023-2102","affected":[{"package":{"name":"golang.org/x/net","ecosystem":"Go"},
      "ecosystem_specific":{"imports":[{"path":"golang.org/x/net/http2"}]}}]}"#;
    let vulnerable = from_osv_json(json).expect("parses").remove(0);
    let using = "package srv\n\nimport (\n\t\"net/http\"\n\t\"golang.org/x/net/http2\"\n)\n\n\
                 func Up(s *http.Server) { http2.ConfigureServer(s, nil) }\n";
    let verdict = assess(&vulnerable, &[SourceFile::new("srv.go", using)]);
    assert!(matches!(
        verdict,
        Verdict::Reachable {
            basis: Basis::Imports,
            ..
        }
    ));
    assert_eq!(sites(&verdict)[0].1, 5);
    let other = "package srv\n\nimport \"golang.org/x/net/html\"\n\nvar _ = html.Parse\n";
    let verdict = assess(&vulnerable, &[SourceFile::new("srv.go", other)]);
    assert!(matches!(
        verdict,
        Verdict::NotReached {
            basis: Basis::Imports,
            ..
        }
    ));
}

#[test]
fn methods_of_vulnerable_types_are_found_by_name_only_in_files_that_import_the_package() {
    let rust = "use lz4_flex::frame::FrameDecoder;\n\
                fn a(d: &mut FrameDecoder<&[u8]>) { let _ = d.read_frame(); }\n";
    let rust_other =
        "struct D;\nimpl D { fn read_frame(&self) {} }\nfn a(d: D) { d.read_frame(); }\n";
    let verdict = assess(
        &lz4(),
        &[
            SourceFile::new("a.rs", rust),
            SourceFile::new("b.rs", rust_other),
        ],
    );
    let found = sites(&verdict);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].0.as_str(), found[0].2),
        ("a.rs", SiteKind::MethodByName)
    );

    let loader = Vulnerable {
        ecosystem: Ecosystem::PyPI,
        package: "PyYAML".into(),
        imports: vec![VulnerableImport {
            path: "yaml".into(),
            symbols: vec![Symbol::new(
                "yaml.Loader.construct_object",
                vec!["Loader".into(), "construct_object".into()],
            )],
        }],
    };
    let python = "import yaml\n\ndef f(loader):\n    return loader.construct_object(None)\n";
    let python_other = "def f(loader):\n    return loader.construct_object(None)\n";
    let verdict = assess(
        &loader,
        &[
            SourceFile::new("a.py", python),
            SourceFile::new("b.py", python_other),
        ],
    );
    let found = sites(&verdict);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].0.as_str(), found[0].1, found[0].2),
        ("a.py", 4, SiteKind::MethodByName)
    );
}

#[test]
fn python_module_calls_and_star_imports_resolve_to_the_vulnerable_symbol() {
    let attribute = "import yaml\nyaml.load(open('x'))\n";
    let star = "from yaml import *\nload(open('x'))\n";
    for (name, src) in [("attribute.py", attribute), ("star.py", star)] {
        let verdict = assess(&pyyaml(), &[SourceFile::new(name, src)]);
        assert_eq!(
            sites(&verdict),
            [(name.to_string(), 2, SiteKind::Call, "yaml.load".into())]
        );
    }
}

#[test]
fn verdicts_serialise_to_their_stored_names() {
    let unknown = Verdict::Unknown {
        why: UnknownWhy::NoSymbols,
    };
    assert_eq!(
        serde_json::to_value(&unknown).expect("serialises"),
        serde_json::json!({"verdict": "unknown", "why": {"reason": "no_symbols"}})
    );
    let verdict = assess(&pyyaml(), &[SourceFile::new("a.py", "import json\n")]);
    let value = serde_json::to_value(&verdict).expect("serialises");
    assert_eq!(value["verdict"], verdict.name());
    assert_eq!(value["basis"], "symbols");
    assert_eq!(value["searched"]["files"], serde_json::json!(["a.py"]));
}

#[test]
fn go_an_unnamed_import_is_named_by_what_the_file_qualifies_with() {
    let sqlite = Vulnerable {
        ecosystem: Ecosystem::Go,
        package: "github.com/mattn/go-sqlite3".into(),
        imports: vec![VulnerableImport {
            path: "github.com/mattn/go-sqlite3".into(),
            symbols: vec![Symbol::new("Open", vec!["Open".into()])],
        }],
    };
    let declared =
        "package db\n\nimport \"github.com/mattn/go-sqlite3\"\n\nfunc f() { sqlite3.Open() }\n";
    let verdict = assess(&sqlite, &[SourceFile::new("db.go", declared)]);
    assert_eq!(sites(&verdict)[0].1, 5);
    // The package declares a name no guess matches: the search proves nothing.
    let odd = "package db\n\nimport \"github.com/mattn/go-sqlite3\"\n\nfunc f() { lite.Open() }\n";
    let verdict = assess(&sqlite, &[SourceFile::new("db.go", odd)]);
    assert_eq!(
        verdict,
        Verdict::Unknown {
            why: UnknownWhy::ImportNameUnresolved {
                files: vec!["db.go".into()]
            }
        }
    );
}

#[test]
fn go_a_package_function_of_a_method_name_and_dot_imports() {
    // `gin.Render(…)` is a package function, not the method Context.Render.
    let function =
        "package web\n\nimport \"github.com/gin-gonic/gin\"\n\nfunc f() { gin.Render() }\n";
    let verdict = assess(&gin(), &[SourceFile::new("f.go", function)]);
    assert_eq!(searched(&verdict).imports.len(), 1);
    // Under a dot import the vulnerable function is called by its bare name.
    let dot = "package web\n\nimport . \"github.com/gin-gonic/gin\"\n\nvar h = LoggerWithConfig(LoggerConfig{})\n";
    let verdict = assess(&gin(), &[SourceFile::new("d.go", dot)]);
    assert_eq!(
        sites(&verdict),
        [("d.go".into(), 5, SiteKind::Call, "LoggerWithConfig".into())]
    );
}
