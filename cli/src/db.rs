//! `proven db`: advisory import and counts.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use proven_osv::{SourceItem, read_osv_source};
use proven_store::Store;

use crate::exit::Exit;

pub async fn import(store: &Store, paths: &[PathBuf]) -> Result<u8, Exit> {
    for path in paths {
        if !path.exists() {
            return Err(Exit::input(format!(
                "{}: no such file or directory",
                path.display()
            )));
        }
    }
    let progress = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        Some(bar)
    } else {
        None
    };
    for path in paths {
        let started = Instant::now();
        let source = path.display().to_string();
        let mut run = store.begin_import(&source);
        // The walk is blocking file IO: it runs on its own thread and streams items here
        // through a bounded channel, so an export of any size is read in constant memory.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<SourceItem>(256);
        let walk_path = path.clone();
        let walker = tokio::task::spawn_blocking(move || {
            read_osv_source(&walk_path, &mut |item| {
                let _ = tx.blocking_send(item);
            })
        });
        while let Some(item) = rx.recv().await {
            let stored = match item {
                SourceItem::Record {
                    origin,
                    record,
                    raw,
                } => run.add_record(&origin, &record, &raw).await,
                SourceItem::Kev { catalog, .. } => run.add_kev(&catalog).await,
                SourceItem::Epss { scores, .. } => run.add_epss(&scores).await,
                SourceItem::Invalid { origin, message } => {
                    run.invalid(&origin, &message);
                    Ok(())
                }
                SourceItem::Skipped { .. } => {
                    run.skipped_file();
                    Ok(())
                }
            };
            stored.map_err(|e| Exit::store(format!("import {source}: {e}")))?;
            if let Some(bar) = &progress {
                let c = run.counts();
                bar.set_message(format!(
                    "{source}: {} records, {} KEV, {} EPSS",
                    c.records_read, c.kev_entries, c.epss_scores
                ));
            }
        }
        match walker.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(Exit::input(e.to_string())),
            Err(e) => return Err(Exit::internal(format!("read {source}: {e}"))),
        }
        let problems = run.problems.clone();
        let c = run
            .finish()
            .await
            .map_err(|e| Exit::store(format!("import {source}: {e}")))?;
        if let Some(bar) = &progress {
            bar.set_message(String::new());
        }
        let line = format!(
            "imported {source}: {} records read (inserted {}, updated {}, unchanged {}, older kept {}, withdrawn {}, \
             invalid {}), {} KEV entries, {} EPSS scores, {} files skipped in {:.1} s",
            c.records_read,
            c.inserted,
            c.updated,
            c.unchanged,
            c.older_kept,
            c.withdrawn,
            c.invalid,
            c.kev_entries,
            c.epss_scores,
            c.skipped_files,
            started.elapsed().as_secs_f64()
        );
        match &progress {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
        for p in problems {
            eprintln!("  not imported: {p}");
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    Ok(0)
}

pub async fn stats(store: &Store) -> Result<u8, Exit> {
    let (advisories, kev, epss) = store
        .advisory_counts()
        .await
        .map_err(|e| Exit::store(e.to_string()))?;
    println!("advisories {advisories}\nkev {kev}\nepss {epss}");
    Ok(0)
}
