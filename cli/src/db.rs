//! `proven db`: advisory import, sync (change sets) and counts.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use proven_osv::{SourceItem, read_osv_source};
use proven_store::Store;

use crate::exit::Exit;

/// A spinner on standard error when it is a terminal (nothing in a pipe or a log).
fn spinner() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    Some(bar)
}

fn say(progress: &Option<indicatif::ProgressBar>, line: String) {
    match progress {
        Some(bar) => bar.println(line),
        None => eprintln!("{line}"),
    }
}

pub async fn import(store: &Store, paths: &[PathBuf]) -> Result<u8, Exit> {
    for path in paths {
        if !path.exists() {
            return Err(Exit::input(format!(
                "{}: no such file or directory",
                path.display()
            )));
        }
    }
    let progress = spinner();
    for path in paths {
        // Each import is a change set of its own.
        let change_set = uuid::Uuid::now_v7().to_string();
        import_path(
            store,
            &path.display().to_string(),
            path,
            &change_set,
            &progress,
        )
        .await?;
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(0)
}

/// Imports one file or directory into `change_set`, printing its summary line.
async fn import_path(
    store: &Store,
    source: &str,
    path: &Path,
    change_set: &str,
    progress: &Option<indicatif::ProgressBar>,
) -> Result<(), Exit> {
    let started = Instant::now();
    let mut run = store.begin_import_in(source, change_set);
    // The walk is blocking file IO: it runs on its own thread and streams items here
    // through a bounded channel, so an export of any size is read in constant memory.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<SourceItem>(256);
    let walk_path = path.to_path_buf();
    let walker = tokio::task::spawn_blocking(move || {
        read_osv_source(&walk_path, &mut |item| {
            let _ = tx.blocking_send(item);
        })
    });
    while let Some(item) = rx.recv().await {
        let stored = run.add_item(item).await;
        stored.map_err(|e| Exit::store(format!("import {source}: {e}")))?;
        if let Some(bar) = progress {
            let c = run.counts();
            bar.set_message(format!(
                "{source}: {} records, {} KEV, {} EPSS",
                c.records_read, c.kev_entries, c.epss_scores
            ));
        }
    }
    match walker.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(Exit::input(format!("{source}: {e}"))),
        Err(e) => return Err(Exit::internal(format!("read {source}: {e}"))),
    }
    let problems = run.problems.clone();
    let c = run
        .finish()
        .await
        .map_err(|e| Exit::store(format!("import {source}: {e}")))?;
    if let Some(bar) = progress {
        bar.set_message(String::new());
    }
    say(
        progress,
        format!(
            "imported {source}: {} records read (inserted {}, updated {}, unchanged {}, older kept {}, withdrawn {}, \
             invalid {}), {} KEV entries ({} new), {} EPSS scores, {} advisories' vulnerable functions, \
             {} files skipped in {:.1} s",
            c.records_read,
            c.inserted,
            c.updated,
            c.unchanged,
            c.older_kept,
            c.withdrawn,
            c.invalid,
            c.kev_entries,
            c.kev_new,
            c.epss_scores,
            c.functions,
            c.skipped_files,
            started.elapsed().as_secs_f64()
        ),
    );
    for p in problems {
        eprintln!("  not imported: {p}");
    }
    Ok(())
}

/// `proven db sync SOURCE…`: every source (a directory or file as `db import` reads them:
/// OSV exports in the per-ecosystem `ECOSYSTEM/all.zip` layout, JSON/JSONL directories, KEV
/// JSON, EPSS CSV, RustSec's advisory database (its `.tar.gz` or a directory of
/// `crates/*/RUSTSEC-*.md`: the vulnerable functions, kept beside the records and counted in
/// no change set); or an `http(s)://` URL of one such file, downloaded first) read as one
/// change set, and what it changed printed: new, modified and withdrawn advisories, CVEs new
/// in KEV. The change set's id is what `--change-set` selectors name. A schedule is the
/// operator's cron or Kubernetes CronJob running this command.
/// `proven db sync SOURCES [--json] [--rereview]`: `rereview` holds the tenants' cap of
/// unfinished reviews when the change set's re-reviews are to be submitted too.
pub async fn sync(
    store: &Store,
    data_dir: &Path,
    sources: &[String],
    (json, rereview): (bool, Option<i64>),
) -> Result<u8, Exit> {
    let mut local = Vec::with_capacity(sources.len());
    for source in sources {
        if source.starts_with("http://") || source.starts_with("https://") {
            local.push((source.clone(), None));
            continue;
        }
        if source.contains("://") {
            return Err(Exit::usage(format!(
                "proven db sync: {source}: a source is a local path or an http(s):// URL"
            )));
        }
        let path = PathBuf::from(source);
        if !path.exists() {
            return Err(Exit::input(format!("{source}: no such file or directory")));
        }
        local.push((source.clone(), Some(path)));
    }
    let change_set = uuid::Uuid::now_v7().to_string();
    let progress = spinner();
    let downloads = data_dir.join("downloads");
    for (source, path) in local {
        match path {
            Some(path) => import_path(store, &source, &path, &change_set, &progress).await?,
            None => {
                let file = download(&source, &downloads).await?;
                import_path(store, &source, &file, &change_set, &progress).await?;
            }
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let set = store
        .change_set(&change_set)
        .await
        .map_err(|e| Exit::store(e.to_string()))?;
    let batches = match rereview {
        Some(max_queued) => {
            let selector = proven_worker::rereview::Selector::ChangeSet(change_set.clone());
            Some(crate::batch::rereview(store, &selector, None, max_queued).await?)
        }
        None => None,
    };
    if json {
        let mut value = serde_json::to_value(&set)
            .map_err(|e| Exit::internal(format!("change set as JSON: {e}")))?;
        if let (Some(b), Some(map)) = (batches, value.as_object_mut()) {
            map.insert("rereviews".into(), serde_json::json!(b));
        }
        let text = serde_json::to_string_pretty(&value)
            .map_err(|e| Exit::internal(format!("change set as JSON: {e}")))?;
        println!("{text}");
    } else {
        println!(
            "change set {change_set}: {} new, {} modified, {} withdrawn advisories; {} new in KEV",
            set.new.len(),
            set.modified.len(),
            set.withdrawn.len(),
            set.kev.len()
        );
    }
    Ok(0)
}

/// Downloads `url` to a temporary file under `dir` (removed when dropped), with a progress
/// bar on a terminal. The file keeps the URL's file name, whose extension tells the reader
/// what it holds (`all.zip`, `known_exploited_vulnerabilities.json`, `epss_scores.csv`).
async fn download(url: &str, dir: &Path) -> Result<tempfile::TempPath, Exit> {
    proven_models::install_crypto();
    let name = url
        .split(['?', '#'])
        .next()
        .and_then(|u| u.rsplit('/').next())
        .filter(|n| !n.is_empty())
        .unwrap_or("download");
    std::fs::create_dir_all(dir).map_err(|e| Exit::internal(format!("{}: {e}", dir.display())))?;
    let tmp = tempfile::Builder::new()
        .prefix("sync-")
        .suffix(&format!("-{name}"))
        .tempfile_in(dir)
        .map_err(|e| Exit::internal(format!("{}: {e}", dir.display())))?;
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .read_timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| Exit::internal(format!("http client: {e}")))?;
    let mut response = client
        .get(url)
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| Exit::input(format!("{url}: {e}")))?;
    let bar = if std::io::stderr().is_terminal() {
        let bar = match response.content_length() {
            Some(n) => indicatif::ProgressBar::new(n),
            None => indicatif::ProgressBar::no_length(),
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} {bar:30} {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message(name.to_string());
        Some(bar)
    } else {
        None
    };
    let (file, path) = tmp.into_parts();
    let mut file = tokio::fs::File::from_std(file);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| Exit::input(format!("{url}: {e}")))?
    {
        tokio::io::AsyncWriteExt::write_all(&mut file, &chunk)
            .await
            .map_err(|e| Exit::internal(format!("{}: {e}", path.display())))?;
        if let Some(bar) = &bar {
            bar.inc(chunk.len() as u64);
        }
    }
    tokio::io::AsyncWriteExt::flush(&mut file)
        .await
        .map_err(|e| Exit::internal(format!("{}: {e}", path.display())))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(path)
}

pub async fn stats(store: &Store) -> Result<u8, Exit> {
    let (advisories, kev, epss) = store
        .advisory_counts()
        .await
        .map_err(|e| Exit::store(e.to_string()))?;
    println!("advisories {advisories}\nkev {kev}\nepss {epss}");
    Ok(0)
}
