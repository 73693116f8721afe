//! What the ask shows each party of the checkout: the generator, the files most relevant
//! to its question (numbered); the refuter, only the lines a claim cites; the auditor, the
//! manifests (dependency files and entry points), never the answer.

use std::path::Path;

use serde_json::{Value, json};

use proven_review::core::citation::{Citation, numbered};

/// Files a listing names at most.
pub(super) const MAX_LISTING: usize = 5000;
/// The most of the files' text one prompt shows.
const MAX_SHOWN_BYTES: usize = 96 << 10;
/// The largest file read for a prompt.
const MAX_FILE_BYTES: u64 = 256 << 10;
/// Files scored by their text at most (the rest by their path).
const MAX_SCORED: usize = 400;
/// Names of files that start a program or a deployment (the auditor's entry points).
const ENTRY_POINTS: &str = "main.py __main__.py app.py manage.py wsgi.py main.go main.rs lib.rs \
    index.js server.js app.js Dockerfile docker-compose.yml Makefile Procfile";

/// A file's text at the checkout's commit (None: not there, too large, or not text).
pub(super) fn text(c: &Checkout, path: &str) -> Option<String> {
    texts(c, &[path]).pop().flatten()
}

/// Each file's text at the checkout's commit, the repository opened once.
pub(super) fn texts(c: &Checkout, paths: &[&str]) -> Vec<Option<String>> {
    let Ok(repo) = proven_change::Repo::open(std::path::Path::new(&c.dir)) else {
        return vec![None; paths.len()];
    };
    paths
        .iter()
        .map(
            |path| match repo.read_blob(&c.commit, path.as_bytes(), MAX_FILE_BYTES) {
                Ok(proven_change::BlobRead::Content(b)) => String::from_utf8(b).ok(),
                _ => None,
            },
        )
        .collect()
}

/// The words of a question that may name a file or a symbol.
fn words(question: &str) -> Vec<String> {
    question
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '/'))
        .map(|w| w.trim_matches('.').to_lowercase())
        .filter(|w| w.len() >= 3)
        .collect()
}

/// The files the generator is shown: under `surface` when it probes one, else the whole
/// checkout; ranked by how often the question's words occur in their path and text, most
/// first, within [`MAX_SHOWN_BYTES`].
pub(super) fn relevant(c: &Checkout, question: &str, surface: Option<&str>) -> Vec<Value> {
    let words = words(question);
    let candidates: Vec<&String> = c
        .files
        .iter()
        .filter(|f| surface.is_none_or(|s| under(f, s)))
        .collect();
    // Paths that name the question's words first, so the texts read are the likeliest.
    let by_path = |f: &str| {
        let lower = f.to_lowercase();
        words.iter().filter(|w| lower.contains(w.as_str())).count() * 20
    };
    let mut ranked: Vec<&String> = candidates.clone();
    ranked.sort_by_key(|f| std::cmp::Reverse(by_path(f)));
    ranked.truncate(MAX_SCORED);
    let read: Vec<&str> = ranked.iter().map(|f| f.as_str()).collect();
    let mut scored: Vec<(usize, &String, Option<String>)> = ranked
        .iter()
        .zip(texts(c, &read))
        .map(|(f, text)| {
            let by_text = text.as_deref().map_or(0, |t| {
                let t = t.to_lowercase();
                words
                    .iter()
                    .map(|w| t.matches(w.as_str()).count().min(10))
                    .sum()
            });
            (by_path(f) + by_text, *f, text)
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let mut out = Vec::new();
    let mut used = 0;
    for (_, path, text) in scored {
        let Some(text) = text else { continue };
        if used >= MAX_SHOWN_BYTES {
            break;
        }
        let shown = numbered(&text, MAX_SHOWN_BYTES - used);
        used += shown.len();
        out.push(json!({"path": path, "lines": shown}));
    }
    out
}

/// The lines a citation names, as Proven reads them (what the refuter opens).
pub(super) fn lines(c: &Checkout, cite: &Citation) -> Option<String> {
    let text = text(c, &cite.path)?;
    let picked: Vec<String> = text
        .lines()
        .enumerate()
        .skip(cite.line_start.saturating_sub(1) as usize)
        .take((cite.line_end.saturating_sub(cite.line_start) + 1).min(80) as usize)
        .map(|(i, l)| format!("{:>5}  {l}", i + 1))
        .collect();
    (!picked.is_empty()).then(|| picked.join("\n"))
}

/// The manifests: dependency files and entry points of the listing.
pub(super) fn manifests(c: &Checkout) -> Vec<String> {
    c.files
        .iter()
        .filter(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            proven_lockfile::Format::detect(f).is_some()
                || ENTRY_POINTS.split_whitespace().any(|e| e == name)
                || f.starts_with(".github/workflows/")
        })
        .take(50)
        .cloned()
        .collect()
}

/// The manifests' texts as the auditor reads them (bounded).
pub(super) fn manifest_texts(c: &Checkout, manifests: &[String]) -> Vec<Value> {
    let mut used = 0;
    manifests
        .iter()
        .map(|m| {
            let t = text(c, m).map(|t| {
                let budget = (MAX_SHOWN_BYTES / 2).saturating_sub(used);
                let clipped: String = t.chars().take(budget.min(16 << 10)).collect();
                used += clipped.len();
                clipped
            });
            json!({"path": m, "text": t})
        })
        .collect()
}

/// The repository at one revision, as the ask reads it.
#[derive(Debug, Clone)]
pub struct Checkout {
    pub dir: String,
    pub commit: String,
    pub files: Vec<String>,
    pub cut: bool,
}

impl Checkout {
    pub fn open(dir: &Path, rev: &str) -> Result<Checkout, String> {
        let repo = proven_change::Repo::open(dir).map_err(|e| e.to_string())?;
        let commit = repo.resolve(rev).map_err(|e| e.to_string())?.commit;
        let (files, cut) = repo
            .list_files(&commit, MAX_LISTING)
            .map_err(|e| e.to_string())?;
        Ok(Checkout {
            dir: dir.display().to_string(),
            commit,
            files,
            cut,
        })
    }

    /// Whether `surface` is a path of the checkout: a file, or a directory holding one.
    pub(super) fn holds(&self, surface: &str) -> bool {
        let s = surface.trim_end_matches('/');
        !s.is_empty()
            && self
                .files
                .iter()
                .any(|f| f == s || f.strip_prefix(s).is_some_and(|r| r.starts_with('/')))
    }
}

pub(super) fn under(path: &str, surface: &str) -> bool {
    let s = surface.trim_end_matches('/');
    path == s || path.strip_prefix(s).is_some_and(|r| r.starts_with('/'))
}

#[cfg(test)]
mod checkout_tests {
    use super::*;

    #[test]
    fn a_surface_is_a_file_or_a_directory_of_the_checkout() {
        let c = Checkout {
            dir: "r".into(),
            commit: "abc".into(),
            files: vec!["src/app.py".into(), "deploy/ci.yml".into()],
            cut: false,
        };
        assert!(c.holds("src") && c.holds("src/") && c.holds("deploy/ci.yml"));
        assert!(!c.holds("sr") && !c.holds("the deploy pipeline") && !c.holds(""));
        assert!(under("src/app.py", "src/") && !under("srcx/app.py", "src"));
    }
}
