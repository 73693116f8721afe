//! Walks an advisory source on disk and yields what it holds, one item at a time, so an
//! export of any size is read with bounded memory.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::{EpssScores, KevCatalog, Record, read_epss, read_kev};

/// What kind of file a path holds, decided from its name and, for `.json`, its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OsvSource {
    /// One OSV record, or an array of them.
    Json,
    /// One OSV record per line.
    Jsonl,
    /// A zip of `.json` records (osv.dev's `all.zip` per ecosystem).
    Zip,
    /// The CISA KEV catalogue.
    Kev,
    /// FIRST EPSS scores (CSV).
    Epss,
    /// FIRST EPSS scores as FIRST publishes them: gzip-compressed CSV (`.csv.gz`).
    EpssGz,
    /// One RustSec advisory file (`RUSTSEC-*.md`): its vulnerable functions.
    RustsecAdvisory,
    /// RustSec's advisory database as a `.tar.gz` (its `crates/*/RUSTSEC-*.md` files).
    RustsecTarball,
}

/// One thing found in a source.
#[derive(Debug)]
pub enum SourceItem {
    /// A record, with its original text (stored whole so nothing is lost) and where it
    /// came from (`file` or `file:line` or `archive!entry`).
    Record {
        origin: String,
        record: Box<Record>,
        raw: String,
    },
    Kev {
        origin: String,
        catalog: KevCatalog,
    },
    Epss {
        origin: String,
        scores: EpssScores,
    },
    /// The vulnerable functions a RustSec advisory names (from RustSec's own database):
    /// an enrichment of the OSV record of the same id, not a record.
    Functions {
        origin: String,
        functions: crate::RustsecFunctions,
    },
    /// A record or file that could not be read; the walk goes on.
    Invalid {
        origin: String,
        message: String,
    },
    /// A file that is not an advisory source this build reads.
    Skipped {
        origin: String,
        reason: String,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}: not an advisory source (expected a directory, .json, .jsonl, .zip, KEV .json, EPSS .csv or RustSec's .tar.gz)"
    )]
    Unrecognised { path: PathBuf },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SourceError + '_ {
    move |source| SourceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl OsvSource {
    /// Classifies a file. `None` for a file that is not a source (README, tarball, ...).
    pub fn detect(path: &Path) -> Result<Option<OsvSource>, SourceError> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if name.ends_with(".jsonl") {
            return Ok(Some(OsvSource::Jsonl));
        }
        if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            return Ok(Some(OsvSource::RustsecTarball));
        }
        if name.starts_with("rustsec-") && name.ends_with(".md") {
            return Ok(Some(OsvSource::RustsecAdvisory));
        }
        if name.ends_with(".zip") {
            return Ok(Some(OsvSource::Zip));
        }
        if name.ends_with(".csv.gz") {
            return Ok(Some(OsvSource::EpssGz));
        }
        if name.ends_with(".csv") {
            let mut head = String::new();
            File::open(path)
                .map_err(io_err(path))?
                .take(4096)
                .read_to_string(&mut head)
                .ok();
            let looks_epss = head
                .lines()
                .take(3)
                .any(|l| l.starts_with("cve,epss") || l.starts_with("#model_version"));
            return Ok(looks_epss.then_some(OsvSource::Epss));
        }
        if name.ends_with(".json") {
            let mut head = vec![0u8; 4096];
            let n = File::open(path)
                .map_err(io_err(path))?
                .read(&mut head)
                .map_err(io_err(path))?;
            let head = String::from_utf8_lossy(&head[..n]);
            if head.contains("\"catalogVersion\"")
                || head.contains("Known Exploited Vulnerabilities")
            {
                return Ok(Some(OsvSource::Kev));
            }
            return Ok(Some(OsvSource::Json));
        }
        Ok(None)
    }
}

/// Reads every advisory item under `path` (a file or a directory, walked in sorted order
/// so imports are reproducible) and hands each to `visit`. Errors inside a record are
/// items, not failures; only an unreadable top-level path fails the walk.
pub fn read_osv_source(path: &Path, visit: &mut dyn FnMut(SourceItem)) -> Result<(), SourceError> {
    let meta = std::fs::metadata(path).map_err(io_err(path))?;
    if meta.is_dir() {
        let walker = walkdir::WalkDir::new(path)
            .sort_by_file_name()
            .follow_links(false);
        for entry in walker {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    visit(SourceItem::Invalid {
                        origin: path.display().to_string(),
                        message: e.to_string(),
                    });
                    continue;
                }
            };
            if !entry.file_type().is_file() {
                continue;
            }
            let file = entry.path();
            match OsvSource::detect(file)? {
                Some(kind) => read_file(file, kind, visit)?,
                None => visit(SourceItem::Skipped {
                    origin: file.display().to_string(),
                    reason: "not an OSV, KEV or EPSS file".into(),
                }),
            }
        }
        return Ok(());
    }
    match OsvSource::detect(path)? {
        Some(kind) => read_file(path, kind, visit),
        None => Err(SourceError::Unrecognised {
            path: path.to_path_buf(),
        }),
    }
}

fn read_file(
    path: &Path,
    kind: OsvSource,
    visit: &mut dyn FnMut(SourceItem),
) -> Result<(), SourceError> {
    let origin = path.display().to_string();
    match kind {
        OsvSource::Jsonl => {
            let reader = BufReader::new(File::open(path).map_err(io_err(path))?);
            for (i, line) in reader.lines().enumerate() {
                let line_origin = format!("{origin}:{}", i + 1);
                match line {
                    Ok(line) if line.trim().is_empty() => {}
                    Ok(line) => visit(parse_record(line_origin, line)),
                    Err(e) => {
                        visit(SourceItem::Invalid {
                            origin: line_origin,
                            message: e.to_string(),
                        });
                        break;
                    }
                }
            }
        }
        OsvSource::Json => {
            let text = std::fs::read_to_string(path).map_err(io_err(path))?;
            read_json_text(origin, text, visit);
        }
        OsvSource::Zip => {
            let file = File::open(path).map_err(io_err(path))?;
            let mut archive = match zip::ZipArchive::new(file) {
                Ok(a) => a,
                Err(e) => {
                    visit(SourceItem::Invalid {
                        origin,
                        message: format!("not a readable zip: {e}"),
                    });
                    return Ok(());
                }
            };
            for i in 0..archive.len() {
                let mut entry = match archive.by_index(i) {
                    Ok(e) => e,
                    Err(e) => {
                        visit(SourceItem::Invalid {
                            origin: format!("{origin}!#{i}"),
                            message: e.to_string(),
                        });
                        continue;
                    }
                };
                let name = entry
                    .name()
                    .map(|n| n.into_owned())
                    .unwrap_or_else(|_| format!("#{i}"));
                let entry_origin = format!("{origin}!{name}");
                if !entry.is_file() || !name.ends_with(".json") {
                    continue;
                }
                let mut text = String::new();
                match entry.read_to_string(&mut text) {
                    Ok(_) => read_json_text(entry_origin, text, visit),
                    Err(e) => visit(SourceItem::Invalid {
                        origin: entry_origin,
                        message: e.to_string(),
                    }),
                }
            }
        }
        OsvSource::RustsecAdvisory => {
            let text = std::fs::read_to_string(path).map_err(io_err(path))?;
            visit_rustsec(origin, Ok(text), visit);
        }
        OsvSource::RustsecTarball => {
            let read = crate::rustsec::read_tarball(path, &mut |origin, text| {
                visit_rustsec(origin, text, visit)
            });
            if let Err(e) = read {
                visit(SourceItem::Invalid {
                    origin,
                    message: format!("not a readable RustSec advisory database: {e}"),
                });
            }
        }
        OsvSource::Kev => {
            let bytes = std::fs::read(path).map_err(io_err(path))?;
            match read_kev(&bytes) {
                Ok(catalog) => visit(SourceItem::Kev { origin, catalog }),
                Err(e) => visit(SourceItem::Invalid {
                    origin,
                    message: format!("not a KEV catalogue: {e}"),
                }),
            }
        }
        OsvSource::Epss | OsvSource::EpssGz => {
            let text = if kind == OsvSource::EpssGz {
                let mut text = String::new();
                flate2::read::GzDecoder::new(File::open(path).map_err(io_err(path))?)
                    .read_to_string(&mut text)
                    .map_err(io_err(path))?;
                text
            } else {
                std::fs::read_to_string(path).map_err(io_err(path))?
            };
            match read_epss(&text) {
                Ok(scores) => visit(SourceItem::Epss { origin, scores }),
                Err(e) => visit(SourceItem::Invalid {
                    origin,
                    message: e.to_string(),
                }),
            }
        }
    }
    Ok(())
}

/// One RustSec advisory file: its functions, nothing for an advisory that names none.
fn visit_rustsec(origin: String, text: Result<String, String>, visit: &mut dyn FnMut(SourceItem)) {
    match text.and_then(|t| crate::read_rustsec_advisory(&t)) {
        Ok(Some(functions)) => visit(SourceItem::Functions { origin, functions }),
        Ok(None) => {}
        Err(message) => visit(SourceItem::Invalid { origin, message }),
    }
}

fn read_json_text(origin: String, text: String, visit: &mut dyn FnMut(SourceItem)) {
    if text.trim_start().starts_with('[') {
        match serde_json::from_str::<Vec<serde_json::Value>>(&text) {
            Ok(values) => {
                for (i, value) in values.into_iter().enumerate() {
                    let item_origin = format!("{origin}[{i}]");
                    let raw = value.to_string();
                    visit(match serde_json::from_value::<Record>(value) {
                        Ok(record) => SourceItem::Record {
                            origin: item_origin,
                            record: Box::new(record),
                            raw,
                        },
                        Err(e) => SourceItem::Invalid {
                            origin: item_origin,
                            message: format!("not an OSV record: {e}"),
                        },
                    });
                }
            }
            Err(e) => visit(SourceItem::Invalid {
                origin,
                message: format!("not JSON: {e}"),
            }),
        }
    } else {
        visit(parse_record(origin, text));
    }
}

fn parse_record(origin: String, raw: String) -> SourceItem {
    match serde_json::from_str::<Record>(&raw) {
        Ok(record) if record.id.trim().is_empty() => SourceItem::Invalid {
            origin,
            message: "OSV record has an empty id".into(),
        },
        Ok(record) => SourceItem::Record {
            origin,
            record: Box::new(record),
            raw,
        },
        Err(e) => SourceItem::Invalid {
            origin,
            message: format!("not an OSV record: {e}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn collect(path: &Path) -> Vec<SourceItem> {
        let mut items = Vec::new();
        read_osv_source(path, &mut |i| items.push(i)).expect("readable");
        items
    }

    #[test]
    fn a_bad_line_is_named_and_the_rest_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("a.jsonl");
        std::fs::write(&p, "{\"id\":\"A-1\"}\n{truncated\n{\"id\":\"A-2\"}\n").expect("write");
        let items = collect(&p);
        assert_eq!(items.len(), 3);
        assert!(
            matches!(&items[1], SourceItem::Invalid { origin, .. } if origin.ends_with("a.jsonl:2"))
        );
        assert!(matches!(&items[2], SourceItem::Record { record, .. } if record.id == "A-2"));
    }

    #[test]
    fn epss_is_read_as_first_publishes_it_gzip_compressed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("epss_scores-current.csv.gz");
        let mut gz = flate2::write::GzEncoder::new(
            File::create(&p).expect("create"),
            flate2::Compression::default(),
        );
        gz.write_all(b"#model_version:v2025.03.14,score_date:2026-12-01T00:00:00+0000\ncve,epss,percentile\nCVE-2023-30861,0.01234,0.5\n")
            .expect("write");
        gz.finish().expect("finish");
        let items = collect(&p);
        assert!(
            matches!(&items[..], [SourceItem::Epss { scores, .. }] if scores.scores.len() == 1),
            "{items:?}"
        );
    }

    #[test]
    fn zips_and_directories_are_walked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let zip_path = dir.path().join("all.zip");
        {
            let f = File::create(&zip_path).expect("create");
            let mut w = zip::ZipWriter::new(f);
            w.start_file("X-1.json", zip::write::SimpleFileOptions::default())
                .expect("entry");
            w.write_all(br#"{"id":"X-1","affected":[]}"#)
                .expect("write");
            w.finish().expect("finish");
        }
        std::fs::write(dir.path().join("README.md"), "hello").expect("write");
        std::fs::write(
            dir.path().join("one.json"),
            r#"[{"id":"Y-1"},{"id":"Y-2"}]"#,
        )
        .expect("write");
        let items = collect(dir.path());
        let ids: Vec<_> = items
            .iter()
            .filter_map(|i| match i {
                SourceItem::Record { record, .. } => Some(record.id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids, vec!["X-1", "Y-1", "Y-2"]);
        assert!(
            items
                .iter()
                .any(|i| matches!(i, SourceItem::Skipped { .. }))
        );
    }

    const ADVISORY: &str = "```toml\n[advisory]\nid = \"RUSTSEC-2021-0003\"\npackage = \"smallvec\"\n\n[affected]\nfunctions = { \"smallvec::SmallVec::insert_many\" = [\"< 1.6.1\"] }\n```\n# Overflow\n";

    fn functions_of(items: &[SourceItem]) -> Vec<(String, Vec<String>)> {
        items
            .iter()
            .filter_map(|i| match i {
                SourceItem::Functions { functions, .. } => {
                    Some((functions.id.clone(), functions.functions.clone()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn rustsecs_database_gives_its_functions_from_its_tarball_or_its_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("advisory-db");
        std::fs::create_dir_all(db.join("crates/smallvec")).expect("mkdir");
        std::fs::write(db.join("crates/smallvec/RUSTSEC-2021-0003.md"), ADVISORY).expect("write");
        std::fs::write(db.join("README.md"), "# RustSec").expect("write");
        let want = vec![(
            "RUSTSEC-2021-0003".to_string(),
            vec!["smallvec::SmallVec::insert_many".to_string()],
        )];
        assert_eq!(functions_of(&collect(&db)), want);

        let tarball = dir.path().join("rustsec-advisory-db.tar.gz");
        let gz = flate2::write::GzEncoder::new(
            File::create(&tarball).expect("create"),
            flate2::Compression::default(),
        );
        let mut tar = tar::Builder::new(gz);
        tar.append_dir_all("advisory-db", &db).expect("append");
        tar.into_inner().expect("tar").finish().expect("gz");
        let items = collect(&tarball);
        assert_eq!(functions_of(&items), want, "{items:?}");
        assert!(
            matches!(&items[0], SourceItem::Functions { origin, .. } if origin.ends_with("!advisory-db/crates/smallvec/RUSTSEC-2021-0003.md"))
        );
    }

    /// The Go vulnerability database's OSV export (`data/osv/GO-*.json`) is a JSON
    /// directory; the symbols in `ecosystem_specific` are part of the record read.
    #[test]
    fn the_go_vulnerability_databases_export_keeps_its_symbols() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("GO-2021-0001.json"),
            r#"{"id":"GO-2021-0001","affected":[{"package":{"ecosystem":"Go","name":"example.com/m"},
               "ecosystem_specific":{"imports":[{"path":"example.com/m/p","symbols":["Parse"]}]}}]}"#,
        )
        .expect("write");
        let items = collect(dir.path());
        let [SourceItem::Record { record, .. }] = &items[..] else {
            panic!("{items:?}")
        };
        let kept = serde_json::to_value(&record.affected[0]).expect("json");
        assert_eq!(
            kept["ecosystem_specific"]["imports"][0]["symbols"][0],
            "Parse"
        );
    }
}
