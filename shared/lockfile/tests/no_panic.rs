//! No reader panics, whatever the bytes: arbitrary input for every format, and arbitrary
//! mutations (byte flips, cuts, insertions, line swaps) of the real lock files.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use proven_lockfile::{Format, Limits, MemTree, read};

const ROOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/lockfiles"
);

/// A path of each format (detected as such).
const PATHS: [&str; 20] = [
    "Cargo.lock",
    "Cargo.toml",
    "package-lock.json",
    "package.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "requirements.txt",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "pyproject.toml",
    "go.mod",
    "go.sum",
    "composer.lock",
    "composer.json",
    "Gemfile.lock",
    "Gemfile",
    "gradle/libs.versions.toml",
    "build.gradle.kts",
    "pom.xml",
];

/// The real files, read once per test binary.
fn real_files() -> &'static [(String, Vec<u8>)] {
    static FILES: std::sync::OnceLock<Vec<(String, Vec<u8>)>> = std::sync::OnceLock::new();
    FILES.get_or_init(load_real_files)
}

fn load_real_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(ROOT)];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if let Some(rel) = p.strip_prefix(ROOT).ok().and_then(|r| r.to_str())
                && Format::detect(rel).is_some()
            {
                out.push((rel.to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_format_path_is_detected() {
    let formats: std::collections::BTreeSet<_> =
        PATHS.iter().filter_map(|p| Format::detect(p)).collect();
    assert_eq!(formats.len(), Format::ALL.len());
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    SwapLines(usize, usize),
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = bytes.len().max(1);
        match m {
            Mutation::Flip(at, b) => {
                if let Some(x) = bytes.get_mut(at % len) {
                    *x ^= *b;
                }
            }
            Mutation::Cut(at) => bytes.truncate(at % len),
            Mutation::Insert(at, ins) => {
                let at = (at % len).min(bytes.len());
                bytes.splice(at..at, ins.iter().copied());
            }
            Mutation::Delete(at, n) => {
                let at = (at % len).min(bytes.len());
                let end = (at + n % 4096).min(bytes.len());
                bytes.drain(at..end);
            }
            Mutation::SwapLines(a, b) => {
                let mut lines: Vec<Vec<u8>> =
                    bytes.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                let n = lines.len();
                lines.swap(a % n, b % n);
                bytes = lines.join(&b'\n');
            }
        }
    }
    bytes
}

fn mutation() -> impl Strategy<Value = Mutation> {
    // Bytes that matter to the formats: quotes, brackets, colons, newlines, indentation.
    let interesting = prop::sample::select(vec![
        b"\"".to_vec(),
        b"[".to_vec(),
        b"]".to_vec(),
        b"{".to_vec(),
        b"}".to_vec(),
        b":".to_vec(),
        b"\n".to_vec(),
        b"  ".to_vec(),
        b"=".to_vec(),
        b"@".to_vec(),
        b"(".to_vec(),
        b")".to_vec(),
        b"\\".to_vec(),
        b"#".to_vec(),
        b"${".to_vec(),
        b"<".to_vec(),
        b"- ".to_vec(),
        b"&a ".to_vec(),
        b"*a".to_vec(),
        "é".as_bytes().to_vec(),
        b"node_modules/".to_vec(),
        b"==".to_vec(),
        b"=>".to_vec(),
    ]);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Mutation::Flip(a, b)),
        any::<usize>().prop_map(Mutation::Cut),
        (any::<usize>(), interesting).prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 0..8))
            .prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(format in 0usize..PATHS.len(), bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let path = PATHS[format];
        let _ = read(&MemTree::with(path, bytes), path, &Limits::default());
    }

    #[test]
    fn arbitrary_text_never_panics(format in 0usize..PATHS.len(), text in "[ -~\n\t]{0,400}") {
        let path = PATHS[format];
        let _ = read(&MemTree::with(path, text), path, &Limits::default());
    }
}

proptest! {
    // Real files are up to 860 KB: fewer cases, each a handful of mutations.
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_files_never_panic(pick in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..6)) {
        let files = real_files();
        let (path, bytes) = &files[pick % files.len()];
        let mutated = apply(bytes.clone(), &mutations);
        // The mutated file keeps its name and its siblings, so the readers of siblings run too.
        let mut tree = MemTree::new();
        for (p, b) in files {
            tree.insert(p.clone(), b.clone());
        }
        tree.insert(path.clone(), mutated);
        let _ = read(&tree, path, &Limits::default());
    }

    #[test]
    fn mutated_siblings_never_panic(pick in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..6)) {
        // Break the manifest beside a lock and read the lock.
        let files = real_files();
        let manifests: Vec<&(String, Vec<u8>)> = files
            .iter()
            .filter(|(p, _)| matches!(Format::detect(p), Some(f) if !f.is_lock()))
            .collect();
        let (path, bytes) = manifests[pick % manifests.len()];
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let mut tree = MemTree::new();
        for (p, b) in files {
            tree.insert(p.clone(), b.clone());
        }
        tree.insert(path.clone(), apply(bytes.clone(), &mutations));
        for (p, _) in files.iter().filter(|(p, _)| p.rsplit_once('/').map_or("", |(d, _)| d) == dir) {
            let _ = read(&tree, p, &Limits::default());
        }
    }
}

#[test]
fn real_files_with_every_single_line_dropped_never_panic() {
    // Systematic rather than random: each of the small real files with each line removed.
    for (path, bytes) in real_files().iter().filter(|(_, b)| b.len() < 8_000) {
        let lines: Vec<&[u8]> = bytes.split(|&c| c == b'\n').collect();
        for skip in 0..lines.len() {
            let text: Vec<u8> = lines
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != skip)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join(&b'\n');
            let _ = read(&MemTree::with(path.clone(), text), path, &Limits::default());
        }
    }
}
