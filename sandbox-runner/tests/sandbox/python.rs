//! Must-show 1: a Python change that introduces a bug is `reproduced`; a test that fails
//! on both sides, passes on both, or times out proves nothing.

use std::time::Duration;

use proven_sandbox::{Edit, Language, NotProved, Outcome, Proof, RunRecord, RunRequest, Side};

use crate::support::{self, assert_container_gone, pytest, python_project};

const TEST_CLAMP: &str = "from calc import clamp\n\ndef test_clamp_keeps_a_value_inside_the_range():\n    assert clamp(5, 0, 10) == 5\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bug_the_change_introduces_is_reproduced() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    let base = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_clamp.py"),
    )
    .with_file("tests/test_clamp.py", TEST_CLAMP);
    let change = base.at_revision(&project.change);

    let reproduction = sandbox.reproduce(&base, &change).await.expect("runs");
    assert_eq!(reproduction.proof, Proof::Reproduced, "{reproduction:#?}");
    assert_eq!(reproduction.base.len(), 2);
    assert_eq!(reproduction.change.len(), 2);
    for record in reproduction.base.iter().chain(&reproduction.change) {
        // The record is evidence: the image, the command, the tree and the output's digest.
        assert!(
            record.image_id.starts_with("sha256:"),
            "{}",
            record.image_id
        );
        assert_eq!(record.command, pytest("tests/test_clamp.py"));
        assert_eq!(record.tree.added_files.len(), 1);
        assert_eq!(record.output.sha256.len(), 64);
        assert!(!record.timed_out && record.killed.is_none());
        assert_container_gone(&sandbox, record).await;
    }
    assert_eq!(reproduction.base[0].tree.commit, project.base);
    assert_eq!(reproduction.change[0].tree.commit, project.change);
    assert_eq!(reproduction.change[0].exit_code, Some(1));
    assert!(support::output(&reproduction.change[0]).contains("assert 0 == 5"));

    // The Fixer's step: change plus a patch that restores clamp passes.
    let patched = change.clone().with_patch(vec![Edit {
        path: "calc.py".into(),
        old_text: "min(lo, max(x, hi))".into(),
        new_text: "max(lo, min(x, hi))".into(),
    }]);
    let record = sandbox.run(&patched).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
    assert!(record.tree.patch_sha256.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_failing_on_both_sides_proves_nothing() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    let wrong = "from calc import clamp\n\ndef test_wrong_expectation():\n    assert clamp(5, 0, 10) == 6\n";
    let base = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_wrong.py"),
    )
    .with_file("tests/test_wrong.py", wrong);
    let reproduction = sandbox
        .reproduce(&base, &base.at_revision(&project.change))
        .await
        .expect("runs");
    assert_eq!(
        reproduction.proof,
        Proof::NotProved {
            why: NotProved::FailsOnBoth
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_passing_on_both_sides_proves_nothing() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    // clamp(-1, 0, 10) is 0 with and without the change's bug.
    let blind =
        "from calc import clamp\n\ndef test_below_the_range():\n    assert clamp(-1, 0, 10) == 0\n";
    let base = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_blind.py"),
    )
    .with_file("tests/test_blind.py", blind);
    let reproduction = sandbox
        .reproduce(&base, &base.at_revision(&project.change))
        .await
        .expect("runs");
    assert_eq!(
        reproduction.proof,
        Proof::NotProved {
            why: NotProved::PassesOnBoth
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_times_out_proves_nothing() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    // Hangs on the base only: without the timeout rule the change's failure would count.
    let hangs = "import time\nfrom calc import clamp\n\ndef test_hangs_on_base():\n    if clamp(5, 0, 10) == 5:\n        time.sleep(10**6)\n    assert clamp(5, 0, 10) == 5\n";
    let base = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_hangs.py"),
    )
    .with_file("tests/test_hangs.py", hangs)
    .with_timeout(Duration::from_secs(3));
    let reproduction = sandbox
        .reproduce(&base, &base.at_revision(&project.change))
        .await
        .expect("runs");
    let Proof::NotProved {
        why: NotProved::Incomplete { side, reason },
    } = &reproduction.proof
    else {
        panic!("a timeout must prove nothing: {:#?}", reproduction.proof);
    };
    assert_eq!(*side, Side::Base);
    assert!(reason.contains("timeout"), "{reason}");
    let record = &reproduction.base[0];
    assert!(record.timed_out);
    assert!(
        record.duration_ms < 15_000,
        "killed near 3 s: {}",
        record.duration_ms
    );
    assert_container_gone(&sandbox, record).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_dependencies_are_prepared_from_the_lock_file_and_cached() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    // The marker makes this tree's lock file (so its cache entry) new to every test run:
    // the first run prepares, the second finds it cached.
    let marker = support::unique();
    repo.write(
        "requirements.txt",
        format!("# {marker}\niniconfig==2.0.0\n"),
    )
    .write(
        "app.py",
        "import iniconfig\n\ndef version():\n    return iniconfig.__name__\n",
    );
    let commit = repo.commit("app with a dependency");
    let test = "from app import version\n\ndef test_dependency_imports():\n    assert version() == 'iniconfig'\n";
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_app.py"),
    )
    .with_file("test_app.py", test);
    let first = sandbox.run(&request).await.expect("run");
    assert_eq!(
        first.outcome,
        Outcome::Passed,
        "{}",
        support::output(&first)
    );
    let deps = first.dependencies.as_ref().expect("prepared dependencies");
    assert!(deps.prepared_now);
    assert_eq!(deps.lock_files, vec!["requirements.txt".to_string()]);
    let second = sandbox.run(&request).await.expect("run");
    assert_eq!(second.outcome, Outcome::Passed);
    let cached = second.dependencies.as_ref().expect("prepared dependencies");
    assert!(!cached.prepared_now, "the second run uses the cache");
    assert_eq!(cached.key, deps.key);
    // The entry is this test's own (its lock file is unique): remove it.
    let entries: Vec<_> = walk(&sandbox.config().cache_dir.join("deps"))
        .into_iter()
        .filter(|p| p.ends_with(format!("python-{}", deps.key)))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    std::fs::remove_dir_all(&entries[0]).expect("remove the test's cache entry");
}

/// Runs that need one layer at once (a review's test run and its analyzer's run, both
/// cold) prepare it once: the one that waited finds it cached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_needing_one_layer_at_once_prepare_it_once() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "requirements.txt",
        format!("# {marker}\niniconfig==2.0.0\n"),
    )
    .write(
        "app.py",
        "import iniconfig\n\ndef version():\n    return iniconfig.__name__\n",
    );
    let commit = repo.commit("app with a dependency");
    let test = "from app import version\n\ndef test_dependency_imports():\n    assert version() == 'iniconfig'\n";
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_app.py"),
    )
    .with_file("test_app.py", test);
    let (a, b) = tokio::join!(sandbox.run(&request), sandbox.run(&request));
    let (a, b) = (a.expect("run"), b.expect("run"));
    let deps: Vec<_> = [&a, &b]
        .iter()
        .map(|r| {
            assert_eq!(r.outcome, Outcome::Passed, "{}", support::output(r));
            r.dependencies.clone().expect("prepared dependencies")
        })
        .collect();
    assert_eq!(deps[0].key, deps[1].key);
    assert_eq!(
        deps.iter().filter(|d| d.prepared_now).count(),
        1,
        "one preparation: {deps:#?}"
    );
    let entries: Vec<_> = walk(&sandbox.config().cache_dir.join("deps"))
        .into_iter()
        .filter(|p| p.ends_with(format!("python-{}", deps[0].key)))
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    std::fs::remove_dir_all(&entries[0]).expect("remove the test's cache entry");
}

/// The project layer's preparation runs the tree's setup.py, which can leave
/// `/proj/report.json` a symlink (here to a file beside it, which the preparation's own
/// report then goes through): the host never follows it, and the run fails naming it
/// instead of reading what it points at. (`/deps` is read-only there.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_the_preparation_left_as_a_symlink_is_never_followed() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nimport os\nfor d in ('/deps', '/proj'):\n    try:\n        os.symlink('report.real.json', d + '/report.json')\n    except OSError:\n        pass\nfrom setuptools import setup\nsetup(name='linkdemo', py_modules=['linkdemo'])\n"
        ),
    )
    .write("linkdemo.py", "def one():\n    return 1\n");
    let commit = repo.commit("a setup.py that links the report");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_link.py"),
    )
    .with_file(
        "test_link.py",
        "from linkdemo import one\n\ndef test_one():\n    assert one() == 1\n",
    );
    let err = sandbox
        .run(&request)
        .await
        .expect_err("a linked report is refused");
    assert!(
        err.to_string()
            .ends_with("report.json is a symlink: never followed"),
        "{err}"
    );
    assert!(!err.is_retryable(), "{err}");
}

/// The directories two levels under `root` (tenant, entry).
fn walk(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|t| std::fs::read_dir(t.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .collect()
}

/// A project that pins an old dependency of the image's own pytest (pluggy 0.13, as BugsInPy
/// black's Pipfile.lock pins typing_extensions 3.7): the pin shadows the image's copy and
/// pytest no longer starts; the preparation installs a pytest that fits the pins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_pinning_an_old_dependency_of_pytest_still_runs_its_tests() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write("requirements.txt", format!("# {marker}\npluggy==0.13.1\n"))
        .write("app.py", "def one():\n    return 1\n");
    let commit = repo.commit("app pinning an old pluggy");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_app.py"),
    )
    .with_file(
        "test_app.py",
        "import pluggy\nfrom app import one\n\ndef test_one():\n    assert one() == 1\n    assert pluggy.__version__ == '0.13.1'\n",
    );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("does not start beside the project's pins")),
        "{:?}",
        deps.notes
    );
}

/// A project whose version comes from git (setuptools_scm): the tree the sandbox copies has
/// no .git, and the project is still installed (its version given); the version module its
/// build writes into the tree (black's `_black_version.py`) is there when the tests run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_versioned_by_setuptools_scm_is_installed_without_git_metadata() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nfrom setuptools import setup\nsetup(name='scmdemo', use_scm_version={{'write_to': 'scmdemo_version.py'}}, setup_requires=['setuptools_scm'], py_modules=['scmdemo'])\n"
        ),
    )
    .write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=45\", \"setuptools_scm\", \"wheel\"]\nbuild-backend = \"setuptools.build_meta\"\n",
    )
    .write(
        "scmdemo.py",
        "from scmdemo_version import version\n\ndef one():\n    return 1\n",
    );
    let commit = repo.commit("a project versioned by git");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_scm.py"),
    )
    .with_file(
        "test_scm.py",
        "from scmdemo import one\n\ndef test_one():\n    assert one() == 1\n",
    );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.not_prepared.is_empty(),
        "the project itself is installed: {:?}",
        deps.not_prepared
    );
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("wrote scmdemo_version.py into the tree")),
        "{:?}",
        deps.notes
    );
}

/// A project whose setup.py builds one C extension `name` from `name.c` (`extension`: the
/// `Extension(...)` arguments after its sources), run with `test` beside it: the run, which
/// passed, and its record.
async fn extension_project(name: &str, extension: &str, c: &str, test: &str) -> RunRecord {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nfrom setuptools import Extension, setup\n\
             setup(name='{name}', version='1.0', ext_modules=[Extension('{name}', ['{name}.c']{extension})])\n"
        ),
    )
    .write(format!("{name}.c"), c);
    let commit = repo.commit("a project with a C extension");
    let request = RunRequest::new(repo.path(), &commit, Language::Python, pytest("test_c.py"))
        .with_file("test_c.py", test);
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(
        run.outcome,
        Outcome::Passed,
        "{}\n{:#?}",
        support::output(&run),
        run.dependencies
    );
    run
}

/// Runs `request`, which passes, and whose preparation left a note `note` accepts.
async fn passes_with_a_note(
    sandbox: &proven_sandbox::Sandbox,
    request: &RunRequest,
    note: impl Fn(&str) -> bool,
) -> RunRecord {
    let run = sandbox.run(request).await.expect("run");
    assert_eq!(
        run.outcome,
        Outcome::Passed,
        "{}\n{:#?}",
        support::output(&run),
        run.dependencies
    );
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(deps.notes.iter().any(|n| note(n)), "{:?}", deps.notes);
    run
}

/// The C source of an extension module `name` whose one function `f(self, args)` has
/// `body` (called with `flags`), after `includes`; `init` runs at import.
fn c_module(name: &str, includes: &str, body: &str, flags: &str, init: &str) -> String {
    format!(
        "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n{includes}\n\
         static PyObject *f(PyObject *self, PyObject *args) {{\n{body}\n}}\n\
         static PyMethodDef methods[] = {{{{\"f\", f, {flags}, \"\"}}, {{NULL, NULL, 0, NULL}}}};\n\
         static struct PyModuleDef module = {{PyModuleDef_HEAD_INIT, \"{name}\", NULL, -1, methods}};\n\
         PyMODINIT_FUNC PyInit_{name}(void) {{ {init} return PyModule_Create(&module); }}\n"
    )
}

/// A project with C code (an sdist that compiles an extension, as old psutil, lxml or
/// Twisted do): the image carries a C compiler and CPython's headers, so the preparation
/// builds the extension and the project's test imports it. Without them every such project
/// failed at import on both sides and proved nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_a_c_extension_is_built_and_its_tests_run() {
    let c = c_module(
        "cdemo",
        "#include <string.h>",
        "long n; if (!PyArg_ParseTuple(args, \"l\", &n)) return NULL;\nreturn PyLong_FromLong(2 * n);",
        "METH_VARARGS",
        "",
    );
    let test = "import cdemo\n\ndef test_twice():\n    assert cdemo.f(21) == 42\n";
    let run = extension_project("cdemo", "", &c, test).await;
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.not_prepared.is_empty(),
        "the project and its extension are built: {:?}",
        deps.not_prepared
    );
}

/// Extensions are compiled at -O1 without debug information (pandas' Cython modules at
/// Python's own -O3 -g outlasted three preparations; a sixth of the time at -O1 -g0), with
/// the rest of Python's own flags kept: still optimised, `NDEBUG` still defined (the
/// asserts left out as on the project's CI), and the record says how it was built.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_are_compiled_quickly_with_pythons_own_flags_but_its_optimisation() {
    let c = c_module(
        "cflags",
        "",
        "int optimised = 0, ndebug = 0;\n#ifdef __OPTIMIZE__\noptimised = 1;\n#endif\n\
         #ifdef NDEBUG\nndebug = 1;\n#endif\nreturn Py_BuildValue(\"(ii)\", optimised, ndebug);",
        "METH_NOARGS",
        "",
    );
    let test = "import cflags\n\n\
                def test_built_optimised_without_asserts():\n    assert cflags.f() == (1, 1)\n\n\
                def test_built_without_debug_information():\n    \
                with open(cflags.__file__, 'rb') as f:\n        \
                assert b'.debug_info' not in f.read()\n";
    let run = extension_project("cflags", "", &c, test).await;
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("CFLAGS and CXXFLAGS -O1 -g0")),
        "{:?}",
        deps.notes
    );
}

/// An sdist's C extension against a system library (PyYAML's libyaml binding, lxml's
/// libxml2, psycopg2's libpq, cffi's libffi): the image carries their headers, as the
/// project's CI installs them with apt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_against_a_system_library_is_built_and_its_tests_run() {
    let c = c_module(
        "syslibs",
        "#include <yaml.h>\n#include <libxml/xmlversion.h>\n#include <libpq-fe.h>\n#include <ffi.h>",
        "return Py_BuildValue(\"(sii)\", yaml_get_version_string(), PQlibVersion(), (int) sizeof(ffi_cif));",
        "METH_NOARGS",
        "xmlCheckVersion(LIBXML_VERSION);",
    );
    let test = "import syslibs\n\ndef test_versions():\n    yaml, pq, cif = syslibs.f()\n    assert yaml.startswith('0.') and pq > 0 and cif > 0\n";
    extension_project(
        "syslibs",
        ", libraries=['yaml', 'xml2', 'pq', 'ffi'], include_dirs=['/usr/include/libxml2', '/usr/include/postgresql']",
        &c,
        test,
    )
    .await;
}

/// A manylinux wheel carries every library it links but those its policy lets it assume
/// (PEP 599: glib's gobject and gthread, X11's client libraries, libGL, libcrypt), as a CI
/// runner has them: networkx's suite stopped at pygraphviz's "libgobject-2.0.so.0: cannot
/// open shared object file". Each loads in the Python image.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_libraries_a_manylinux_wheel_may_assume_are_there() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("README", format!("{}\n", support::unique()));
    let commit = repo.commit("a tree");
    let load = "import ctypes\nfor name in ['libglib-2.0.so.0', 'libgobject-2.0.so.0', 'libgthread-2.0.so.0', 'libX11.so.6', 'libXext.so.6', 'libXrender.so.1', 'libICE.so.6', 'libSM.so.6', 'libGL.so.1', 'libcrypt.so.1']:\n    ctypes.CDLL(name)\n    print('loaded', name)\n";
    let run = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                &commit,
                Language::Python,
                ["python3", "-c", load],
            )
            .as_command(),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    assert_eq!(run.outcome, Outcome::Passed, "{out}");
    assert!(out.contains("loaded libcrypt.so.1"), "{out}");
}

/// An sdist of Pillow's kind: its C code against the image libraries (libjpeg, required
/// to build Pillow from source, and libpng, libtiff, libwebp, lcms2, OpenJPEG), as a CI
/// runner carries them; and `protoc`, which build steps generating code from `.proto` files
/// run (prost-build's, grpc's). Without them Pillow's own tree stopped at its build and
/// every test at `cannot import name '_imaging'`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_against_the_image_libraries_is_built_and_protoc_runs() {
    let c = c_module(
        "imglibs",
        "#include <stdio.h>\n#include <jpeglib.h>\n#include <png.h>\n#include <tiffio.h>\n#include <webp/encode.h>\n#include <lcms2.h>\n#include <openjpeg.h>",
        "return Py_BuildValue(\"(iisiis)\", JPEG_LIB_VERSION, (int) png_access_version_number(), TIFFGetVersion(), WebPGetEncoderVersion(), cmsGetEncodedCMMversion(), opj_version());",
        "METH_NOARGS",
        "",
    );
    let test = "import subprocess\nimport imglibs\n\n\
                def test_versions():\n    jpeg, png, tiff, webp, lcms, opj = imglibs.f()\n    \
                assert jpeg > 0 and png > 0 and 'LIBTIFF' in tiff and webp > 0 and lcms > 0 and opj\n\n\
                def test_protoc():\n    out = subprocess.run(['protoc', '--version'], capture_output=True, text=True, check=True)\n    \
                assert out.stdout.startswith('libprotoc ')\n";
    extension_project(
        "imglibs",
        ", libraries=['jpeg', 'png', 'tiff', 'webp', 'lcms2', 'openjp2'], include_dirs=['/usr/include/openjpeg-2.5']",
        &c,
        test,
    )
    .await;
}

/// A project whose packages live in a folder of their own (`package_dir={'': 'lib'}`, as
/// ansible's) and whose build backend is its date's setuptools (46, no PEP 660 hook): pip
/// falls back to a legacy `develop` into the layer's prefix, which leaves an egg-link and no
/// easy-install.pth, so nothing put `lib/` on the path and every test failed at import
/// (`No module named 'ansible'`). The egg-link's folder is put on the path, as
/// easy-install.pth would have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_installed_by_a_legacy_develop_into_a_folder_of_its_own_is_importable() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools==46.1.3\", \"wheel\"]\nbuild-backend = \"setuptools.build_meta\"\n",
    )
    .write(
        "setup.py",
        format!(
            "# {marker}\nfrom setuptools import setup\n\
             setup(name='liblayout', version='1.0', package_dir={{'': 'lib'}}, packages=['liblayout'])\n"
        ),
    )
    .write("lib/liblayout/__init__.py", "ANSWER = 42\n");
    let commit = repo.commit("a project whose packages live in lib/");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_lib.py"),
    )
    .with_file(
        "test_lib.py",
        "import liblayout\n\ndef test_answer():\n    assert liblayout.ANSWER == 42\n",
    );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(
        run.outcome,
        Outcome::Passed,
        "{}\n{:#?}",
        support::output(&run),
        run.dependencies
    );
    let deps = run.dependencies.as_ref().expect("prepared");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("/work/lib") && n.contains("egg-link")),
        "{:?}",
        deps.notes
    );
}

/// A project whose extension lives inside its package (pandas' `pandas/_libs`, spaCy's and
/// matplotlib's modules): the editable install compiles it in place, inside the package of
/// the preparation's copy of the tree; each run's own tree gets it at that place, where the
/// package is imported from. Without it, every test failed at import (`No module named
/// 'cpkg._speed'`) on both sides, and such a project proved nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_an_extension_inside_its_package_is_built_and_its_tests_run() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nfrom setuptools import Extension, setup\n\
             setup(name='cpkg', version='1.0', packages=['cpkg'],\n\
             ext_modules=[Extension('cpkg._speed', ['cpkg/_speed.c'])])\n"
        ),
    )
    .write("cpkg/__init__.py", "from cpkg._speed import twice\n")
    .write(
        "cpkg/_speed.c",
        "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n\
         static PyObject *twice(PyObject *self, PyObject *args) {\n\
             long n; if (!PyArg_ParseTuple(args, \"l\", &n)) return NULL;\n\
             return PyLong_FromLong(2 * n);\n}\n\
         static PyMethodDef methods[] = {{\"twice\", twice, METH_VARARGS, \"2n\"}, {NULL, NULL, 0, NULL}};\n\
         static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, \"_speed\", NULL, -1, methods};\n\
         PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }\n",
    );
    let commit = repo.commit("a package with a C extension inside it");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_pkg.py"),
    )
    .with_file(
        "test_pkg.py",
        "import cpkg\n\ndef test_twice():\n    assert cpkg.twice(21) == 42\n",
    );
    passes_with_a_note(&sandbox, &request, |n| {
        n.contains("cpkg/_speed.") && n.contains("put in each run's tree")
    })
    .await;
}

/// A project of before setuptools 64 with several compiled extensions (pandas' and spaCy's
/// dozens of Cython modules): its CI builds them with `setup.py build_ext --inplace -j N`,
/// while pip's `setup.py develop` compiles them one at a time, which alone outlasted the
/// preparation (spaCy's cases). They are built in place with the preparation's CPUs first,
/// and the develop install finds them up to date. The project's own build command records
/// the jobs it was given, in a module the test reads. That build runs the setup.py as pip
/// runs one, setuptools imported first (spaCy's reads `distutils.util`, which only
/// setuptools' import loads): this one checks it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_of_a_setup_py_develop_are_built_with_the_preparations_cpus() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    let module = |name: &str| {
        format!(
            "#include <Python.h>\n\
             static struct PyModuleDef m = {{PyModuleDef_HEAD_INIT, \"{name}\", NULL, -1, NULL}};\n\
             PyMODINIT_FUNC PyInit_{name}(void) {{ return PyModule_Create(&m); }}\n"
        )
    };
    repo.write("requirements.txt", "setuptools==59.6.0\n")
        .write(
            "setup.py",
            format!(
                "# {marker}\nimport sys\nassert 'setuptools' in sys.modules, 'not run as pip runs a setup.py'\n\
                 from setuptools import Extension, setup\n\
                 from setuptools.command.build_ext import build_ext\n\
                 class recording(build_ext):\n\
                 \x20   def run(self):\n\
                 \x20       if self.parallel:\n\
                 \x20           with open('ppkg/_jobs.py', 'w') as f:\n\
                 \x20               f.write('JOBS = %r\\n' % (self.parallel,))\n\
                 \x20       build_ext.run(self)\n\
                 setup(name='ppkg', version='1.0', packages=['ppkg'], cmdclass={{'build_ext': recording}},\n\
                 \x20     ext_modules=[Extension('ppkg._a', ['ppkg/_a.c']), Extension('ppkg._b', ['ppkg/_b.c'])])\n"
            ),
        )
        .write("ppkg/__init__.py", "from ppkg import _a, _b\n")
        .write("ppkg/_a.c", module("_a"))
        .write("ppkg/_b.c", module("_b"));
    let commit = repo.commit("a package with two C extensions, of setuptools 59");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_jobs.py"),
    )
    .with_file(
        "test_jobs.py",
        "import ppkg\nfrom ppkg._jobs import JOBS\n\ndef test_built_with_two_jobs():\n    assert JOBS == 2\n",
    );
    passes_with_a_note(&sandbox, &request, |n| {
        n.contains("built in place with 2 jobs")
    })
    .await;
}

/// A project declaring its build system (pandas' pyproject.toml: setuptools, Cython,
/// numpy) whose extensions were built in place with the environment's build requirements:
/// pip's isolated editable build installed those requirements anew, newer than every module
/// built (pandas' extensions depend on Cython's own `.pxd` files), and built every
/// extension again, which outlasted the preparation (pandas of 2020: 396 s of it, cut
/// short). Here the extension depends on setuptools' own `__init__.py`, and the build
/// appends a line naming each extension it compiles to a module the test reads: each name
/// once. (A counter module first written by truncating, then appended to, raced between the
/// two jobs of the in-place build, and under load a build was lost from the count.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_built_in_place_are_not_built_again_by_an_isolated_editable_build() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    let module = |name: &str| {
        format!(
            "#include <Python.h>\n\
             static struct PyModuleDef m = {{PyModuleDef_HEAD_INIT, \"{name}\", NULL, -1, NULL}};\n\
             PyMODINIT_FUNC PyInit_{name}(void) {{ return PyModule_Create(&m); }}\n"
        )
    };
    repo.write("requirements.txt", "setuptools==59.6.0\nwheel==0.37.1\n")
        .write(
            "pyproject.toml",
            "[build-system]\nrequires = [\"setuptools==59.6.0\", \"wheel==0.37.1\"]\nbuild-backend = \"setuptools.build_meta\"\n",
        )
        .write(
            "setup.py",
            format!(
                "# {marker}\nimport os, setuptools\n\
                 from distutils.dep_util import newer_group\n\
                 from setuptools import Extension, setup\n\
                 from setuptools.command.build_ext import build_ext\n\
                 OWN = os.path.join(os.path.dirname(setuptools.__file__), '__init__.py')\n\
                 class counting(build_ext):\n\
                 \x20   def build_extension(self, ext):\n\
                 \x20       if self.force or newer_group(ext.sources + ext.depends, self.get_ext_fullpath(ext.name), 'newer'):\n\
                 \x20           with open('ppkg/_builds.py', 'a') as f:\n\
                 \x20               f.write('# built ' + ext.name + '\\n')\n\
                 \x20       build_ext.build_extension(self, ext)\n\
                 setup(name='ppkg', version='1.0', packages=['ppkg'], cmdclass={{'build_ext': counting}},\n\
                 \x20     ext_modules=[Extension('ppkg._a', ['ppkg/_a.c'], depends=[OWN]), Extension('ppkg._b', ['ppkg/_b.c'], depends=[OWN])])\n"
            ),
        )
        .write("ppkg/__init__.py", "from ppkg import _a, _b\n")
        .write("ppkg/_a.c", module("_a"))
        .write("ppkg/_b.c", module("_b"));
    let commit =
        repo.commit("a package with two C extensions and a build system, of setuptools 59");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_builds.py"),
    )
    .with_file(
        "test_builds.py",
        "from ppkg import _builds\n\ndef test_each_extension_compiled_once():\n    with open(_builds.__file__) as f:\n        assert sorted(f.read().split('# built ')[1:]) == ['ppkg._a\\n', 'ppkg._b\\n']\n",
    );
    passes_with_a_note(&sandbox, &request, |n| {
        n.contains("without build isolation") && n.contains("builds every extension again")
    })
    .await;
}

/// Two extensions that compile one shared source with different macros (matplotlib's
/// `src/py_converters.cpp`, with each module's own `PY_ARRAY_UNIQUE_SYMBOL`): setuptools'
/// parallel build_ext writes both objects to one path in its temporary directory, and one
/// module links the other's object. Here `_a` compiles the shared source first and then a
/// long source of its own, while `_b` compiles a shorter one first and the shared source
/// after it (setuptools compiles an extension's sources in the order of their names), so
/// `_a` always links `_b`'s object and lacks its own symbol. The build said
/// nothing and every import failed ("undefined symbol: MPL_matplotlib__image_ARRAY_API");
/// now such a build is found, removed, and the editable install builds one at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_that_share_a_source_are_built_one_at_a_time_when_in_parallel_they_do_not_load()
{
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    // `count` functions the compiler optimises one by one: a source that takes its time.
    let long = |name: &str, count: usize| {
        let mut c = format!("#include <Python.h>\nextern int ppkg_{name}_own;\n");
        for i in 0..count {
            c.push_str(&format!(
                "static long f{i}(long x) {{ long s = 0; for (long j = 0; j < x; j++) s += (j * {i}) % 7 + (s >> 3); return s; }}\n"
            ));
        }
        c.push_str("static long (*all[])(long) = {");
        for i in 0..count {
            c.push_str(&format!("f{i},"));
        }
        c.push_str(&format!(
            "}};\nstatic struct PyModuleDef m = {{PyModuleDef_HEAD_INIT, \"_{name}\", NULL, -1, NULL}};\n\
             PyMODINIT_FUNC PyInit__{name}(void) {{ PyObject *mod = PyModule_Create(&m);\n\
             if (mod) PyModule_AddIntConstant(mod, \"OWN\", ppkg_{name}_own + (long)(all[0] == NULL));\n\
             return mod; }}\n"
        ));
        c
    };
    repo.write("requirements.txt", "setuptools==59.6.0\n")
        .write(
            "setup.py",
            format!(
                "# {marker}\nfrom setuptools import Extension, setup\n\
                 setup(name='ppkg', version='1.0', packages=['ppkg'], ext_modules=[\n\
                 \x20   Extension('ppkg._a', ['ppkg/shared.c', 'ppkg/the_a.c'], define_macros=[('OWN', 'ppkg_a_own')]),\n\
                 \x20   Extension('ppkg._b', ['ppkg/_b.c', 'ppkg/shared.c'], define_macros=[('OWN', 'ppkg_b_own')]),\n\
                 ])\n"
            ),
        )
        .write("ppkg/__init__.py", "")
        .write("ppkg/shared.c", "int OWN = 1;\n")
        .write("ppkg/the_a.c", long("a", 3000))
        .write("ppkg/_b.c", long("b", 300));
    let commit = repo.commit("two extensions that share a source, of setuptools 59");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_own.py"),
    )
    .with_file(
        "test_own.py",
        "from ppkg import _a, _b\n\ndef test_each_module_has_its_own_symbol():\n    assert (_a.OWN, _b.OWN) == (1, 1)\n",
    );
    passes_with_a_note(&sandbox, &request, |n| {
        n.contains("did not load") && n.contains("undefined symbol: ppkg_a_own")
    })
    .await;
}

/// A project with a C++ extension (spaCy's and thinc's Cython modules compile as C++):
/// the images carry g++ and libstdc++'s headers beside gcc, so it builds as the C one does.
/// Without them gcc stopped at `cannot execute 'cc1plus'` and every test failed at import.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_a_cpp_extension_is_built_and_its_tests_run() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nfrom setuptools import Extension, setup\n\
             setup(name='cppdemo', version='1.0', ext_modules=[Extension('cppdemo', ['cppdemo.cpp'], language='c++')])\n"
        ),
    )
    .write(
        "cppdemo.cpp",
        "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n#include <numeric>\n#include <vector>\n\
         static PyObject *twice(PyObject *self, PyObject *args) {\n\
             long n; if (!PyArg_ParseTuple(args, \"l\", &n)) return NULL;\n\
             std::vector<long> v{n, n};\n\
             return PyLong_FromLong(std::accumulate(v.begin(), v.end(), 0L));\n}\n\
         static PyMethodDef methods[] = {{\"twice\", twice, METH_VARARGS, \"2n\"}, {NULL, NULL, 0, NULL}};\n\
         static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, \"cppdemo\", NULL, -1, methods};\n\
         PyMODINIT_FUNC PyInit_cppdemo(void) { return PyModule_Create(&module); }\n",
    );
    let commit = repo.commit("a project with a C++ extension");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_cpp.py"),
    )
    .with_file(
        "test_cpp.py",
        "import cppdemo\n\ndef test_twice():\n    assert cppdemo.twice(21) == 42\n",
    );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(
        run.outcome,
        Outcome::Passed,
        "{}\n{:#?}",
        support::output(&run),
        run.dependencies
    );
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.not_prepared.is_empty(),
        "the project and its extension are built: {:?}",
        deps.not_prepared
    );
}

/// Suites run a pager (pallets/click's `echo_via_pager` tests run `less` with its output
/// sent to a file): the images carry `less`, so such a test runs as the project expects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_runs_the_pager_less_finds_it() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    let pager = "import subprocess\n\ndef test_less_pages_to_a_file(tmp_path):\n    out = tmp_path / 'out'\n    with open(out, 'w') as f:\n        subprocess.run(['less'], input=b'paged\\n', stdout=f, check=True)\n    assert out.read_text() == 'paged\\n'\n";
    let request = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_pager.py"),
    )
    .with_file("tests/test_pager.py", pager);
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
}

/// P5 of docs/suites-at-head.md: suites run `git` (fastapi's translation test runs `git
/// init` in a temporary directory, bat's diff tests `git diff`): the images carry it, so
/// such a test runs as on a developer's machine instead of failing on a missing command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_runs_git_in_a_temporary_directory_finds_it() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    let test = "import subprocess\n\ndef test_a_repository_in_a_temporary_directory(tmp_path):\n    git = lambda *a: subprocess.run(['git', '-c', 'user.name=t', '-c', 'user.email=t@example.com', *a], cwd=tmp_path, check=True, capture_output=True, text=True).stdout\n    git('init')\n    (tmp_path / 'f.txt').write_text('one\\n')\n    git('add', 'f.txt')\n    git('commit', '-m', 'first')\n    (tmp_path / 'f.txt').write_text('two\\n')\n    assert '+two' in git('diff')\n    assert 'first' in git('log', '--oneline')\n";
    let request = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_git.py"),
    )
    .with_file("tests/test_git.py", test);
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
}

/// Suites run the commands of a developer's machine in subprocesses (rich's `which python`
/// and `head`, a server's test reading `ps`, a recipe run with `make`, `awk` in a helper
/// script, got's `pem` making a certificate with `openssl`): every image carries them, so
/// such a test does not fail on a missing command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_runs_the_usual_shell_commands_finds_them() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    let test = "import subprocess\n\ndef run(*a, **k):\n    return subprocess.run(list(a), check=True, capture_output=True, text=True, **k).stdout\n\ndef test_the_usual_commands(tmp_path):\n    assert run('which', 'python3').strip().endswith('python3')\n    assert run('awk', '{print $2}', input='a b\\n') == 'b\\n'\n    assert 'PID' in run('ps')\n    (tmp_path / 'Makefile').write_text('all:\\n\\t@echo made\\n')\n    assert run('make', cwd=tmp_path) == 'made\\n'\n    (tmp_path / 'a.txt').write_text('one\\n')\n    (tmp_path / 'p.diff').write_text('--- a.txt\\n+++ a.txt\\n@@ -1 +1 @@\\n-one\\n+two\\n')\n    run('patch', '-i', 'p.diff', 'a.txt', cwd=tmp_path)\n    assert (tmp_path / 'a.txt').read_text() == 'two\\n'\n    assert run('hostname')\n    assert 'text' in run('file', str(tmp_path / 'a.txt'))\n    run('openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', 'key.pem', '-out', 'cert.pem', cwd=tmp_path)\n    assert 'CN = localhost' in run('openssl', 'x509', '-in', 'cert.pem', '-noout', '-subject', cwd=tmp_path)\n";
    let request = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_commands.py"),
    )
    .with_file("tests/test_commands.py", test);
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
}

/// The images' LANG names C.UTF-8, and the locale is there: `setlocale` succeeds, so an old
/// Python (3.6 has no UTF-8 mode) reads a project's files as UTF-8, as on a developer's
/// machine, not as ASCII.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_locale_the_images_name_exists() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    let record = sandbox
        .run(
            &RunRequest::new(
                project.repo.path(),
                &project.base,
                Language::Python,
                [
                    "python3",
                    "-c",
                    "import locale; locale.setlocale(locale.LC_ALL, ''); print(locale.nl_langinfo(locale.CODESET))",
                ],
            )
            .as_command(),
        )
        .await
        .expect("run");
    let out = support::output(&record);
    assert_eq!(record.outcome, Outcome::Passed, "{out}");
    assert!(out.contains("UTF-8"), "{out}");
}

/// A CI runner's Python has tkinter (benjaminp/six's `test_move_items[tkinter…]` import
/// `tkinter`, `tkinter.ttk` and `tkinter.filedialog`, and 14 failed where the images left
/// it out): the images carry it and the Tcl/Tk libraries its `_tkinter` loads, so such a
/// test imports it, as there, with no display to open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_imports_tkinter_finds_it() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    let test = "import importlib\n\nimport pytest\n\n@pytest.mark.parametrize('name', ['tkinter', 'tkinter.ttk', 'tkinter.filedialog', '_tkinter'])\ndef test_imports(name):\n    importlib.import_module(name)\n\ndef test_tcl_runs():\n    import tkinter\n    assert tkinter.Tcl().eval('expr {6 * 7}') == '42'\n";
    let request = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_tk.py"),
    )
    .with_file("tests/test_tk.py", test);
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
}

/// A project that pins nothing, run as of a date (a review of an old revision): its
/// requirements resolve to the releases that existed then, not today's, and the record
/// says so. Without the date, today's release is installed. (The date is after the image's
/// Python came out, 3.11 on 2022-10-24: an older one resolves as of that release, see
/// tests/e2e/projects.rs.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unpinned_requirements_resolve_as_of_the_date_asked() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", "six\n");
    let commit = repo.commit("unpinned six");
    let version = ["python3", "-c", "import six; print('six', six.__version__)"];
    // six 1.16.0 was uploaded on 2021-05-05, 1.17.0 on 2024-12-04.
    let at = time::macros::datetime!(2023-06-01 00:00 UTC);
    let dated = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, version)
                .as_command()
                .resolved_as_of(at),
        )
        .await
        .expect("run");
    let out = support::output(&dated);
    assert_eq!(dated.outcome, Outcome::Passed, "{out}");
    assert!(out.contains("six 1.16.0"), "{out}");
    let deps = dated.dependencies.as_ref().expect("prepared");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("versions resolved as of 2023-06-01T00:00:00Z")),
        "{:?}",
        deps.notes
    );
    let now = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, version).as_command())
        .await
        .expect("run");
    let out_now = support::output(&now);
    assert!(!out_now.contains("six 1.16.0"), "{out_now}");
    assert_ne!(
        now.dependencies.as_ref().expect("prepared").key,
        deps.key,
        "the date is part of the cache key"
    );
}

/// A wheel holding one module, `name`, whose `VERSION` is `version`.
fn wheel(path: &std::path::Path, name: &str, version: &str) {
    wheel_requiring(path, name, version, &[]);
}

/// A wheel holding one module, `name`, whose `VERSION` is `version`, requiring `requires`.
fn wheel_requiring(path: &std::path::Path, name: &str, version: &str, requires: &[&str]) {
    wheel_of(path, name, version, requires, "");
}

/// A wheel holding one module, `name`, whose `VERSION` is `version`, then `body`, requiring
/// `requires`.
fn wheel_of(path: &std::path::Path, name: &str, version: &str, requires: &[&str], body: &str) {
    use std::io::Write;
    let requires: String = requires
        .iter()
        .map(|r| format!("Requires-Dist: {r}\n"))
        .collect();
    let file = std::fs::File::create(path).expect("wheel");
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default();
    let info = format!("{name}-{version}.dist-info");
    for (entry, body) in [
        (format!("{name}.py"), format!("VERSION = '{version}'\n{body}")),
        (
            format!("{info}/METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requires}"),
        ),
        (
            format!("{info}/WHEEL"),
            "Wheel-Version: 1.0\nGenerator: proven-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
                .to_string(),
        ),
        (format!("{info}/RECORD"), String::new()),
    ] {
        zip.start_file(entry, options).expect("entry");
        zip.write_all(body.as_bytes()).expect("write");
    }
    zip.finish().expect("zip");
}

#[tokio::test]
async fn a_project_uploaded_again_after_the_date_is_not_held_to_it() {
    // PyPI's atomicwrites: every file was uploaded in July 2022 (the project was deleted
    // and uploaded again), though 1.0 came out in 2016. As of 2019 its dated page was
    // empty, and pytest of 2019, which requires it, could not install at all. Here a local
    // index (PEP 691 pages, served through the egress proxy like PyPI) holds `reuploaded`,
    // all of whose files came after the date, and `dated`, one release before it and one
    // after.
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let page = |name: &str, releases: &[(&str, &str)]| {
        let dir = index.path().join("simple").join(name);
        std::fs::create_dir_all(&dir).expect("page");
        let entries: Vec<serde_json::Value> = releases
            .iter()
            .map(|(version, uploaded)| {
                let filename = format!("{name}-{version}-py3-none-any.whl");
                wheel(&files.join(&filename), name, version);
                serde_json::json!({
                    "filename": filename,
                    "url": format!("http://pypi.test/files/{filename}"),
                    "hashes": {},
                    "upload-time": uploaded,
                })
            })
            .collect();
        let body =
            serde_json::json!({"meta": {"api-version": "1.1"}, "name": name, "files": entries});
        std::fs::write(dir.join("index.html"), body.to_string()).expect("write");
    };
    // Dates after the default image's Python came out: an older date is read as its release.
    page(
        "reuploaded",
        &[
            ("1.0", "2025-03-01T00:00:00Z"),
            ("1.1", "2025-03-01T00:01:00Z"),
        ],
    );
    page(
        "dated",
        &[
            ("1.0", "2025-01-01T00:00:00Z"),
            ("2.0", "2025-06-01T00:00:00Z"),
        ],
    );
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", "reuploaded\ndated\n");
    let commit = repo.commit("two requirements");
    let show = [
        "python3",
        "-c",
        "import reuploaded, dated; print('reuploaded', reuploaded.VERSION, 'dated', dated.VERSION)",
    ];
    let at = time::macros::datetime!(2025-02-01 00:00 UTC);
    let run = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, show)
                .as_command()
                .resolved_as_of(at),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    assert_eq!(run.outcome, Outcome::Passed, "{out}");
    assert!(out.contains("reuploaded 1.1 dated 1.0"), "{out}");
    let deps = run.dependencies.as_ref().expect("prepared");
    assert!(
        deps.notes.iter().any(
            |n| n.contains("reuploaded: every file on the index was uploaded after 2025-02-01")
        ),
        "{:?}",
        deps.notes
    );
    assert!(
        !deps
            .notes
            .iter()
            .any(|n| n.contains("resolved now instead")),
        "{:?}",
        deps.notes
    );
}

/// A project older than the image's Python resolves as of that Python's release; a
/// dependency may have dropped, between the project's date and then, a name the project
/// imports (httpie of 2014: `from requests.compat import is_windows`, gone from the
/// requests of 2016), and every module of it fails at import. That dependency alone is
/// installed as of the date asked, before the environment's, and the record says so. Here
/// a local index holds `dropper` 1.0 (2020, with `NAME`) and 2.0 (2022-06, without it); the
/// project of 2021 imports `NAME` (and its test file a name `tester` dropped alike), and the
/// image's Python 3.11 came out on 2022-10-24.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_a_dependency_dropped_after_the_projects_date_is_had_from_its_release_of_then() {
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    // `dropper` loses NAME, which the project's code imports; `tester` loses HELPER, which
    // only its test file imports.
    for (project, name) in [("dropper", "NAME"), ("tester", "HELPER")] {
        let dir = index.path().join("simple").join(project);
        std::fs::create_dir_all(&dir).expect("page");
        let entries: Vec<serde_json::Value> = [
            ("1.0", "2020-01-01T00:00:00Z", format!("{name} = 'had'\n")),
            ("2.0", "2022-06-01T00:00:00Z", String::new()),
        ]
        .iter()
        .map(|(version, uploaded, body)| {
            let filename = format!("{project}-{version}-py3-none-any.whl");
            wheel_of(&files.join(&filename), project, version, &[], body);
            serde_json::json!({"filename": filename, "hashes": {}, "upload-time": uploaded,
                               "url": format!("http://pypi.test/files/{filename}")})
        })
        .collect();
        let body =
            serde_json::json!({"meta": {"api-version": "1.1"}, "name": project, "files": entries});
        std::fs::write(dir.join("index.html"), body.to_string()).expect("write");
    }
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "setup.py",
        format!(
            "# {}\nfrom setuptools import setup\nsetup(name='oldproj', version='0.1', packages=['oldproj'], install_requires=['dropper', 'tester'])\n",
            support::unique()
        ),
    )
    .write("oldproj/__init__.py", "")
    .write("oldproj/core.py", "from dropper import NAME\n")
    .write("tests/test_old.py", "from tester import HELPER\n");
    let commit = repo.commit("a project of 2021");
    let show = [
        "python3",
        "-c",
        "import dropper, tester, oldproj.core; print('dropper', dropper.VERSION, oldproj.core.NAME, 'tester', tester.HELPER)",
    ];
    let at = time::macros::datetime!(2021-01-01 00:00 UTC);
    let run = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, show)
                .as_command()
                .resolved_as_of(at),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    assert_eq!(run.outcome, Outcome::Passed, "{out}");
    assert!(out.contains("dropper 1.0 had tester had"), "{out}");
    let deps = run.dependencies.as_ref().expect("prepared");
    assert!(
        deps.notes.iter().any(|n| n.contains(
            "oldproj.core imports NAME from dropper, which dropper as of 2022-10-24T00:00:00Z (this Python's release) no longer has: dropper 1.0, as of the date asked (2021-01-01T00:00:00Z), is put before the environment's for this tree"
        )),
        "{:?}",
        deps.notes
    );
    assert!(
        deps.notes.iter().any(|n| n.contains(
            "tests/test_old.py imports HELPER from tester, which tester as of 2022-10-24T00:00:00Z (this Python's release) no longer has: tester 1.0"
        )),
        "{:?}",
        deps.notes
    );
}

/// A flit project of 2019 declares its dependencies in flit's own metadata
/// (`[tool.flit.metadata]`: `requires`, `requires-extra.test`), not in PEP 621's
/// `[project]`: they are prepared, and its test importing one of each passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flit_project_of_the_legacy_metadata_gets_its_dependencies() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "pyproject.toml",
        format!(
            "# {marker}\n[build-system]\nrequires = [\"flit_core >=2,<4\"]\nbuild-backend = \"flit_core.buildapi\"\n\n[tool.flit.metadata]\nmodule = \"flitdemo\"\nauthor = \"Demo\"\nrequires = [\"toolz\"]\n\n[tool.flit.metadata.requires-extra]\ntest = [\"six\"]\n"
        ),
    )
    .write(
        "flitdemo.py",
        "\"\"\"A flit project's module.\"\"\"\n__version__ = '0.1'\nimport toolz\n\ndef name():\n    return toolz.__name__\n",
    );
    let commit = repo.commit("a flit project");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_flitdemo.py"),
    )
    .with_file(
        "test_flitdemo.py",
        "import six\nfrom flitdemo import name\n\ndef test_name():\n    assert name() == 'toolz'\n    assert six.PY3\n",
    );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.not_prepared.is_empty(),
        "the dependencies and the project itself are installed: {:?}",
        deps.not_prepared
    );
}

/// pytest-mock's family: a project that is a pytest plugin (a `pytest11` entry point),
/// installed editable, listed none of its modules in its RECORD, so pytest did not rewrite
/// the asserts of its plugin module, and its tests of the plugin's assertion messages failed
/// where its CI (tox, the package installed) passes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pytest_plugin_projects_own_asserts_are_rewritten() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    pytest_plugin_project(&sandbox, "").await;
}

/// The same on Python 3.13 (the image built where it is missing), whose importlib.metadata
/// leaves out the listed files that are not there (pytest-mock's own run).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pytest_plugin_projects_own_asserts_are_rewritten_on_python_3_13() {
    let image = "proven-sandbox-python3.13:local";
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.python_images = vec![("3.13".into(), image.into())];
    })
    .await;
    if sandbox.docker().inspect_image(image).await.is_err() {
        proven_sandbox::images::build_local_named(&["python3.13"])
            .await
            .expect("the Python 3.13 image builds");
    }
    let run = pytest_plugin_project(&sandbox, "requires-python = \">=3.13\"\n").await;
    assert_eq!(run.image, image, "{:?}", run.interpreter);
}

/// A project that is a pytest plugin whose fixture asserts, and a test of the message of
/// that assert (pytest's rewriting of the plugin's module): it passes, and the record says
/// the plugin's modules were listed.
async fn pytest_plugin_project(sandbox: &proven_sandbox::Sandbox, project: &str) -> RunRecord {
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "pyproject.toml",
        format!(
            "# {marker}\n[build-system]\nrequires = [\"setuptools>=64\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"checkplug\"\nversion = \"0.1\"\n{project}\n[project.entry-points.pytest11]\ncheckplug = \"checkplug.plugin\"\n\n[tool.setuptools]\npackages = [\"checkplug\"]\n"
        ),
    )
    .write("checkplug/__init__.py", "")
    .write(
        "checkplug/plugin.py",
        "import pytest\n\n\ndef _same(a, b):\n    assert a == b\n\n\n@pytest.fixture\ndef same():\n    return _same\n",
    );
    let commit = repo.commit("a pytest plugin");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("tests/test_plugin.py"),
    )
    .with_file(
        "tests/test_plugin.py",
        "import pytest\n\n\ndef test_the_plugins_assert_is_rewritten(same):\n    with pytest.raises(AssertionError) as e:\n        same([1, 2], [1, 3])\n    assert 'At index 1 diff' in str(e.value)\n",
    );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("is a pytest plugin (checkplug)")),
        "{:?}",
        deps.notes
    );
    run
}

/// A project whose own build fails is still tested from its tree, and the record names
/// the build's reason (what the backend printed last), not pip's `ERROR: Exception:`
/// of the last way tried (no build isolation, where flit_core is not even installed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_whose_build_fails_is_named_with_the_builds_reason() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    // flit builds only a module with a docstring.
    repo.write(
        "pyproject.toml",
        format!(
            "# {marker}\n[build-system]\nrequires = [\"flit_core >=2,<4\"]\nbuild-backend = \"flit_core.buildapi\"\n\n[tool.flit.metadata]\nmodule = \"nodoc\"\nauthor = \"Demo\"\nrequires = [\"iniconfig\"]\n"
        ),
    )
    .write("nodoc.py", "__version__ = '0.1'\n\ndef one():\n    return 1\n");
    let commit = repo.commit("a flit module without a docstring");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_nodoc.py"),
    )
    .with_file(
        "test_nodoc.py",
        "from nodoc import one\n\ndef test_one():\n    assert one() == 1\n",
    );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    let project = deps
        .not_prepared
        .iter()
        .find(|n| n.what.contains("the project itself"))
        .unwrap_or_else(|| panic!("the failed build is named: {:?}", deps.not_prepared));
    assert!(
        project.reason.to_lowercase().contains("docstring"),
        "{}",
        project.reason
    );
    assert!(
        !project.reason.contains("ERROR: Exception"),
        "{}",
        project.reason
    );
}

/// With images of several Pythons, a 2019-style project (an open `python_requires`, the
/// classifiers naming up to 3.11 here) runs on the newest Python it names, not the newest
/// image its `>=3.5` allows (3.12, an image that is not even there), and the record names
/// the interpreter and the declaration that chose it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_record_names_the_python_the_projects_own_declarations_chose() {
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.python_images = vec![
            ("3.12".into(), "proven-sandbox-python-absent:none".into()),
            ("3.11".into(), Language::Python.local_image()),
        ];
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "setup.py",
        "from setuptools import setup\nsetup(name='old', version='1.0', py_modules=['old'], python_requires='>=3.5', classifiers=[\n 'Programming Language :: Python :: 3.8',\n 'Programming Language :: Python :: 3.11',\n])\n",
    )
    .write("old.py", "def one():\n    return 1\n");
    let commit = repo.commit("a project naming its Pythons");
    let show = [
        "python3",
        "-c",
        "import sys; print('python %d.%d' % sys.version_info[:2])",
    ];
    let run = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, show).as_command())
        .await
        .expect("run");
    let out = support::output(&run);
    assert_eq!(run.outcome, Outcome::Passed, "{out}");
    assert!(out.contains("python 3.11"), "{out}");
    assert_eq!(run.image, Language::Python.local_image());
    let chosen = run
        .interpreter
        .as_ref()
        .expect("the record names the choice");
    assert_eq!(chosen.version, "3.11");
    assert!(
        chosen.because.contains("setup.py classifiers") && chosen.because.contains(">=3.5"),
        "{}",
        chosen.because
    );
    // And the versions of the test tools the run had: the interpreter the environment was
    // made with, then the runner (here the image's pytest, seen through the environment).
    assert!(
        run.test_tools
            .first()
            .is_some_and(|t| t.starts_with("Python 3.11.")),
        "{:?}",
        run.test_tools
    );
    assert!(
        run.test_tools.iter().any(|t| t.starts_with("pytest ")),
        "{:?}",
        run.test_tools
    );
}

/// `pytest` as the command (as a suite or a `--cmd` names it), for a project that does not
/// declare pytest: it runs the prepared environment's interpreter, so the test importing a
/// requirement installed only there passes (the image's own `pytest` launches the image's
/// interpreter, which does not see the environment).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytest_on_path_runs_in_the_prepared_environment() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write("requirements.txt", format!("# {marker}\nsix\n"))
        .write(
            "app.py",
            "import six\n\ndef name():\n    return six.__name__\n",
        );
    let commit = repo.commit("an app needing six, not declaring pytest");
    let test = "from app import name\n\ndef test_name():\n    assert name() == 'six'\n";
    for runner in ["pytest", "py.test"] {
        let request = RunRequest::new(
            repo.path(),
            &commit,
            Language::Python,
            [runner, "-q", "test_app.py"],
        )
        .with_file("test_app.py", test);
        let run = sandbox.run(&request).await.expect("run");
        assert_eq!(
            run.outcome,
            Outcome::Passed,
            "{runner}: {}",
            support::output(&run)
        );
    }
}

/// A unittest suite in the shape of many held-out projects: the test class derives from
/// the project's own TestCase base in tests/base.py (and is not named `Test…`), and the
/// change makes the code under test raise, which unittest reports as an ERROR. The class
/// is a test the file declares, and the exception is the test failing: the bug is
/// reproduced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unittest_error_in_a_class_derived_from_the_projects_base_reproduces_the_bug() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("app.py", "def parse(text):\n    return int(text)\n")
        .write("tests/__init__.py", "")
        .write(
            "tests/base.py",
            "import unittest\n\n\nclass MyBase(unittest.TestCase):\n    def setUp(self):\n        self.value = '42'\n",
        );
    let base = repo.commit("base");
    repo.write(
        "app.py",
        "def parse(text):\n    return int(text.split(',')[1])\n",
    );
    let change = repo.commit("change: parse reads the second field");
    let test = "from app import parse\nfrom tests.base import MyBase\n\n\nclass ParserChecks(MyBase):\n    def test_parse(self):\n        self.assertEqual(parse(self.value), 42)\n";
    assert!(
        proven_sandbox::language::declares_test(Language::Python, test, "ParserChecks::test_parse"),
        "a class derived from the project's TestCase base is a test"
    );
    let command = ["python3", "-m", "unittest", "-v", "tests.test_parse"];
    let on_base = RunRequest::new(repo.path(), &base, Language::Python, command)
        .with_file("tests/test_parse.py", test);
    let on_change = on_base.at_revision(&change);
    let reproduction = sandbox.reproduce(&on_base, &on_change).await.expect("runs");
    assert_eq!(
        reproduction.proof,
        Proof::Reproduced,
        "{}",
        reproduction
            .change
            .first()
            .map(support::output)
            .unwrap_or_default()
    );
    let failed = &reproduction.change[0];
    assert_eq!(failed.tests.map(|t| (t.failed, t.errors)), Some((1, 0)));
    assert!(
        failed
            .failing
            .iter()
            .any(|n| n.starts_with("test_parse (tests.test_parse.ParserChecks")),
        "{:?}",
        failed.failing
    );
}

/// A setup.py that needs its build requirements to reach its setup() call (pandas' raises
/// "Cannot cythonize without Cython installed." except for `sdist` and `clean`; many import
/// numpy or Cython at the top): the inspection container has neither, so none of the
/// requirements it declares were read, and every test failed at import with nothing named
/// in the record. It is now read as for the commands that build nothing, with a stand-in
/// for a module only the build has, and the record says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_py_that_needs_its_build_requirements_to_be_read_gets_its_requirements() {
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let marker = support::unique();
    let runtime = format!("runtimedep{marker}");
    let filename = format!("{runtime}-1.0-py3-none-any.whl");
    wheel(&files.join(&filename), &runtime, "1.0");
    let dir = index.path().join("simple").join(&runtime);
    std::fs::create_dir_all(&dir).expect("page");
    std::fs::write(
        dir.join("index.html"),
        format!(
            "<!DOCTYPE html><html><body><a href=\"http://pypi.test/files/{filename}\">{filename}</a></body></html>"
        ),
    )
    .expect("write");
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nimport sys\nfrom setuptools import setup\n\
             import buildonly{marker}  # only the build environment has it\n\
             def extensions():\n\
             \x20   if 'sdist' in sys.argv or 'clean' in sys.argv:\n\
             \x20       return []\n\
             \x20   raise RuntimeError('Cannot cythonize without Cython installed.')\n\
             setup(name='sciproj', version='1.0', py_modules=['sciproj'],\n\
             \x20     install_requires=['{runtime}'], ext_modules=extensions())\n"
        ),
    )
    .write("sciproj.py", "VERSION = 'the tree'\n");
    let commit = repo.commit("a setup.py that needs its build requirements to be read");
    let show = [
        "python3",
        "-c",
        &format!("import {runtime}; print('imports its requirement')"),
    ];
    let run = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, show).as_command())
        .await
        .expect("run");
    let out = support::output(&run);
    assert_eq!(
        run.outcome,
        Outcome::Passed,
        "{out}\n{:#?}",
        run.dependencies
    );
    let notes = &run.dependencies.as_ref().expect("prepared").notes;
    for said in [
        "read as for the commands that build nothing (egg_info sdist clean --help)",
        &format!("imports buildonly{marker}, which only its build environment has"),
    ] {
        assert!(notes.iter().any(|n| n.contains(said)), "{said}: {notes:?}");
    }
}

/// A setup.py that cannot be read at all is named in the record: the requirements it
/// declares are not prepared, with its last words (before, nothing said so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_py_that_cannot_be_read_is_named_as_not_prepared() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!("# {marker}\nraise SystemExit('this setup.py needs a configure step first')\n"),
    )
    .write("unread.py", "VERSION = 1\n");
    let commit = repo.commit("a setup.py that refuses to be read");
    let show = ["python3", "-c", "import unread; print(unread.VERSION)"];
    let run = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, show).as_command())
        .await
        .expect("run");
    let deps = run.dependencies.as_ref().expect("prepared");
    assert!(
        deps.not_prepared
            .iter()
            .any(|n| n.what == "the requirements setup.py declares"
                && n.reason.contains("needs a configure step first")),
        "{:#?}",
        deps.not_prepared
    );
}

/// A requirement that depends on the project itself (a plugin of it) brings the project's
/// own release from the index: the tree's code is the one the tests import, as when the
/// project was installed into the environment over it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_of_the_project_a_requirement_brings_never_shadows_the_tree() {
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let marker = support::unique();
    for (name, version, requires) in [
        ("selfdep", "9.9", &[][..]),
        ("selfdepplugin", "1.0", &["selfdep"][..]),
    ] {
        let filename = format!("{name}-{version}-py3-none-any.whl");
        wheel_requiring(&files.join(&filename), name, version, requires);
        let dir = index.path().join("simple").join(name.replace('_', "-"));
        std::fs::create_dir_all(&dir).expect("page");
        // A PEP 503 page (pip reads the operator's index directly here).
        let body = format!(
            "<!DOCTYPE html><html><body><a href=\"http://pypi.test/files/{filename}\">{filename}</a></body></html>"
        );
        std::fs::write(dir.join("index.html"), body).expect("write");
    }
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "setup.py",
        format!("# {marker}\nfrom setuptools import setup\nsetup(name='selfdep', version='0.1', py_modules=['selfdep'])\n"),
    )
    .write("requirements-dev.txt", "selfdepplugin\n")
    .write("selfdep.py", "VERSION = 'the tree'\n");
    let commit = repo.commit("a project a plugin of which it tests with");
    let show = [
        "python3",
        "-c",
        "import selfdep, selfdepplugin; print('imports', selfdep.VERSION)",
    ];
    let run = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, show).as_command())
        .await
        .expect("run");
    let out = support::output(&run);
    assert_eq!(
        run.outcome,
        Outcome::Passed,
        "{out}\n{:#?}",
        run.dependencies
    );
    assert!(out.contains("imports the tree"), "{out}");
    let deps = run.dependencies.as_ref().expect("prepared");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("selfdep 9.9 came with a requirement: removed")),
        "{:?}",
        deps.notes
    );
}

/// An sdist's `setup_requires` is fetched by setuptools itself, not by the pip that builds
/// it: from whatever index pip's environment names, not the dated one (scrapy-4: Twisted
/// 18.7, built without isolation, got today's `incremental`, which needs a Python of
/// today). Here a requirement is an sdist whose build needs a helper, and the helper's
/// release after the date is broken: it installs only when that helper is resolved as of
/// the date too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sdists_setup_requires_is_resolved_as_of_the_date() {
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let marker = support::unique();
    let helper = format!("buildhelper{marker}");
    let needs = format!("needshelper{marker}");
    let good = format!("{helper}-1.0-py3-none-any.whl");
    wheel(&files.join(&good), &helper, "1.0");
    let broken = format!("{helper}-2.0-py3-none-any.whl");
    std::fs::write(files.join(&broken), "a release that does not install").expect("broken");
    json_page(
        index.path(),
        &helper,
        &[
            (&good, "2025-01-01T00:00:00Z"),
            (&broken, "2025-06-01T00:00:00Z"),
        ],
    );
    // The sdist (a zip, as old sdists often were): no pyproject.toml, a setup_requires.
    let sdist = format!("{needs}-1.0.zip");
    zip_sdist(
        &files.join(&sdist),
        &needs,
        format!(
            "from setuptools import setup\nsetup(name='{needs}', version='1.0', py_modules=['{needs}'], setup_requires=['{helper}'])\n"
        ),
    );
    json_page(index.path(), &needs, &[(&sdist, "2025-01-01T00:00:00Z")]);
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", format!("{needs}\n"));
    let commit = repo.commit("a requirement whose build needs a helper");
    let show = [
        "python3",
        "-c",
        &format!("import {needs}; print('version', {needs}.VERSION)"),
    ];
    let at = time::macros::datetime!(2025-02-01 00:00 UTC);
    let run = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, show)
                .as_command()
                .resolved_as_of(at),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    let deps = run.dependencies.as_ref().expect("prepared");
    assert_eq!(run.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("version 1.0"), "{out}");
    assert!(
        !deps.not_prepared.iter().any(|n| n.what.contains(&needs)),
        "{:?}",
        deps.not_prepared
    );
}

/// `python3 -m pytest -q` at `commit`, run as the package's whole suite.
async fn whole_suite(
    sandbox: &proven_sandbox::Sandbox,
    repo: &proven_change::testing::TestRepo,
    commit: &str,
) -> proven_sandbox::RunRecord {
    sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                commit,
                Language::Python,
                ["python3", "-m", "pytest", "-q"],
            )
            .as_whole_suite(),
        )
        .await
        .expect("run")
}

/// A whole suite's per-test time limit is a module the environment imports at start and
/// pytest then takes as a plugin: pytest warned that it could not rewrite it, and a
/// project that makes warnings errors (`filterwarnings = error`, as pytest's own suite does)
/// stopped at start. The module says pytest need not rewrite it; the suite runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_that_makes_warnings_errors_runs_beside_the_per_test_limit() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "requirements.txt",
        format!("# {}\nsix\n", support::unique()),
    )
    .write("pytest.ini", "[pytest]\nfilterwarnings =\n    error\n")
    .write(
        "tests/test_ok.py",
        "import six\n\n\ndef test_ok():\n    assert six.PY3\n",
    );
    let commit = repo.commit("a suite whose warnings are errors");
    let run = whole_suite(&sandbox, &repo, &commit).await;
    let out = support::output(&run);
    assert!(
        run.setup
            .iter()
            .any(|l| l.contains("each test of the whole suite is stopped after")),
        "{:?}",
        run.setup
    );
    assert_eq!(run.outcome, Outcome::Passed, "{out}");
}

/// scrapy's suite: a test of a real website, under Twisted's asyncio reactor, was busy in one
/// of the loop's callbacks when its time ran out; the loop logged the stop as that
/// callback's error and the test went on waiting, until the whole suite was killed at its
/// timeout. A test still running a little after its stop is stopped again, by a stop the
/// loop lets through, as that test's failure, and the rest of the suite runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_whose_event_loop_takes_its_stop_as_a_callbacks_error_is_stopped_again() {
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.suite_test_timeout = std::time::Duration::from_secs(2);
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", format!("# {}\nsix\n", support::unique()))
        .write(
            "tests/test_loop.py",
            "import asyncio\nimport time\n\n\ndef test_waits_in_a_loop():\n    async def main():\n        def busy():\n            t = time.time()\n            while time.time() - t < 4:\n                pass\n        asyncio.get_running_loop().call_soon(busy)\n        await asyncio.sleep(3600)\n    asyncio.run(main())\n\n\ndef test_after():\n    assert True\n",
        );
    let commit = repo.commit("a test that waits in an event loop");
    let run = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                &commit,
                Language::Python,
                ["python3", "-m", "pytest", "-q"],
            )
            .with_timeout(std::time::Duration::from_secs(90))
            .as_whole_suite(),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    assert!(!run.timed_out, "{out}");
    assert_eq!(run.outcome, Outcome::TestFailed, "{out}");
    assert_eq!(
        run.failing,
        ["tests/test_loop.py::test_waits_in_a_loop"],
        "{out}"
    );
    let tests = run.tests.expect("counts");
    assert_eq!((tests.passed, tests.failed), (1, 1), "{out}");
    assert!(out.contains("stopped again"), "{out}");
}

/// pydantic's suite: pytest-pretty, among its test requirements, prints `Results (…):`
/// and a table of cut names in place of pytest's summary, and the run said the runner
/// printed none ("exit 1 without the test runner's summary"). It is blocked; the run's
/// counts and its failing test are pytest's own, and the setup says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_that_replaces_pytests_report_is_blocked_and_the_failure_is_named() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "requirements.txt",
        format!("# {}\npytest-pretty==1.2.0\n", support::unique()),
    )
    .write(
        "tests/test_it.py",
        "def test_ok():\n    assert True\n\n\ndef test_broken():\n    assert 1 == 2\n",
    );
    let commit = repo.commit("a suite with pytest-pretty");
    let run = whole_suite(&sandbox, &repo, &commit).await;
    let out = support::output(&run);
    assert_eq!(run.outcome, Outcome::TestFailed, "{out}");
    let tests = run.tests.expect("counts");
    assert_eq!((tests.passed, tests.failed), (1, 1), "{out}");
    assert_eq!(run.failing, ["tests/test_it.py::test_broken"], "{out}");
    assert!(
        run.setup.iter().any(|l| l.contains("-p no:pretty")),
        "{:?}",
        run.setup
    );
}

/// A project whose build reads its version from git (setuptools_scm) gets the version its
/// CI's checkout with tags gives, the commit's nearest tag and the commits since: the run's
/// checkout of the tree has no tags, and was `0.0.0` (pytest's own tree refused itself:
/// "'minversion' requires pytest-2.0, actual pytest-0.0.0").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_read_from_git_is_the_commits_nearest_tag() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let name = format!("scmdemo{}", support::unique());
    repo.write(
        "pyproject.toml",
        format!(
            "[build-system]\nrequires = [\"setuptools>=64\", \"setuptools_scm>=8\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"{name}\"\ndynamic = [\"version\"]\n\n[tool.setuptools]\npy-modules = [\"{name}\"]\n\n[tool.setuptools_scm]\n"
        ),
    )
    .write(format!("{name}.py"), "ANSWER = 42\n");
    repo.commit("a project versioned by its tags");
    repo.tag("v1.4.0");
    repo.write("README", "one commit after the tag\n");
    let commit = repo.commit("after the tag");
    let show = [
        "python3",
        "-c",
        &format!("import importlib.metadata as m; print('version', m.version('{name}'))"),
    ];
    let run = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, show).as_command())
        .await
        .expect("run");
    let out = support::output(&run);
    let deps = run.dependencies.as_ref().expect("prepared");
    assert_eq!(run.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("version 1.4.0.post1"), "{out}\n{deps:#?}");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("a version read from git is 1.4.0.post1")),
        "{:#?}",
        deps.notes
    );
    // The tags, not the tree, say the version: a release tagged on the same commit later is
    // the version of the next run, never the cached layer's.
    repo.tag("v1.5.0");
    let run = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, show).as_command())
        .await
        .expect("run");
    let out = support::output(&run);
    assert!(out.contains("version 1.5.0\n"), "{out}");
}

/// An sdist (a zip, as old sdists often were) of `name` 1.0 whose metadata is read but
/// whose build fails, as a C extension of before this Python's headers fails.
fn unbuildable_sdist(path: &std::path::Path, name: &str) {
    zip_sdist(
        path,
        name,
        format!(
            "import sys\nfrom setuptools import setup\nif 'bdist_wheel' in sys.argv or 'install' in sys.argv:\n    raise SystemExit('error: this release does not build here')\nsetup(name='{name}', version='1.0', py_modules=['{name}'])\n"
        ),
    );
}

/// An sdist of `name` 1.0 as a zip (as old sdists often were, no pyproject.toml): its
/// `setup_py`, a module `name`, and PKG-INFO.
fn zip_sdist(path: &std::path::Path, name: &str, setup_py: String) {
    use std::io::Write;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).expect("sdist"));
    let options = zip::write::SimpleFileOptions::default();
    for (file, body) in [
        ("setup.py".to_string(), setup_py),
        (format!("{name}.py"), "VERSION = '1.0'\n".to_string()),
        (
            "PKG-INFO".to_string(),
            format!("Metadata-Version: 1.1\nName: {name}\nVersion: 1.0\n"),
        ),
    ] {
        zip.start_file(format!("{name}-1.0/{file}"), options)
            .expect("entry");
        zip.write_all(body.as_bytes()).expect("write");
    }
    zip.finish().expect("zip");
}

/// A dependency none of whose releases of the date builds here (cryptography 1.7's sdist
/// against the image's OpenSSL 3, under scrapy of 2016) failed every requirement that needs
/// it, and each later attempt built it again until the preparation's time ran out. It is
/// now served as of the first wheel for this Python uploaded after the date: the nearest
/// release that installs (1.1), never today's (9.0), while what needs it keeps the date.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_that_does_not_build_as_of_the_date_comes_from_its_first_wheel_after() {
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let marker = support::unique();
    let dep = format!("nobuild{marker}");
    let top = format!("needsnobuild{marker}");
    // The date's release: an sdist whose build fails (its metadata is read, its wheel is not
    // made), as a C extension of before this Python's headers fails.
    let sdist = format!("{dep}-1.0.zip");
    unbuildable_sdist(&files.join(&sdist), &dep);
    // Its first wheel needs a helper released after the date too (cryptography 2.0 and
    // asn1crypto 0.21): both come as of then.
    let helper = format!("nobuildhelper{marker}");
    let first = format!("{dep}-1.1-py3-none-any.whl");
    let needs = format!("{helper}>=2");
    wheel_requiring(&files.join(&first), &dep, "1.1", &[needs.as_str()]);
    let today = format!("{dep}-9.0-py3-none-any.whl");
    wheel(&files.join(&today), &dep, "9.0");
    json_page(
        index.path(),
        &dep,
        &[
            (&sdist, "2025-01-01T00:00:00Z"),
            (&first, "2025-03-01T00:00:00Z"),
            (&today, "2026-01-01T00:00:00Z"),
        ],
    );
    let (old_helper, new_helper) = (
        format!("{helper}-1.0-py3-none-any.whl"),
        format!("{helper}-2.0-py3-none-any.whl"),
    );
    wheel(&files.join(&old_helper), &helper, "1.0");
    wheel(&files.join(&new_helper), &helper, "2.0");
    json_page(
        index.path(),
        &helper,
        &[
            (&old_helper, "2025-01-01T00:00:00Z"),
            (&new_helper, "2025-02-15T00:00:00Z"),
        ],
    );
    let top_wheel = format!("{top}-1.0-py3-none-any.whl");
    wheel_requiring(&files.join(&top_wheel), &top, "1.0", &[&dep]);
    json_page(index.path(), &top, &[(&top_wheel, "2025-01-01T00:00:00Z")]);
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", format!("{top}\n"));
    let commit = repo.commit("a requirement whose dependency does not build as of the date");
    let show = [
        "python3",
        "-c",
        &format!(
            "import {top}, {dep}, {helper}; print('versions', {top}.VERSION, {dep}.VERSION, {helper}.VERSION)"
        ),
    ];
    let at = time::macros::datetime!(2025-02-01 00:00 UTC);
    let run = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, show)
                .as_command()
                .resolved_as_of(at),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    let deps = run.dependencies.as_ref().expect("prepared");
    assert_eq!(run.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("versions 1.0 1.1 2.0"), "{out}\n{deps:#?}");
    assert!(
        deps.notes.iter().any(|n| n.contains(&dep)
            && n.contains("served as of 2025-03-01T00:00:00Z, when its first wheel for this Python was uploaded, with what it needs as of then")
            && n.contains(&helper)),
        "{:#?}",
        deps.notes
    );
}

/// A requirement whose sdist fails to build here and that no wheel serves at any date
/// (scrapy-3: reppy's C++ sdist of 2019, with this compiler, on Python 3.8) failed the
/// install together; it was then built again alone, again without build isolation, and
/// again as of today, while every other requirement was installed alone in what was left:
/// the preparation ran out of its time. It is now set aside by name after its first failed
/// build, the rest installed together, and built once more only otherwise (without build
/// isolation); a later attempt that would fetch the same release is not made. Its build
/// counts itself in the environment: two builds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requirement_whose_build_fails_is_set_aside_and_never_built_again_as_it_was() {
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let marker = support::unique();
    let broken = format!("nobuildever{marker}");
    let (one, two) = (format!("quickone{marker}"), format!("quicktwo{marker}"));
    let sdist = format!("{broken}-1.0.zip");
    zip_sdist(
        &files.join(&sdist),
        &broken,
        format!(
            "import os, sys\nfrom setuptools import setup\n\
             if 'bdist_wheel' in sys.argv or 'install' in sys.argv:\n\
             \x20   with open(os.path.join(sys.prefix, 'builds-of-{broken}'), 'a') as f:\n\
             \x20       f.write('built\\n')\n\
             \x20   raise SystemExit('error: this release does not build here')\n\
             setup(name='{broken}', version='1.0', py_modules=['{broken}'])\n"
        ),
    );
    json_page(index.path(), &broken, &[(&sdist, "2025-01-01T00:00:00Z")]);
    for name in [&one, &two] {
        let file = format!("{name}-1.0-py3-none-any.whl");
        wheel(&files.join(&file), name, "1.0");
        json_page(index.path(), name, &[(&file, "2025-01-01T00:00:00Z")]);
    }
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", format!("{one}\n{broken}\n{two}\n"));
    let commit = repo.commit("requirements of which one never builds here");
    let show = format!(
        "import sys, {one}, {two}; print('installed', {one}.VERSION, {two}.VERSION); print('builds', open(sys.prefix + '/builds-of-{broken}').read().count('built'))"
    );
    let at = time::macros::datetime!(2025-02-01 00:00 UTC);
    let run = sandbox
        .run(
            &RunRequest::new(
                repo.path(),
                &commit,
                Language::Python,
                ["python3", "-c", &show],
            )
            .as_command()
            .resolved_as_of(at),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    let deps = run.dependencies.as_ref().expect("prepared");
    assert_eq!(run.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("installed 1.0 1.0"), "{out}\n{deps:#?}");
    assert!(out.contains("builds 2"), "{out}\n{deps:#?}");
    assert!(
        deps.notes.iter().any(|n| n.contains(&format!(
            "together, {broken} did not build: set aside, the rest installed together again"
        ))),
        "{:#?}",
        deps.notes
    );
    assert!(
        deps.notes.iter().any(|n| n.contains(&broken)
            && n.contains("its release 1.0 did not build here")
            && n.contains("not built again")),
        "{:#?}",
        deps.notes
    );
    assert!(
        deps.not_prepared
            .iter()
            .any(|n| n.what == broken && n.reason.contains("this release does not build here")),
        "{deps:#?}"
    );
}

/// Class 6 of issue 30: a project whose tox runs `coverage run test/runtests.py`, its own
/// script that puts its code on the path and hands its arguments to pytest, with a variable
/// of tox's `setenv` the tests read. Plain pytest over the tree cannot collect it; run as
/// tox runs it, its suite runs (one test passes, the other fails by name), and one test
/// is selected within it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_run_by_the_projects_own_runner_script_runs_and_selects_one_test() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "tox.ini",
        "[testenv]\ndeps = coverage\nsetenv =\n    CALC_CONFIG = {toxinidir}/test/calc.cfg\ncommands =\n    python -m coverage erase\n    python -m coverage run test/runtests.py {posargs:}\n    python -m coverage report\n",
    )
    .write("lib/calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n")
    .write("test/calc.cfg", "scale = 1\n")
    .write(
        "test/runtests.py",
        "import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))\nimport pytest\n\nif __name__ == '__main__':\n    sys.exit(pytest.main(sys.argv[1:]))\n",
    )
    .write(
        "test/calc_test.py",
        "import os\n\nimport calc\n\n\ndef scale():\n    with open(os.environ['CALC_CONFIG']) as f:\n        return int(f.read().split('=')[1])\n\n\nclass TestCalc:\n    def test_add(self):\n        assert calc.add(2, 1) == 3 * scale()\n\n    def test_sub(self):\n        assert calc.sub(2, 1) == 1 * scale()\n",
    );
    let commit = repo.commit("a project run by its own script");
    let files =
        |path: &str| -> Option<String> { std::fs::read_to_string(repo.path().join(path)).ok() };
    let suite = proven_sandbox::suite::documented_suite(Language::Python, &files);
    assert_eq!(suite.run.command, ["python3", "test/runtests.py"]);
    let request = |run: proven_sandbox::TestRun| {
        let mut request = RunRequest::new(repo.path(), &commit, Language::Python, run.command);
        for (k, v) in run.env {
            request = request.with_env(k, v);
        }
        request
    };
    let whole = sandbox.run(&request(suite.run.clone())).await.expect("run");
    let out = support::output(&whole);
    assert_eq!(whole.outcome, Outcome::TestFailed, "{out}");
    assert_eq!(
        whole.tests.map(|t| (t.passed, t.failed)),
        Some((1, 1)),
        "{out}"
    );
    assert!(
        whole
            .failing
            .iter()
            .any(|f| f.ends_with("TestCalc::test_sub")),
        "{:?}",
        whole.failing
    );
    let select = |name: &str| {
        suite.select(
            Language::Python,
            &proven_sandbox::Selection {
                path: "test/calc_test.py".into(),
                names: vec![name.into()],
                package: None,
            },
            0,
        )
    };
    let passing = sandbox
        .run(&request(select("TestCalc::test_add")))
        .await
        .expect("run");
    let out = support::output(&passing);
    assert_eq!(passing.outcome, Outcome::Passed, "{out}");
    assert_eq!(
        passing.tests.map(|t| (t.passed, t.failed)),
        Some((1, 0)),
        "{out}"
    );
    let failing = sandbox
        .run(&request(select("TestCalc::test_sub")))
        .await
        .expect("run");
    let out = support::output(&failing);
    assert_eq!(failing.outcome, Outcome::TestFailed, "{out}");
    assert_eq!(
        failing.tests.map(|t| (t.passed, t.failed)),
        Some((0, 1)),
        "{out}"
    );
}

/// Class 3 of issue 30: a requirement none of whose releases of the date installs (here:
/// `app` 1.0 and 1.5 need a package the index does not serve) used to be installed as of
/// today on its own, beside the date's versions of its dependencies (`lib` 1.0, which its
/// loose `lib>=1.0` accepts, though it was made with `lib` 2.0: today's Twisted with an
/// attrs of 2019). It is resolved as of the nearest later instant it installs at (`app`
/// 2.0, not today's 3.0), together with its dependencies as of then (`lib` 2.0), and the
/// record names both.
#[tokio::test]
async fn a_requirement_resolved_after_the_date_brings_its_dependencies_of_then() {
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let page = |name: &str, releases: &[(&str, &str, &[&str], &str)]| {
        let dir = index.path().join("simple").join(name);
        std::fs::create_dir_all(&dir).expect("page");
        let entries: Vec<serde_json::Value> = releases
            .iter()
            .map(|(version, uploaded, requires, requires_python)| {
                let filename = format!("{name}-{version}-py3-none-any.whl");
                wheel_requiring(&files.join(&filename), name, version, requires);
                let mut file = serde_json::json!({
                    "filename": filename,
                    "url": format!("http://pypi.test/files/{filename}"),
                    "hashes": {},
                    "upload-time": uploaded,
                });
                if !requires_python.is_empty() {
                    file["requires-python"] = (*requires_python).into();
                }
                file
            })
            .collect();
        let body =
            serde_json::json!({"meta": {"api-version": "1.1"}, "name": name, "files": entries});
        std::fs::write(dir.join("index.html"), body.to_string()).expect("write");
    };
    page(
        "lib",
        &[
            ("1.0", "2025-01-01T00:00:00Z", &[], ""),
            ("2.0", "2025-05-01T00:00:00Z", &[], ""),
        ],
    );
    page(
        "app",
        &[
            ("1.0", "2025-01-01T00:00:00Z", &["unserved-helper"], ""),
            ("1.5", "2025-03-01T00:00:00Z", &["unserved-helper"], ""),
            ("2.0", "2025-06-01T00:00:00Z", &["lib>=1.0"], ""),
            ("3.0", "2025-09-01T00:00:00Z", &["lib>=1.0"], ""),
        ],
    );
    // As of the date only for Pythons before this one: not served then, served later.
    page(
        "oldpy",
        &[
            ("1.0", "2025-01-01T00:00:00Z", &[], "<3.10"),
            ("1.1", "2025-04-01T00:00:00Z", &["lib>=1.0"], ""),
        ],
    );
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", "lib\napp\noldpy\n");
    let commit = repo.commit("two requirements");
    let show = [
        "python3",
        "-c",
        "import app, lib, oldpy; print('app', app.VERSION, 'lib', lib.VERSION, 'oldpy', oldpy.VERSION)",
    ];
    let at = time::macros::datetime!(2025-02-01 00:00 UTC);
    let run = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, show)
                .as_command()
                .resolved_as_of(at),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    assert_eq!(run.outcome, Outcome::Passed, "{out}");
    let deps = run.dependencies.as_ref().expect("prepared");
    assert!(
        out.contains("app 2.0 lib 2.0 oldpy 1.1"),
        "{out}\n{:?}",
        deps.notes
    );
    assert!(
        deps.notes.iter().any(|n| n
            .starts_with("app: as of 2025-02-01T00:00:00Z it did not install")
            && n.contains("resolved as of 2025-06-01T00:00:00Z instead: app==2.0")
            && n.contains("lib 1.0 -> 2.0")),
        "{:?}",
        deps.notes
    );
    assert!(
        deps.notes.iter().any(|n| n
            .starts_with("oldpy: as of 2025-02-01T00:00:00Z it did not install")
            && n.contains("resolved as of 2025-04-01T00:00:00Z instead: oldpy==1.1")),
        "{:?}",
        deps.notes
    );
    assert!(deps.not_prepared.is_empty(), "{:?}", deps.not_prepared);
}

/// A project that declares its tests' dependencies only in its CI (Keras installed its
/// TensorFlow backend in `.travis.yml`, nowhere else): what every job installs is prepared,
/// the special case's branch (`then`) and a guarded command are not, and the record names
/// the CI file as the requirement's source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_only_the_projects_ci_installs_is_prepared() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        ".travis.yml",
        format!(
            "# {marker}\nlanguage: python\ninstall:\n  - if [[ \"$MODE\" == \"NIGHTLY\" ]]; then\n    pip install proven-never-published-nightly --progress-bar off;\n    else\n    pip install six==1.16.0 --progress-bar off;\n    fi\n  - '[[ $TRAVIS_PYTHON_VERSION == 2.7 ]] && pip install proven-never-published-py2'\nscript:\n  - pytest\n"
        ),
    )
    .write(
        "setup.py",
        "from setuptools import setup\nsetup(name='cidemo', version='0.1', py_modules=['cidemo'])\n",
    )
    .write(
        "cidemo.py",
        "import six\n\ndef name():\n    return six.__name__\n",
    );
    let commit = repo.commit("a project whose backend only CI installs");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_cidemo.py"),
    )
    .with_file(
        "test_cidemo.py",
        "import six\nfrom cidemo import name\n\ndef test_name():\n    assert name() == 'six'\n    assert six.__version__ == '1.16.0'\n",
    );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    let text = format!("{deps:?}");
    assert!(
        !text.contains("proven-never-published"),
        "the special cases' installs are not taken: {text}"
    );
    assert!(
        deps.not_prepared.is_empty(),
        "everything taken is installed: {:?}",
        deps.not_prepared
    );
    assert!(
        deps.lock_files.iter().any(|f| f == ".travis.yml"),
        "the CI file is named among what declared the dependencies: {:?}",
        deps.lock_files
    );
}

/// A project whose C extension does not compile is named with the compiler's own
/// diagnosis (the missing header), not only setuptools' last line (`command 'gcc' failed`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_extension_build_is_named_with_the_compilers_diagnosis() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nfrom setuptools import Extension, setup\n\
             setup(name='brokenc', version='1.0', ext_modules=[Extension('brokenc', ['brokenc.c'])])\n"
        ),
    )
    .write(
        "brokenc.c",
        "#include <Python.h>\n#include <proven_no_such_header.h>\n",
    )
    .write("helper.py", "def one():\n    return 1\n");
    let commit = repo.commit("a project whose extension does not compile");
    let request = RunRequest::new(repo.path(), &commit, Language::Python, pytest("test_h.py"))
        .with_file(
            "test_h.py",
            "from helper import one\n\ndef test_one():\n    assert one() == 1\n",
        );
    let run = sandbox.run(&request).await.expect("run");
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    let project = deps
        .not_prepared
        .iter()
        .find(|n| n.what.contains("the project itself"))
        .unwrap_or_else(|| panic!("the failed build is named: {:?}", deps.not_prepared));
    assert!(
        project.reason.contains("proven_no_such_header.h"),
        "{}",
        project.reason
    );
}

/// A setup.py that passes its requirements.txt's lines to install_requires, comments and
/// all (ansible's did): setuptools reads a comment as nothing, and so does the
/// preparation; the requirement beside them is installed and no comment is named as
/// refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comments_in_a_setup_pys_requirement_lines_are_not_requirements() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "requirements.txt",
        format!("# {marker}\n# Note: the loosest set possible.\nsix  # any six\n"),
    )
    .write(
        "setup.py",
        "from setuptools import setup\n\
         setup(name='commentdemo', version='0.1', py_modules=['commentdemo'],\n\
               install_requires=open('requirements.txt').read().splitlines())\n",
    )
    .write(
        "commentdemo.py",
        "import six\n\ndef name():\n    return six.__name__\n",
    );
    let commit = repo.commit("a setup.py reading its requirements file whole");
    let request = RunRequest::new(repo.path(), &commit, Language::Python, pytest("test_c.py"))
        .with_file(
            "test_c.py",
            "from commentdemo import name\n\ndef test_name():\n    assert name() == 'six'\n",
        );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.not_prepared.iter().all(|n| !n.what.contains('#')),
        "no comment is named as a requirement: {:?}",
        deps.not_prepared
    );
}

/// slowdep's setup.py: it never ends, and a build of it that starts while an earlier one
/// still runs (a timed-out install whose build was left behind) leaves /deps/slowdep-overlapped.
const SLOW_SETUP: &str = "import fcntl, time\nlock = open('/tmp/slowdep.lock', 'w')\ntry:\n    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n    open('/deps/slowdep-overlapped', 'w').write('an earlier build still ran')\ntime.sleep(3600)\nfrom setuptools import setup\nsetup(name='slowdep', version='1.0')\n";

/// What a run of the prepared environment prints: whether two builds of slowdep ever ran at
/// once.
const SHOW_OVERLAP: &str =
    "import os; print('overlapped', os.path.exists('/deps/slowdep-overlapped'))";

/// The PEP 691 page of `name` in a test index (served as `pypi.test`): its files, already
/// under `files/`, each with the instant it was uploaded.
fn json_page(index: &std::path::Path, name: &str, files: &[(&String, &str)]) {
    let dir = index.join("simple").join(name);
    std::fs::create_dir_all(&dir).expect("page");
    let entries: Vec<serde_json::Value> = files
        .iter()
        .map(|(filename, uploaded)| {
            serde_json::json!({
                "filename": filename,
                "url": format!("http://pypi.test/files/{filename}"),
                "hashes": {},
                "upload-time": uploaded,
            })
        })
        .collect();
    let body = serde_json::json!({"meta": {"api-version": "1.1"}, "name": name, "files": entries});
    std::fs::write(dir.join("index.html"), body.to_string()).expect("write");
}

/// A package index (served as `pypi.test`) of one wheel per name in `quick`, each
/// installing at once, and `slowdep`, an sdist whose build never ends.
fn index_with_a_build_that_hangs(quick: &[&str]) -> (tempfile::TempDir, support::FileServer) {
    index_with_builds_that_hang(quick, &["slowdep"])
}

/// The same index with an sdist that never builds for each name in `slow` (`slowdep`'s
/// setup.py for each: the lock and the overlap marker are slowdep's).
fn index_with_builds_that_hang(
    quick: &[&str],
    slow: &[&str],
) -> (tempfile::TempDir, support::FileServer) {
    use std::io::Write;
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let mut pages: Vec<(String, String)> = Vec::new();
    for name in quick {
        let filename = format!("{name}-1.0-py3-none-any.whl");
        wheel(&files.join(&filename), name, "1.0");
        pages.push((name.to_string(), filename));
    }
    for name in slow {
        let filename = format!("{name}-1.0.zip");
        let mut zip =
            zip::ZipWriter::new(std::fs::File::create(files.join(&filename)).expect("sdist"));
        let options = zip::write::SimpleFileOptions::default();
        let setup = SLOW_SETUP
            .replace("name='slowdep'", &format!("name='{name}'"))
            .replace("slowdep.lock", &format!("{name}.lock"));
        for (entry, body) in [
            (
                format!("{name}-1.0/PKG-INFO"),
                format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"),
            ),
            (format!("{name}-1.0/setup.py"), setup),
        ] {
            zip.start_file(entry, options).expect("entry");
            zip.write_all(body.as_bytes()).expect("write");
        }
        zip.finish().expect("zip");
        pages.push((name.to_string(), filename));
    }
    for (name, filename) in pages {
        let dir = index.path().join("simple").join(name);
        std::fs::create_dir_all(&dir).expect("page");
        let body = format!(
            "<!DOCTYPE html><html><body><a href=\"http://pypi.test/files/{filename}\">{filename}</a></body></html>"
        );
        std::fs::write(dir.join("index.html"), body).expect("write");
    }
    let server = support::FileServer::start(index.path());
    (index, server)
}

/// A requirement none of whose allowed releases installs here and none of which came after
/// the date (`pandas<0.21` on Python 3.7, tqdm-5) is not resolved again at later instants of
/// the project's history: each would resolve the same release and build it again (four
/// builds of pandas 0.20.3, each failing), nor as of today, which would fetch that same
/// release too. Here the project's only later upload is a release the requirement excludes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_requirement_whose_allowed_releases_all_came_before_the_date_is_not_tried_at_later_instants()
 {
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let marker = support::unique();
    let dep = format!("oldpin{marker}");
    let sdist = format!("{dep}-1.0.zip");
    unbuildable_sdist(&files.join(&sdist), &dep);
    let excluded = format!("{dep}-2.0-py3-none-any.whl");
    wheel(&files.join(&excluded), &dep, "2.0");
    json_page(
        index.path(),
        &dep,
        &[
            (&sdist, "2025-01-01T00:00:00Z"),
            (&excluded, "2025-03-01T00:00:00Z"),
        ],
    );
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", format!("{dep}<2\n"));
    let commit = repo.commit("a requirement pinned below every release that installs");
    let show = ["python3", "-c", "print('ran')"];
    let at = time::macros::datetime!(2025-02-01 00:00 UTC);
    let run = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, show)
                .as_command()
                .resolved_as_of(at),
        )
        .await
        .expect("run");
    let deps = run.dependencies.as_ref().expect("prepared");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.starts_with(&format!("{dep}<2: its release 1.0 did not build here, and nothing it allows that could install otherwise was uploaded after"))
                && n.ends_with("not built again")),
        "{deps:#?}"
    );
    assert!(
        deps.not_prepared
            .iter()
            .any(|n| n.what == format!("{dep}<2")),
        "still named as not prepared: {deps:#?}"
    );
}

/// A release of the date whose build outlasts the preparation's time here (lxml of 2016
/// compiling on a loaded machine, under scrapy-9) is served as of its first wheel for this
/// Python, as a build that fails is, and installed with the rest: not set aside with
/// nothing installed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependency_whose_build_outlasts_the_time_comes_from_its_first_wheel_after() {
    use std::io::Write;
    let index = tempfile::tempdir().expect("index");
    let files = index.path().join("files");
    std::fs::create_dir_all(&files).expect("files");
    let name = format!("slowbuild{}", support::unique());
    let sdist = format!("{name}-1.0.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(files.join(&sdist)).expect("sdist"));
    let options = zip::write::SimpleFileOptions::default();
    let setup = SLOW_SETUP
        .replace("name='slowdep'", &format!("name='{name}'"))
        .replace("slowdep.lock", &format!("{name}.lock"));
    for (entry, body) in [
        (
            format!("{name}-1.0/PKG-INFO"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"),
        ),
        (format!("{name}-1.0/setup.py"), setup),
    ] {
        zip.start_file(entry, options).expect("entry");
        zip.write_all(body.as_bytes()).expect("write");
    }
    zip.finish().expect("zip");
    let first = format!("{name}-1.1-py3-none-any.whl");
    wheel(&files.join(&first), &name, "1.1");
    json_page(
        index.path(),
        &name,
        &[
            (&sdist, "2025-01-01T00:00:00Z"),
            (&first, "2025-03-01T00:00:00Z"),
        ],
    );
    let server = support::FileServer::start(index.path());
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
        c.prepare_timeout = std::time::Duration::from_secs(90);
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", format!("{name}\n"));
    let commit = repo.commit("a requirement whose build of the date never ends");
    let show = format!("import {name}; print('version', {name}.VERSION)");
    let show = ["python3", "-c", show.as_str()];
    let at = time::macros::datetime!(2025-02-01 00:00 UTC);
    let run = sandbox
        .run(
            &RunRequest::new(repo.path(), &commit, Language::Python, show)
                .as_command()
                .resolved_as_of(at),
        )
        .await
        .expect("run");
    let out = support::output(&run);
    let deps = run.dependencies.as_ref().expect("prepared");
    assert_eq!(run.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("version 1.1"), "{out}\n{deps:#?}");
    assert!(
        deps.notes.iter().any(|n| n.contains(&name)
            && n.contains("did not build within the preparation's time here; served as of 2025-03-01T00:00:00Z")),
        "{:#?}",
        deps.notes
    );
}

/// Out of time together, the requirement whose build pip was in is set aside by name and
/// the rest installed together again: one sdist compiling for minutes (on a loaded machine)
/// no longer leaves each of the other requirements a second of its own, one by one, and
/// none installed. Here the build is a dependency's (`bringsslow` requires `slowdep`): pip
/// names the requirement that brought it in, and that one is set aside. A second build
/// that hangs (`slowtoo`, wanted itself) is set aside in its turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_build_that_hangs_is_set_aside_and_the_rest_installed_together() {
    let quick: Vec<String> = (1..=24).map(|i| format!("quick{i:02}")).collect();
    let names: Vec<&str> = quick.iter().map(String::as_str).collect();
    let (index, server) = index_with_builds_that_hang(&names, &["slowdep", "slowtoo"]);
    let brings = "bringsslow-1.0-py3-none-any.whl";
    wheel_requiring(
        &index.path().join("files").join(brings),
        "bringsslow",
        "1.0",
        &["slowdep"],
    );
    let page = index.path().join("simple").join("bringsslow");
    std::fs::create_dir_all(&page).expect("page");
    std::fs::write(
        page.join("index.html"),
        format!("<!DOCTYPE html><html><body><a href=\"http://pypi.test/files/{brings}\">{brings}</a></body></html>"),
    )
    .expect("write");
    let marker = support::unique();
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
        c.prepare_timeout = std::time::Duration::from_secs(180);
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "requirements.txt",
        format!("# {marker}\nbringsslow\nslowtoo\n{}\n", quick.join("\n")),
    )
    .write(
        "app.py",
        format!(
            "import {}\nVERSIONS = [m.VERSION for m in ({},)]\n",
            quick.join(", "),
            quick.join(", ")
        ),
    );
    let commit = repo.commit("a project with a build that hangs among many quick ones");
    let show = [
        "python3",
        "-c",
        &format!("import app; print('imports', len(app.VERSIONS)); {SHOW_OVERLAP}"),
    ];
    let run = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, show).as_command())
        .await
        .expect("run");
    let out = support::output(&run);
    let deps = run.dependencies.as_ref().expect("prepared");
    assert_eq!(run.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("imports 24"), "{out}");
    assert!(out.contains("overlapped False"), "{out}");
    assert!(
        deps.notes.iter().any(|n| n.contains(
            "ran out of their time building slowdep: bringsslow set aside, the rest installed together again"
        )),
        "{:?}",
        deps.notes
    );
    assert!(
        deps.notes.iter().any(|n| n.contains(
            "ran out of their time building slowtoo: slowtoo set aside, the rest installed together again"
        )),
        "{:?}",
        deps.notes
    );
    for name in ["bringsslow", "slowtoo"] {
        let aside = deps
            .not_prepared
            .iter()
            .find(|n| n.what == name)
            .unwrap_or_else(|| panic!("{name} is named: {deps:#?}"));
        assert!(aside.reason.contains("ran out"), "{aside:?}");
    }
    assert_eq!(deps.not_prepared.len(), 2, "{deps:#?}");
}

/// A preparation whose time runs out (a build that hangs: on a loaded machine, an sdist
/// compiling for minutes) keeps what it installed in time and names what it did not reach,
/// instead of being killed with nothing: the tests run with the rest, the record says why,
/// and the environment is never cached (the next run prepares it again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preparation_out_of_time_keeps_what_it_installed_and_names_the_rest() {
    let (index, server) = index_with_a_build_that_hangs(&["quickdep"]);
    let marker = support::unique();
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.pip_index_url = Some("http://pypi.test/simple/".into());
        c.registries = server.allow_as("pypi.test");
        c.prepare_timeout = std::time::Duration::from_secs(60);
    })
    .await;
    let _index = index;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "requirements.txt",
        format!("# {marker}\nslowdep\nquickdep\n"),
    )
    .write("app.py", "import quickdep\nVERSION = quickdep.VERSION\n");
    let commit = repo.commit("a project with a build that hangs");
    let show = format!("import app; print('imports', app.VERSION); {SHOW_OVERLAP}");
    let show = ["python3", "-c", show.as_str()];
    let request = || RunRequest::new(repo.path(), &commit, Language::Python, show).as_command();
    let run = sandbox.run(&request()).await.expect("run");
    let out = support::output(&run);
    // A timed-out install ends with everything it started: the build set aside and tried
    // again never ran beside the first.
    assert!(out.contains("overlapped False"), "{out}");
    assert_eq!(
        run.outcome,
        Outcome::Passed,
        "{out}\n{:#?}",
        run.dependencies
    );
    assert!(out.contains("imports 1.0"), "{out}");
    let deps = run.dependencies.as_ref().expect("prepared");
    let slowdep = deps
        .not_prepared
        .iter()
        .find(|n| n.what == "slowdep")
        .unwrap_or_else(|| panic!("slowdep is named: {deps:#?}"));
    assert!(slowdep.reason.contains("ran out"), "{slowdep:?}");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("time (60 s") && n.contains("prepared again by the next")),
        "{:?}",
        deps.notes
    );
    // Never cached: the next run prepares again (and keeps the same key).
    let again = sandbox.run(&request()).await.expect("run");
    let second = again.dependencies.as_ref().expect("prepared");
    assert!(second.prepared_now, "{second:#?}");
    assert_eq!(second.key, deps.key);
}

/// The extras a project's CI installs are prepared whatever their names: `flit install`
/// installs every extra a flit project declares (fastapi's `all` held the python-multipart
/// its form tests need), `pip install -e .[d]` a setup.py's `d` extra. An extra nothing
/// installs (docs) is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extras_a_projects_ci_installs_are_prepared_whatever_their_names() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let marker = support::unique();
    let flit = proven_change::testing::TestRepo::new();
    flit.write(
        "pyproject.toml",
        format!(
            "# {marker}\n[build-system]\nrequires = [\"flit_core >=2,<4\"]\nbuild-backend = \"flit_core.buildapi\"\n\n[tool.flit.metadata]\nmodule = \"flitall\"\nauthor = \"Demo\"\n\n[tool.flit.metadata.requires-extra]\nall = [\"six\"]\ndoc = [\"proven-never-published-docs\"]\n"
        ),
    )
    .write(".travis.yml", "language: python\ninstall:\n  - pip install flit\n  - flit install --symlink\nscript:\n  - pytest\n")
    .write(
        "flitall.py",
        "\"\"\"A flit project whose forms need an extra.\"\"\"\n__version__ = '0.1'\n\ndef forms():\n    import six\n    return six.__name__\n",
    );
    let setup = proven_change::testing::TestRepo::new();
    setup
        .write(
            "setup.py",
            format!("# {marker}\nfrom setuptools import setup\nsetup(name='withd', version='0.1', py_modules=['withd'], extras_require={{'d': ['six'], 'docs': ['proven-never-published-docs']}})\n"),
        )
        .write(".travis.yml", "language: python\ninstall:\n  - pip install -e '.[d]'\nscript:\n  - pytest\n")
        .write("withd.py", "def forms():\n    import six\n    return six.__name__\n");
    for (repo, module) in [(&flit, "flitall"), (&setup, "withd")] {
        let commit = repo.commit("a project whose CI installs an extra");
        let request = RunRequest::new(
            repo.path(),
            &commit,
            Language::Python,
            pytest("test_forms.py"),
        )
        .with_file(
            "test_forms.py",
            format!(
                "from {module} import forms\n\ndef test_forms():\n    assert forms() == 'six'\n"
            ),
        );
        let run = sandbox.run(&request).await.expect("run");
        assert_eq!(
            run.outcome,
            Outcome::Passed,
            "{module}: {}",
            support::output(&run)
        );
        let deps = run.dependencies.as_ref().expect("prepared dependencies");
        assert!(
            format!("{deps:?}").contains("proven-never-published-docs") == (module == "flitall"),
            "{module}: flit install takes every extra, .[d] only d: {deps:?}"
        );
    }
}

/// A setup.py of its date builds with the setuptools of that date, a lock file or not: the
/// image's setuptools of today has lost what it imports (`setuptools.extern`, gone in 71;
/// markupsafe 1.0's `Feature`, gone in 46), and a project pinned by its Pipfile.lock got
/// today's setuptools for every sdist and for itself. Resolved as of 2021, the project is
/// installed (its metadata is there) and its pin kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_py_of_its_date_is_built_with_the_setuptools_of_then_beside_a_lock_file() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!("# {marker}\nfrom setuptools import setup\nfrom setuptools.extern import packaging  # the setuptools of 2021\n\nsetup(name='datedbuild', version='0.1', py_modules=['datedbuild'], install_requires=['six'])\n"),
    )
    .write(
        "Pipfile.lock",
        "{\"_meta\": {\"requires\": {}}, \"default\": {\"six\": {\"version\": \"==1.16.0\"}}, \"develop\": {}}\n",
    )
    .write("datedbuild.py", "import six\n\ndef name():\n    return six.__name__\n");
    let commit = repo.commit("a setup.py of 2021, pinned by its lock");
    let request = RunRequest::new(
        repo.path(),
        &commit,
        Language::Python,
        pytest("test_datedbuild.py"),
    )
    .with_file(
        "test_datedbuild.py",
        "import importlib.metadata\nimport six\nfrom datedbuild import name\n\ndef test_installed():\n    assert name() == 'six'\n    assert six.__version__ == '1.16.0'\n    assert importlib.metadata.version('datedbuild') == '0.1'\n",
    )
    .resolved_as_of(time::macros::datetime!(2021-06-01 00:00 UTC));
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    let deps = run.dependencies.as_ref().expect("prepared dependencies");
    assert!(
        deps.notes
            .iter()
            .any(|n| n.contains("sdists are built with the setuptools and wheel of")),
        "{:?}",
        deps.notes
    );
}

/// The command Proven runs for a test keeps pytest's cache provider: a plugin or a
/// conftest that reads `config.cache` (pytest-randomly, pytest-pylint, pytest 3.10.0's own
/// stepwise plugin, sanic's suite of 2018) dies at configure without it, exit 1 and no
/// summary. Its cache goes to the run's scratch copy of the tree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_that_reads_pytests_cache_runs_under_provens_own_test_command() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "conftest.py",
        format!(
            "# {marker}\ndef pytest_configure(config):\n    config.cache.set('demo/seen', 1)\n"
        ),
    )
    .write("calc.py", "def one():\n    return 1\n");
    let commit = repo.commit("a conftest that keeps a value in pytest's cache");
    let run = Language::Python.test_run(
        &proven_sandbox::Selection {
            path: "test_calc.py".into(),
            ..proven_sandbox::Selection::default()
        },
        0,
    );
    let request = RunRequest::new(repo.path(), &commit, Language::Python, run.command)
        .with_file(
            "test_calc.py",
            "from calc import one\n\ndef test_one(pytestconfig):\n    assert one() == 1\n    assert pytestconfig.cache.get('demo/seen', None) == 1\n",
        );
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
}

/// spaCy 2.2's family (BugsInPy spacy-4, never studied before this): its setup.cfg names
/// `spacy_lookups_data>=0.0.5<0.2.0`, which the setuptools and wheel of its date wrote into
/// its metadata and which pip 24.1 and later refuse ("has invalid metadata: Expected
/// matching RIGHT_PARENTHESIS"): the project itself was never installed. It is now
/// installed with the last pip that reads such metadata, and the record says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_whose_metadata_todays_pip_refuses_is_installed_with_the_last_pip_that_reads_it()
{
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools<60\", \"wheel<0.38\"]\nbuild-backend = \"setuptools.build_meta\"\n",
    )
    .write(
        "setup.cfg",
        "[metadata]\nname = legacymeta\nversion = 1.0\n\n[options]\npy_modules = legacymeta\n\n[options.extras_require]\nlookups =\n    lookups_data>=0.0.5<0.2.0\n",
    )
    .write("setup.py", "from setuptools import setup\nsetup()\n")
    .write("legacymeta.py", "VALUE = 42\n");
    let commit = repo.commit("a project of 2020 with a requirement of legacy syntax");
    let show = [
        "python3",
        "-c",
        "import importlib.metadata as m, legacymeta; print('installed', m.version('legacymeta'), legacymeta.VALUE)",
    ];
    let run = sandbox
        .run(&RunRequest::new(repo.path(), &commit, Language::Python, show).as_command())
        .await
        .expect("run");
    let out = support::output(&run);
    let deps = run.dependencies.as_ref().expect("prepared");
    assert_eq!(run.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("installed 1.0 42"), "{out}");
    assert!(
        deps.notes.iter().any(
            |n| n.starts_with("today's pip refuses the project's own metadata")
                && n.contains("with pip 24.0, the last pip that reads it")
        ),
        "{deps:#?}"
    );
}

/// A project whose CI starts PostgreSQL beside its tests (a workflow's `services:` with
/// `image: postgres:16`, its superuser and database in `env:`) finds it on the loopback,
/// made as that container is: its driver (pg8000, from the registry) connects with the
/// user, password and database the workflow gives, and `psql` is on PATH as on a runner.
/// The record says what was started, with what and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_the_projects_ci_starts_runs_beside_its_tests() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", "pg8000==1.31.2\n")
        .write(
            ".github/workflows/test.yml",
            "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    services:\n      postgres:\n        image: postgres:16\n        env:\n          POSTGRES_USER: app\n          POSTGRES_PASSWORD: secret\n          POSTGRES_DB: app_test\n        ports:\n          - 5432:5432\n    steps:\n      - uses: actions/checkout@v4\n      - run: pip install -r requirements.txt && pytest\n",
        )
        .write(
            "store.py",
            "import pg8000.native\n\ndef connect():\n    return pg8000.native.Connection('app', host='127.0.0.1', port=5432, database='app_test', password='secret')\n",
        );
    let commit = repo.commit("a store whose CI starts postgres");
    let test = "import subprocess\n\nfrom store import connect\n\ndef test_rows_round_trip():\n    db = connect()\n    db.run('CREATE TABLE t (n int)')\n    db.run('INSERT INTO t VALUES (41), (1)')\n    assert db.run('SELECT sum(n) FROM t') == [[42]]\n    assert db.run('SELECT current_user, current_database()') == [['app', 'app_test']]\n\ndef test_the_client_is_on_path():\n    out = subprocess.run(['psql', '-h', '127.0.0.1', '-U', 'app', '-d', 'app_test', '-tAc', 'SELECT 1'], capture_output=True, text=True, check=True)\n    assert out.stdout.strip() == '1'\n";
    passes_with_a_service(
        &sandbox,
        &repo,
        &commit,
        ("test_store.py", test),
        "postgresql started on 127.0.0.1:5432 with POSTGRES_USER=app, POSTGRES_DB=app_test before the tests: the project's CI starts it (.github/workflows/test.yml services)",
    )
    .await;
}

/// Runs `test` (its path, its code) added to `repo` at `commit`, asserts it passed and
/// that the record's setup has a line starting with `setup`.
async fn passes_with_a_service(
    sandbox: &proven_sandbox::Sandbox,
    repo: &proven_change::testing::TestRepo,
    commit: &str,
    (path, test): (&str, &str),
    setup: &str,
) {
    let request =
        RunRequest::new(repo.path(), commit, Language::Python, pytest(path)).with_file(path, test);
    let run = sandbox.run(&request).await.expect("run");
    assert_eq!(run.outcome, Outcome::Passed, "{}", support::output(&run));
    assert!(
        run.setup.iter().any(|l| l.starts_with(setup)),
        "{:?}",
        run.setup
    );
}

/// The same for MySQL (a workflow's `image: mysql:8.0`): the server the images carry
/// (MariaDB) is made as the container is, with root's password, the first database and
/// a user granted it, and the project's driver (PyMySQL) connects as each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mysql_the_projects_ci_starts_is_made_as_its_container_is() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", "PyMySQL==1.1.1\n").write(
        ".github/workflows/ci.yml",
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    services:\n      mysql:\n        image: mysql:8.0\n        env:\n          MYSQL_ROOT_PASSWORD: rootpw\n          MYSQL_DATABASE: shop_test\n          MYSQL_USER: shop\n          MYSQL_PASSWORD: shop.pw\n        ports: ['3306:3306']\n    steps:\n      - run: pytest\n",
    );
    let commit = repo.commit("a shop whose CI starts mysql");
    passes_with_a_service(
        &sandbox,
        &repo,
        &commit,
        ("test_shop.py", SHOP_TEST),
        "mysql started on 127.0.0.1:3306 with MYSQL_ROOT_PASSWORD as given, MYSQL_DATABASE=shop_test, MYSQL_USER=shop, MYSQL_PASSWORD as given before the tests",
    )
    .await;
}

/// A shop's tests: its user owns its database, root has its password, and the server
/// speaks TLS and takes packets as MySQL does (go-sql-driver's `tls=skip-verify` and 16 MB
/// tests).
const SHOP_TEST: &str = "import pymysql\n\ndef connect(user, password):\n    return pymysql.connect(host='127.0.0.1', port=3306, user=user, password=password, database='shop_test')\n\ndef test_the_user_owns_its_database():\n    db = connect('shop', 'shop.pw')\n    with db.cursor() as c:\n        c.execute('CREATE TABLE t (n INT)')\n        c.execute('INSERT INTO t VALUES (40), (2)')\n        c.execute('SELECT SUM(n) FROM t')\n        assert c.fetchone()[0] == 42\n\ndef test_root_has_its_password():\n    with connect('root', 'rootpw').cursor() as c:\n        c.execute('SELECT DATABASE()')\n        assert c.fetchone()[0] == 'shop_test'\n\n\ndef test_the_server_speaks_tls_and_takes_64_mb_as_mysql_does():\n    import ssl\n    context = ssl.create_default_context()\n    context.check_hostname = False\n    context.verify_mode = ssl.CERT_NONE\n    db = pymysql.connect(host='127.0.0.1', port=3306, user='shop', password='shop.pw', database='shop_test', ssl=context)\n    with db.cursor() as c:\n        c.execute(\"SHOW STATUS LIKE 'Ssl_cipher'\")\n        assert c.fetchone()[1]\n        c.execute('SELECT @@max_allowed_packet')\n        assert c.fetchone()[0] == 64 * 1024 * 1024\n";

/// The same server started by a step rather than a container: the setup action's user and
/// root's password from the workflow's `env:`, and the tests' database made by a later
/// step of the job (`mysql -e 'create database …'`), as go-sql-driver's CI does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mysql_a_setup_step_starts_is_made_as_the_step_makes_it() {
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let repo = proven_change::testing::TestRepo::new();
    repo.write("requirements.txt", "PyMySQL==1.1.1\n").write(
        ".github/workflows/ci.yml",
        "on: [push]\nenv:\n  DB_USER: shop\n  DB_PASS: shop.pw\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: shogo82148/actions-setup-mysql@v1\n        with:\n          mysql-version: '8.0'\n          root-password: rootpw\n          user: ${{ env.DB_USER }}\n          password: ${{ env.DB_PASS }}\n      - name: setup database\n        run: mysql --user root --password=rootpw --host 127.0.0.1 -e 'create database shop_test;'\n      - run: pytest\n",
    );
    let commit = repo.commit("a shop whose CI starts mysql in a step");
    passes_with_a_service(
        &sandbox,
        &repo,
        &commit,
        ("test_shop.py", SHOP_TEST),
        "mysql started on 127.0.0.1:3306 with MYSQL_ROOT_PASSWORD as given, MYSQL_USER=shop, MYSQL_PASSWORD as given, MYSQL_DATABASE=shop_test before the tests: the project's CI starts it (.github/workflows/ci.yml job test step shogo82148/actions-setup-mysql)",
    )
    .await;
}

/// A suite whose tests leave a thread (or a child) running prints its summary and never
/// ends: luigi's ran 1,313 tests in 181 s, then waited on its children until the timeout
/// killed it, and a suite killed at its timeout proves nothing. Once the runner's last
/// words end the output and the process is still there a while after, it is stopped and
/// the summary is the outcome: pytest's that passed, unittest's that failed, by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_lingers_after_its_runners_summary_is_judged_by_the_summary() {
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.output.quiet_after_summary_ms = 2_000;
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    let lingers = "import threading\nimport time\n\nthreading.Thread(target=time.sleep, args=(10 ** 6,)).start()\n";
    repo.write(
        "test_lingers.py",
        format!("{lingers}\n\ndef test_one():\n    assert 1 + 1 == 2\n"),
    )
    .write(
        "test_lingers_unittest.py",
        format!(
            "{lingers}import unittest\n\n\nclass T(unittest.TestCase):\n    def test_two(self):\n        self.assertEqual(1 + 1, 3)\n\n\nif __name__ == '__main__':\n    unittest.main()\n"
        ),
    );
    let commit = repo.commit("tests that leave a thread running");
    for (command, outcome, exit) in [
        (pytest("test_lingers.py"), Outcome::Passed, 0),
        (
            vec![
                "python3".to_string(),
                "test_lingers_unittest.py".to_string(),
            ],
            Outcome::TestFailed,
            1,
        ),
    ] {
        let request = RunRequest::new(repo.path(), &commit, Language::Python, command)
            .with_timeout(Duration::from_secs(90));
        let run = sandbox.run(&request).await.expect("run");
        let out = support::output(&run);
        assert_eq!(run.outcome, outcome, "{out}\n{:?}", run.setup);
        assert_eq!(run.exit_code, Some(exit), "{out}");
        assert!(!run.timed_out && run.killed.is_none(), "{run:#?}");
        assert!(
            run.duration_ms < 60_000,
            "stopped soon after the summary, not at the timeout: {} ms",
            run.duration_ms
        );
        assert!(
            run.setup
                .iter()
                .any(|l| l.contains("printed its summary and its process had not ended 2 s later")),
            "{:?}",
            run.setup
        );
    }
}

/// A build that goes on where an earlier one stopped finds what that one wrote in the order
/// it wrote it: pandas' build renders `.pxi` files from templates, then Cython writes each
/// `.c` from the `.pyx` that includes them, and remakes a `.c` older than what it includes.
/// Put back in the order of their names, the `.pxi` files came out newer than the `.c`
/// files, every `.c` was made again, and each preparation stopped at the same place. Here
/// each module is made from a dependency written first (`zdep_*.txt`, a name after the
/// module's) and made again when it is older than that dependency, 20 s each, against 70 s
/// of preparation time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_build_that_goes_on_finds_its_files_in_the_order_it_wrote_them() {
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.prepare_timeout = Duration::from_secs(70);
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nimport os\nimport sys\nimport time\nfrom setuptools import setup\n\n\
             here = os.path.dirname(os.path.abspath(__file__))\n\
             # What reads the declarations only (egg_info) builds nothing.\n\
             for name in ('one', 'two', 'three') if sys.argv[1:2] != ['egg_info'] else ():\n\
             \x20   dep = os.path.join(here, 'zdep_%s.txt' % name)\n\
             \x20   if not os.path.exists(dep):\n\
             \x20       with open(dep, 'w') as f:\n\
             \x20           f.write(name)\n\
             \x20   path = os.path.join(here, 'gen_%s.py' % name)\n\
             \x20   if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(dep):\n\
             \x20       time.sleep(20)\n\
             \x20       with open(path + '.part', 'w') as f:\n\
             \x20           f.write('VALUE = %r\\n' % name)\n\
             \x20       os.rename(path + '.part', path)\n\n\
             setup(name='slowbuild', version='0.1', py_modules=['slowbuild', 'gen_one', 'gen_two', 'gen_three'])\n"
        ),
    )
    .write(
        "slowbuild.py",
        "import gen_one, gen_two, gen_three\n\nBUILT = [gen_one.VALUE, gen_two.VALUE, gen_three.VALUE]\n",
    );
    let commit = repo.commit("a project whose build makes each module from a dependency");
    let show = [
        "python3",
        "-c",
        "import slowbuild; print('built', slowbuild.BUILT)",
    ];
    let request = RunRequest::new(repo.path(), &commit, Language::Python, show)
        .as_command()
        .with_timeout(Duration::from_secs(60));
    // The preparations follow one another before the run: the first run is of the whole
    // build, made in more than one of them.
    let first = sandbox.run(&request).await.expect("run");
    let out = support::output(&first);
    let deps = first.dependencies.as_ref().expect("prepared");
    assert_eq!(first.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("built ['one', 'two', 'three']"), "{out}");
    assert!(
        deps.notes.iter().any(
            |n| n.contains("the project's build outlasted a preparation's time: it went on in")
        ),
        "{:?}",
        deps.notes
    );
}

/// A project whose own build outlasts the preparation's time (spaCy's dozens of Cython
/// modules on a busy machine) was never built: each preparation began again and was cut
/// short at the same place. What a preparation of the same tree built before its time ran
/// out is kept in its incomplete layer, and the next preparation goes on from there, at
/// once, before the run (spacy-10's base ran on a half-built spaCy: `No module named
/// 'spacy.symbols'`). Here the build generates three modules, each taking 20 s (as
/// cythonize writes a .c file and skips the ones present), against 70 s of preparation
/// time: the first run is of the whole build.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_build_longer_than_the_preparations_time_goes_on_where_it_stopped() {
    let sandbox = support::sandbox(&[Language::Python], |c| {
        c.prepare_timeout = Duration::from_secs(70);
    })
    .await;
    let repo = proven_change::testing::TestRepo::new();
    let marker = support::unique();
    repo.write(
        "setup.py",
        format!(
            "# {marker}\nimport os\nimport sys\nimport time\nfrom setuptools import setup\n\nhere = os.path.dirname(os.path.abspath(__file__))\n# What reads the declarations only (egg_info) builds nothing.\nfor name in ('one', 'two', 'three') if sys.argv[1:2] != ['egg_info'] else ():\n    path = os.path.join(here, 'gen_%s.py' % name)\n    if not os.path.exists(path):\n        time.sleep(20)\n        with open(path + '.part', 'w') as f:\n            f.write('VALUE = %r\\n' % name)\n        os.rename(path + '.part', path)\n\nsetup(name='slowbuild', version='0.1', py_modules=['slowbuild', 'gen_one', 'gen_two', 'gen_three'])\n"
        ),
    )
    .write(
        "slowbuild.py",
        "import gen_one, gen_two, gen_three\n\nBUILT = [gen_one.VALUE, gen_two.VALUE, gen_three.VALUE]\n",
    );
    let commit = repo.commit("a project whose build takes 60 s");
    let show = [
        "python3",
        "-c",
        "import slowbuild; print('built', slowbuild.BUILT)",
    ];
    let request = RunRequest::new(repo.path(), &commit, Language::Python, show)
        .as_command()
        .with_timeout(Duration::from_secs(60));
    let first = sandbox.run(&request).await.expect("run");
    let out = support::output(&first);
    let deps = first.dependencies.as_ref().expect("prepared");
    assert_eq!(first.outcome, Outcome::Passed, "{out}\n{deps:#?}");
    assert!(out.contains("built ['one', 'two', 'three']"), "{out}");
    assert!(
        deps.notes
            .iter()
            .any(|n| n
                .contains("the build went on from what an earlier preparation of this tree built")),
        "{:?}",
        deps.notes
    );
    assert!(
        deps.notes.iter().any(|n| n.contains(
            "the project's build outlasted a preparation's time: it went on in 2 preparations in a row"
        )),
        "{:?}",
        deps.notes
    );
}

/// A CI runner's Python makes virtual environments with pip in them (`python -m venv` runs
/// ensurepip): tests that make one of their own (anyio's `test_sourceless_install`, tox's,
/// virtualenv's) ran in the sandbox alone without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_makes_a_virtual_environment_with_pip_as_on_a_ci_runner() {
    const VENV: &str = "import subprocess\nimport sys\n\n\ndef test_a_venv_has_pip(tmp_path):\n    subprocess.run([sys.executable, \"-m\", \"venv\", str(tmp_path / \"v\")], check=True)\n    out = subprocess.run([str(tmp_path / \"v\" / \"bin\" / \"python\"), \"-m\", \"pip\", \"--version\"], capture_output=True, text=True, check=True)\n    assert out.stdout.startswith(\"pip \"), out.stdout\n";
    let sandbox = support::sandbox(&[Language::Python], |_| {}).await;
    let project = python_project();
    let request = RunRequest::new(
        project.repo.path(),
        &project.base,
        Language::Python,
        pytest("tests/test_venv.py"),
    )
    .with_file("tests/test_venv.py", VENV);
    let record = sandbox.run(&request).await.expect("run");
    assert_eq!(
        record.outcome,
        Outcome::Passed,
        "{}",
        support::output(&record)
    );
}
