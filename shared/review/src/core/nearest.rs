//! The package's tests nearest a patch: the test files that import a module the patch edits.
//! A popular project's whole suite can outlast `suite_timeout` on the sandbox's one CPU
//! (keras's, sqlalchemy's: thousands of tests); a suite that did not finish proves nothing,
//! so no fix could ever be proved there. Those files then run in its place, within the
//! suite's own command (its options, its variables), held to the base as the whole suite
//! is, and every format says that only they ran.
//!
//! Written here: no crate maps a Python file to the test files that import it (coverage
//! based test selection needs a run of the whole suite first, which is what did not fit).

use std::path::Path;

use proven_pipeline::{Lease, StepError};

use crate::core::step::ReviewStep;
use proven_sandbox::{Language, RunRequest};

use crate::core::outcome::blocking;
use crate::core::test_runs::MAX_FILE_BYTES;
use crate::core::wire::ReviewView;

/// At most this many test files run in place of the whole suite.
pub(crate) const MAX_NEAREST_FILES: usize = 40;

/// A tree this large is not listed for its test files.
const MAX_LISTED_FILES: usize = 200_000;

/// The test files chosen, and how many imported what the patch edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Nearest {
    pub files: Vec<String>,
    pub found: usize,
}

/// The dotted module a Python file is (`keras/initializers.py` → `keras.initializers`,
/// `src/pkg/__init__.py` → `pkg`); none for a file that is not Python.
fn module_of(path: &str) -> Option<String> {
    let path = path.strip_suffix(".py")?;
    let path = path.strip_prefix("src/").unwrap_or(path);
    let path = path.strip_suffix("/__init__").unwrap_or(path);
    (!path.is_empty() && path != "__init__").then(|| path.replace('/', "."))
}

/// Whether a file is a test file by the names pytest, unittest and nose collect.
fn is_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".py")
        && (name.starts_with("test") || name.ends_with("_test.py") || name.ends_with("_tests.py"))
}

/// Whether `text` names `word` whole: not inside a longer dotted name.
fn names_whole(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(|c| part(c) || c == '.') && !after.is_some_and(part)
    })
}

/// Whether Python source `text` imports `module`: `import a.b.c`, `from a.b.c import x`,
/// `from a.b import c` (parenthesised over lines too), or names `a.b.c` in its code after
/// importing `a`.
fn imports(text: &str, module: &str) -> bool {
    let (parent, last) = module.rsplit_once('.').unwrap_or(("", module));
    let is_module = |m: &str| m == module || m.starts_with(&format!("{module}."));
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("import ") {
            let names = rest.split(',').filter_map(|m| m.split_whitespace().next());
            if names.into_iter().any(is_module) {
                return true;
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let Some((from, names)) = rest.split_once(" import ") else {
                continue;
            };
            if is_module(from.trim()) {
                return true;
            }
            if parent.is_empty() || from.trim() != parent {
                continue;
            }
            let mut names = names.to_string();
            if names.trim_start().starts_with('(') && !names.contains(')') {
                for more in lines.by_ref() {
                    names.push_str(more);
                    if more.contains(')') {
                        break;
                    }
                }
            }
            let word = |c: char| !(c.is_alphanumeric() || c == '_');
            if names.split(word).any(|w| w == last) {
                return true;
            }
        }
    }
    module.contains('.') && names_whole(text, module)
}

/// Whether test file `path` is named for one of the modules whose last names are `lasts`
/// (`test_initializers.py`, `initializers_test.py`).
fn named_for(path: &str, lasts: &[&str]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.strip_suffix(".py").unwrap_or(name);
    lasts.iter().any(|l| {
        [
            format!("test_{l}"),
            format!("{l}_test"),
            format!("{l}_tests"),
            format!("tests_{l}"),
        ]
        .iter()
        .any(|s| s == stem)
    })
}

/// The test files among `files` nearest the edited paths: those named for an edited module
/// (`test_initializers.py`, `initializers_test.py`) first, then those that import one, in
/// the tree's order; where none is named for an edited module, then those named for its
/// package below the top one (`backend_test.py` for `keras/backend/tensorflow_backend.py`,
/// which every test reaches through `keras.backend` and few import by name). At most
/// [`MAX_NEAREST_FILES`]; none when no edited file is Python.
pub(crate) fn nearest_tests(
    files: &[String],
    read: &dyn Fn(&str) -> Option<String>,
    edited: &[String],
) -> Nearest {
    let by_package = if edited.iter().any(|p| p.ends_with(".go")) {
        Some(super::nearest_packages::go_nearest(
            files,
            read,
            edited,
            MAX_NEAREST_FILES,
        ))
    } else if edited.iter().any(|p| p.ends_with(".rs")) {
        Some(super::nearest_packages::rust_nearest(
            files,
            read,
            edited,
            MAX_NEAREST_FILES,
        ))
    } else {
        None
    };
    if let Some((files, found)) = by_package {
        return Nearest { files, found };
    }
    let modules: Vec<String> = edited.iter().filter_map(|p| module_of(p)).collect();
    let lasts: Vec<&str> = modules
        .iter()
        .map(|m| m.rsplit('.').next().unwrap_or(m))
        .collect();
    // `a.b.c`'s package `a.b`, by its last name `b`; not a top-level package.
    let packages: Vec<&str> = modules
        .iter()
        .filter_map(|m| m.rsplit_once('.')?.0.rsplit_once('.').map(|(_, p)| p))
        .collect();
    let tests = files
        .iter()
        .filter(|f| is_test_file(f) && !edited.contains(f));
    let (mut by_name, mut by_import, mut by_package) = (Vec::new(), Vec::new(), Vec::new());
    for f in tests {
        if named_for(f, &lasts) {
            by_name.push(f.clone());
        } else if !modules.is_empty()
            && read(f).is_some_and(|text| modules.iter().any(|m| imports(&text, m)))
        {
            by_import.push(f.clone());
        } else if named_for(f, &packages) {
            by_package.push(f.clone());
        }
    }
    if by_name.is_empty() {
        by_import.extend(by_package);
    }
    by_name.extend(by_import);
    let found = by_name.len();
    by_name.truncate(MAX_NEAREST_FILES);
    Nearest {
        files: by_name,
        found,
    }
}

/// A file of `rev` as text, as the nearest tests read it (none where it is not text).
fn text_at<'a>(
    repo: &'a proven_change::Repo,
    rev: &'a str,
) -> impl Fn(&str) -> Option<String> + 'a {
    move |path: &str| match repo.read_blob(rev, path.as_bytes(), MAX_FILE_BYTES) {
        Ok(proven_change::BlobRead::Content(b)) => String::from_utf8(b).ok(),
        _ => None,
    }
}

/// The test files of the tree at `revision` nearest the edited paths ([`nearest_tests`]).
pub(crate) async fn nearest_at(
    view: &ReviewView<'_>,
    revision: &str,
    edited: Vec<String>,
) -> Result<Nearest, StepError> {
    let (dir, rev) = (view.repository_dir.to_string(), revision.to_string());
    blocking(move || {
        let Ok(repo) = proven_change::Repo::open(Path::new(&dir)) else {
            return Nearest {
                files: Vec::new(),
                found: 0,
            };
        };
        let files = repo
            .list_files(&rev, MAX_LISTED_FILES)
            .map(|(f, _)| f)
            .unwrap_or_default();
        nearest_tests(&files, &text_at(&repo, &rev), &edited)
    })
    .await
}

/// The run of `files` within the package's documented suite at `revision` (its options,
/// its variables, its setup), as a whole suite's run is bounded; none where the suite says
/// nothing of how its runner selects (Go runs the files' packages, cargo their members;
/// Node selects no files here).
pub(crate) async fn files_request(
    view: &ReviewView<'_>,
    revision: &str,
    language: Language,
    files: &[String],
) -> Result<Option<RunRequest>, StepError> {
    let suite = crate::core::suite::documented(view, revision, language).await?;
    let run = if language == Language::Rust {
        // cargo runs a workspace member whole: the members of the files, by package.
        let (dir, rev, files) = (
            view.repository_dir.to_string(),
            revision.to_string(),
            files.to_vec(),
        );
        let packages = blocking(move || {
            let Ok(repo) = proven_change::Repo::open(Path::new(&dir)) else {
                return Vec::new();
            };
            super::nearest_packages::rust_packages_of(&files, &text_at(&repo, &rev))
        })
        .await?;
        suite.select_packages(language, &packages)
    } else {
        suite.select_files(language, files)
    };
    let Some(run) = run else {
        return Ok(None);
    };
    Ok(Some(crate::core::suite::whole_suite_request(
        view, revision, language, run,
    )))
}

/// The package's tests nearest the patch, run with it in place of a whole suite that
/// outlasted `suite_timeout`.
pub(crate) struct Narrowed {
    pub nearest: Nearest,
    /// Their run with the patch, and what was run.
    pub run: proven_sandbox::RunRecord,
    pub request: RunRequest,
}

impl Narrowed {
    /// What every format says of it: the whole suite ran past `setting` (`timeout`).
    pub(crate) fn words(&self, setting: &str, timeout: std::time::Duration) -> String {
        let n = &self.nearest;
        let of = if n.found > n.files.len() {
            format!("{} of the {}", n.files.len(), n.found)
        } else {
            n.files.len().to_string()
        };
        format!(
            "the package's whole suite ran past {setting} ({} s), so only the {of} test file(s) that import what the patch edits ran, with the patch and as the suite runs them: {}",
            timeout.as_secs(),
            n.files.join(", ")
        )
    }
}

/// What a narrowing is asked: the review, the suite's language, the paths the patch edits,
/// the patch, and each run's time.
pub(crate) type Ask<'a> = (
    &'a crate::core::wire::ReviewView<'a>,
    proven_sandbox::Language,
    Vec<String>,
    (Vec<proven_sandbox::Edit>, std::time::Duration),
);

/// When the proving test passed twice with the patch and the whole suite was killed at
/// `suite_timeout`: the test files of the base that import what the patch edits, run with
/// it on the change; none where no such file is found or the suite cannot select files.
pub(crate) async fn narrowed(
    s: &ReviewStep<'_>,
    lease: &Lease,
    nearest: Ask<'_>,
    key: &str,
    records: &[proven_sandbox::RunRecord],
) -> Result<Option<Narrowed>, StepError> {
    let passed = crate::core::test_runs::passed;
    let proving_passed = records.iter().take(2).filter(|r| passed(r)).count() == 2;
    if !proving_passed || !records.get(2).is_some_and(|r| r.timed_out) {
        return Ok(None);
    }
    nearest_run(s, lease, nearest, ("fix-nearest", key)).await
}

/// The test files of the base nearest the edited `paths`, run on the head with `edits`
/// within the suite's own command, the run bounded by `timeout`: none where no such file
/// is found or the suite cannot name files (a language whose files are not chosen here).
pub(crate) async fn nearest_run(
    s: &ReviewStep<'_>,
    lease: &Lease,
    (view, language, paths, (edits, timeout)): Ask<'_>,
    key: (&str, &str),
) -> Result<Option<Narrowed>, StepError> {
    // The base's test files: a pull request cannot plant the tests its fix is held to.
    let nearest = nearest_at(view, view.base, paths).await?;
    if nearest.files.is_empty() {
        return Ok(None);
    }
    let Some(request) = files_request(view, view.head, language, &nearest.files).await? else {
        return Ok(None);
    };
    let request = request.with_patch(edits).with_timeout(timeout);
    let requests = vec![("suite-nearest".to_string(), request.clone())];
    let done = crate::core::test_runs::run_in_turn(s, lease, key, requests, false).await?;
    let run = done.runs.into_iter().next();
    Ok(run.map(|run| Narrowed {
        nearest,
        run,
        request,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_file_is_its_dotted_module() {
        assert_eq!(
            module_of("keras/initializers.py").as_deref(),
            Some("keras.initializers")
        );
        assert_eq!(module_of("src/pkg/__init__.py").as_deref(), Some("pkg"));
        assert_eq!(module_of("calc.py").as_deref(), Some("calc"));
        assert_eq!(module_of("README.md"), None);
    }

    /// The test files that import an edited module, by each form of import, and those named
    /// for it first; a module of a longer name (`keras.initializers_v2`) or another
    /// package's module of the same last name is not it.
    #[test]
    fn the_nearest_tests_are_those_that_import_what_the_patch_edits() {
        let texts = [
            ("tests/keras/initializers_test.py", "import numpy\n"),
            (
                "tests/keras/layers_test.py",
                "from keras import (layers,\n    initializers)\n",
            ),
            (
                "tests/keras/backend_test.py",
                "from keras.initializers import glorot_uniform\n",
            ),
            (
                "tests/keras/models_test.py",
                "import keras\nx = keras.initializers.Zeros()\n",
            ),
            (
                "tests/keras/other_test.py",
                "import keras.initializers_v2\n",
            ),
            ("tests/keras/optim_test.py", "from tf import initializers\n"),
            ("tests/conftest.py", "from keras import initializers\n"),
            ("keras/initializers.py", "from keras import backend\n"),
        ];
        let files: Vec<String> = texts.iter().map(|(p, _)| p.to_string()).collect();
        let read = |p: &str| {
            texts
                .iter()
                .find(|(q, _)| *q == p)
                .map(|(_, t)| t.to_string())
        };
        let nearest = nearest_tests(&files, &read, &["keras/initializers.py".to_string()]);
        assert_eq!(
            nearest.files,
            [
                "tests/keras/initializers_test.py",
                "tests/keras/layers_test.py",
                "tests/keras/backend_test.py",
                "tests/keras/models_test.py",
            ]
        );
        assert_eq!(nearest.found, 4);
        let none = nearest_tests(&files, &read, &["docs/index.md".to_string()]);
        assert!(none.files.is_empty());
    }

    /// keras-26: the patch edits `keras/backend/tensorflow_backend.py`; no test file is
    /// named for it, and the two that import it by name test nothing here (one needs a GPU,
    /// one the suite leaves out). Its package's tests (`backend_test.py`) run it through
    /// `keras.backend`.
    #[test]
    fn a_module_without_tests_of_its_own_is_tested_by_its_packages() {
        let texts = [
            (
                "tests/keras/backend/backend_test.py",
                "from keras import backend as K\n",
            ),
            (
                "tests/keras/layers/cudnn_recurrent_test.py",
                "from keras.backend import tensorflow_backend as KTF\n",
            ),
            ("tests/keras/test_keras.py", "import keras\n"),
            (
                "tests/keras/layers/core_test.py",
                "from keras import layers\n",
            ),
        ];
        let files: Vec<String> = texts.iter().map(|(p, _)| p.to_string()).collect();
        let read = |p: &str| {
            texts
                .iter()
                .find(|(q, _)| *q == p)
                .map(|(_, t)| t.to_string())
        };
        let edited = ["keras/backend/tensorflow_backend.py".to_string()];
        let nearest = nearest_tests(&files, &read, &edited);
        assert_eq!(
            nearest.files,
            [
                "tests/keras/layers/cudnn_recurrent_test.py",
                "tests/keras/backend/backend_test.py",
            ],
            "the importer, then the package's tests; never the top package's"
        );
        // A module with a test file of its own is tested by it, not by its package's.
        let mut with_own = files.clone();
        with_own.push("tests/keras/backend/tensorflow_backend_test.py".into());
        let nearest = nearest_tests(&with_own, &read, &edited);
        assert_eq!(
            nearest.files,
            [
                "tests/keras/backend/tensorflow_backend_test.py",
                "tests/keras/layers/cudnn_recurrent_test.py",
            ]
        );
    }

    #[test]
    fn at_most_forty_files_run_and_how_many_were_found_is_kept() {
        let files: Vec<String> = (0..50).map(|i| format!("tests/test_{i}.py")).collect();
        let read = |_: &str| Some("from pkg import calc\n".to_string());
        let nearest = nearest_tests(&files, &read, &["pkg/calc.py".to_string()]);
        assert_eq!(nearest.files.len(), MAX_NEAREST_FILES);
        assert_eq!(nearest.found, 50);
    }
}
