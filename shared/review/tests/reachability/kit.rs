//! Reachability with the data kit's real advisories: its RustSec OSV export names no
//! function (the kit strips `ecosystem_specific`); RustSec's own database, imported after
//! it, gives them back without changing the advisory.

use std::path::{Path, PathBuf};

use proven_change::testing::TestRepo;
use proven_report::ReachVerdict;
use proven_store::Store;
use proven_store::testing::{Backend, TestStore};

fn kit(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/advisories"
    ))
    .join(name)
}

/// Imports `path` as `proven db import` does: one run, every item of the walk.
async fn import(store: &Store, path: &Path) -> proven_store::ImportCounts {
    let mut items = Vec::new();
    proven_osv::read_osv_source(path, &mut |item| items.push(item))
        .unwrap_or_else(|e| panic!("{} in ../shared/data: {e}", path.display()));
    let mut run = store.begin_import(&path.display().to_string());
    for item in items {
        run.add_item(item).await.expect("import");
    }
    run.finish().await.expect("finish")
}

/// smallvec 1.6.0 is in RUSTSEC-2021-0003's range; the advisory names
/// `smallvec::SmallVec::insert_many`, which the head's code calls.
async fn review_smallvec(store: &Store) -> proven_report::Report {
    let lock = |v: &str| {
        format!(
            "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"smallvec\"]\n\n[[package]]\nname = \"smallvec\"\nversion = \"{v}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        )
    };
    let repo = TestRepo::new();
    repo.write("Cargo.lock", lock("1.6.1"));
    repo.write("src/main.rs", "fn main() {}\n");
    let base = repo.commit("base");
    repo.write("Cargo.lock", lock("1.6.0"));
    repo.write(
        "src/main.rs",
        "use smallvec::SmallVec;\n\nfn main() {\n    let mut v: SmallVec<[u8; 4]> = SmallVec::new();\n    v.insert_many(0, vec![1, 2]);\n}\n",
    );
    let head = repo.commit("smallvec 1.6.0");
    super::super::run(store, &repo, &base, &head).await
}

fn smallvec_verdict(report: &proven_report::Report) -> ReachVerdict {
    let finding = report
        .findings
        .iter()
        .find(|f| {
            f.advisory
                .as_ref()
                .is_some_and(|a| a.id == "RUSTSEC-2021-0003")
        })
        .unwrap_or_else(|| panic!("a finding of RUSTSEC-2021-0003: {report:#?}"));
    finding
        .reachability
        .as_ref()
        .expect("a dependency finding has a verdict")
        .verdict
}

#[tokio::test]
async fn the_kits_rustsec_database_makes_a_call_of_its_function_reachable() {
    let t = TestStore::new(Backend::Sqlite).await;
    import(&t.store, &kit("osv-crates-rustsec.jsonl")).await;
    // The kit's OSV export alone names no function: the verdict cannot be said.
    let report = review_smallvec(&t.store).await;
    assert_eq!(smallvec_verdict(&report), ReachVerdict::Unknown);

    let counts = import(&t.store, &kit("rustsec-advisory-db.tar.gz")).await;
    assert!(counts.functions > 100, "{counts:?}");
    assert_eq!((counts.inserted, counts.updated), (0, 0), "{counts:?}");
    let report = review_smallvec(&t.store).await;
    assert_eq!(smallvec_verdict(&report), ReachVerdict::Reachable);
    let site = &report
        .findings
        .iter()
        .find_map(|f| f.reachability.as_ref().filter(|r| !r.sites.is_empty()))
        .expect("a site")
        .sites[0];
    assert_eq!((site.path.as_str(), site.line), ("src/main.rs", 5));
}

/// Reading RustSec's database is no upstream change: a sync of it alone changes nothing.
#[tokio::test]
async fn functions_are_no_change_of_the_advisory() {
    let t = TestStore::new(Backend::Sqlite).await;
    import(&t.store, &kit("osv-crates-rustsec.jsonl")).await;
    let mut items = Vec::new();
    proven_osv::read_osv_source(&kit("rustsec-advisory-db.tar.gz"), &mut |i| items.push(i))
        .expect("tarball");
    let mut run = t.store.begin_import_in("rustsec", "enrich");
    for item in items {
        run.add_item(item).await.expect("import");
    }
    run.finish().await.expect("finish");
    let set = t.store.change_set("enrich").await.expect("change set");
    assert!(
        set.new.is_empty() && set.modified.is_empty() && set.withdrawn.is_empty(),
        "{set:?}"
    );
}
