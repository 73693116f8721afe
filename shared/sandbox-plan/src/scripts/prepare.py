# Proven: prepares a Python project's test environment inside a preparation container.
#
# Runs as the sandbox user with no secrets and no host configuration; the only way out is
# the runner's egress proxy (the operator's registries). The project's tree is a copy in
# /work. Two stages, so that no code of the tree runs where a cached layer is made:
# - the environment (cached by the declarations): /deps/venv, a virtual environment over
#   the image's Python (its system site-packages, pytest among them, stay visible) holding
#   every requirement that could be had, and a hook that adds the project layer of the
#   run's own tree; /deps/report.json, what was installed, what could not be and why;
# - the project layer (plan "stage": "project", made per tree, the environment mounted
#   read-only): the project itself as an editable install into /proj, pointing at /work,
#   where each run's tree is; /proj/report.json.
#
# The plan (/prep/plan.json) comes from Proven, which read the project's declaration files
# without running them and refused what fetches or builds from elsewhere; what setup.py
# declares was read in an inspection container of its own (inspect-setup.py).
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

PLAN = json.load(open(sys.argv[1]))
DEPS = "/deps"
VENV = DEPS + "/venv"
WORK = "/work"
PY = VENV + "/bin/python"
REPORT = {
    "python": "%d.%d.%d" % sys.version_info[:3],
    "installed": [],
    "not_prepared": [],
    "refused": [],
    "project": None,
    "notes": [],
    "setup_py": None,
}
TEST_NAMES = set(PLAN.get("test_names", []))
# The whole preparation's time: the runner kills the container when it is over, and a
# killed preparation leaves nothing (no report, no layer). So every install is bounded by
# what is left of it, a RESERVE is kept for what follows the installs (the list of what is
# installed, compiling, the report), and a requirement the time did not reach is named,
# never lost with the rest: the environment holds what could be installed in time, and is
# marked incomplete (used for its run, never cached: the next run prepares it again).
BUDGET = PLAN.get("call_timeout", 900)
RESERVE = min(120, max(20, BUDGET // 8))
START = time.monotonic()
OUT_OF_TIME = "the preparation's time (%d s, sandbox.prepare_timeout_seconds) ran out" % BUDGET

# C and C++ extensions (the project's own and those of every sdist a requirement builds)
# are compiled at -O1 without debug information. Python's own flags (-O3 -g) made pandas'
# Cython modules outlast three preparations; at -O1 -g0 its groupby.c compiles in a sixth of
# the time (17 s against 100 s). The behaviour the C standard defines is the same at every
# level (no -ffast-math: the same floating point), and so is what the tests see; a
# project's own extra_compile_args come after these on the command line and still win.
# The variables hold Python's own flags but its -O and -g: the distutils of setuptools 60
# and later put $CFLAGS in place of Python's (-DNDEBUG and -fwrapv would be lost, and with
# them the asserts left out and the signed arithmetic the code was written for), the older
# ones after them.
COMPILE_FLAGS = "-O1 -g0"


def compile_flags():
    import sysconfig
    own = (sysconfig.get_config_var("CFLAGS") or "").split()
    kept = [w for w in own if not (w.startswith("-O") or w.startswith("-g"))]
    return " ".join(kept + (os.environ.get("CFLAGS") or "").split() + COMPILE_FLAGS.split())


os.environ["CFLAGS"] = os.environ["CXXFLAGS"] = compile_flags()
# Whether anything was compiled: the record then says how.
COMPILED = False


def compiled_note():
    if COMPILED:
        REPORT["notes"].append("what was built from source was built with CFLAGS and CXXFLAGS %s: its C and C++ compile in a sixth of -O3 -g's time, with the same behaviour"
                               % COMPILE_FLAGS)


def tail(text, lines=6):
    out = [l for l in text.strip().splitlines() if l.strip()]
    return "\n".join(out[-lines:])


# pip's lines that say where a reason is, never what it is (matched inside a line: pip's box
# drawing is not ASCII, and a Python without a UTF-8 locale reads it as replacement marks).
NOISE = ("ERROR: Exception:", "Traceback (most recent call last)", "subprocess-exited-with-error",
         "This error originates from a subprocess", "See above for output", "exit code:",
         "lines of output]", "[end of output]", "hint:", "[notice]", "WARNING:", "DEPRECATION:")


# A C or C++ compiler's error line: `x.c:3:10: fatal error: y.h: No such file or directory`,
# `gcc: fatal error: cannot execute 'cc1plus'`, `x.cpp:9:5: error: 'f' was not declared`.
# (setuptools' own `error: command 'gcc' failed` starts its line: it is no diagnosis.)
COMPILER_ERROR = re.compile(r": (fatal error|error): ")


def meaningful(line):
    l = line.strip()
    return (bool(l) and not any(n in l for n in NOISE) and not l.startswith("File \"")
            and l.strip("^~ ") != "")


def why(text):
    """pip's own reason, from the last meaningful lines of its output: what a failed build
    printed last (inside pip's `[N lines of output] ... [end of output]` box) after pip's
    headline, the exception of pip's own traceback (after `ERROR: Exception:`), else its
    last ERROR lines, else the output's last lines. Never a bare "ERROR: Exception:".
    A call the preparation's time cut short (or never reached) says so."""
    lines = text.splitlines()
    timed = [l.strip() for l in lines if OUT_OF_TIME in l]
    if timed:
        return timed[-1]
    box_end = [i for i, l in enumerate(lines) if l.strip() == "[end of output]"]
    if box_end:
        before = lines[:box_end[-1]]
        said = [l.strip() for l in before if meaningful(l)]
        headline = [l.strip().lstrip("\u00d7\ufffd ") for l in before if "did not run successfully" in l]
        # A compiler's first diagnosis says what the build's last line ("command 'gcc'
        # failed") does not: a missing header, a missing C++ compiler, an API the Python lacks.
        compiler = [l for l in said if COMPILER_ERROR.search(l)]
        return " ".join(headline[-1:] + compiler[:1] + [l for l in said[-1:] if l not in compiler[:1]])
    crash = [i for i, l in enumerate(lines) if l.strip() == "ERROR: Exception:"]
    if crash:
        after = [l.strip() for l in lines[crash[-1] + 1:] if meaningful(l)]
        if after:
            return "pip failed: " + after[-1]
    errors = [l.strip() for l in lines if l.strip().startswith("ERROR:") and meaningful(l)]
    if errors:
        return " ".join(errors[-2:])
    return " ".join([l.strip() for l in lines if meaningful(l)][-2:]) or tail(text, 2)


def left():
    """Seconds left for installs: the budget less the time spent and the reserve."""
    return BUDGET - RESERVE - (time.monotonic() - START)


def run(cmd, timeout=None, cwd=WORK, env=None, share=1.0, within=None):
    """Runs a command, its output merged. An install (no `timeout`) gets `share` of the time
    left before the reserve, so that one build that hangs cannot take the time of every
    requirement after it; a bounded step (`timeout` given: a list, a version check) may use
    the reserve. `within` bounds an install in seconds instead of a share. A command the
    time does not reach is not run: 124, with the reason."""
    if timeout is None:
        timeout = left() * share if within is None else min(within, left())
    else:
        timeout = min(timeout, left() + RESERVE)
    if timeout < 1:
        REPORT["incomplete"] = OUT_OF_TIME
        return 124, "not tried: " + OUT_OF_TIME
    # In a session of its own, so that its time running out ends everything it started: pip
    # killed alone left its build (a compiler on lxml's etree.c) running, the next attempt
    # compiled the same sources beside it, and three compilers at once filled the
    # preparation's memory (scrapy-14: killed, out of memory, with nothing kept).
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, errors="replace", start_new_session=True,
                         env=dict(os.environ, **env) if env else None)
    try:
        out, _ = p.communicate(timeout=timeout)
        result = p.returncode, out
    except subprocess.TimeoutExpired as e:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            # Everything it printed (communicate keeps what it read before the timeout).
            said, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            # A process that left the session still holds the output open.
            p.stdout.close()
            said = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        said = said or ""
        REPORT["incomplete"] = OUT_OF_TIME
        global CUT_SHORT
        CUT_SHORT = said
        result = 124, "%s\ntimed out after %d s, its share of what was left: %s" % (said[-2000:], timeout, OUT_OF_TIME)
    if cmd[:3] == [PY, "-m", "pip"]:
        keep_own_pip()
    if "Building wheel for" in result[1] or "Running setup.py install for" in result[1]:
        global COMPILED
        COMPILED = True
    return result


def keep_own_pip():
    """A requirement that depends on pip (old pypandoc's install_requires names it) puts the
    pip of its date into the environment, and every later call would run that pip (no
    manylinux2010 wheels, the old resolver): it is removed, so the image's own pip, seen
    through the system site-packages, stays the one that runs."""
    import glob
    import shutil
    found = []
    for lib in glob.glob(VENV + "/lib/python*/site-packages"):
        for name in os.listdir(lib):
            if name == "pip" or (name.startswith("pip-") and name.endswith((".dist-info", ".egg-info"))):
                found.append(name)
                shutil.rmtree(os.path.join(lib, name), ignore_errors=True)
    for script in glob.glob(VENV + "/bin/pip*"):
        try:
            os.remove(script)
        except OSError:
            pass
    versions = [n[4:].split(".dist-info")[0].split(".egg-info")[0] for n in found if n.startswith("pip-")]
    if versions and not any("pip " in n for n in REPORT["notes"]):
        REPORT["notes"].append("pip %s came with a requirement; the sandbox's own pip was kept" % versions[0])


# Requirements that could build or fetch from elsewhere are refused here too (setup.py's
# own lists were never seen by Proven).
REFUSE = [
    (re.compile(r"://|^git\+|\s@\s|@\s*(https?|file|git)"), "a direct URL or VCS requirement fetches from elsewhere"),
    (re.compile(r"^[./~]|\\"), "a local path builds code outside the registry"),
    (re.compile(r"^-"), "a pip option is not a requirement"),
]


def refused(spec):
    for pattern, reason in REFUSE:
        if pattern.search(spec):
            return reason
    if not re.match(r"^[A-Za-z0-9]", spec):
        return "not a requirement"
    return None


SKIPPED_DIRS = {".git", "__pycache__", "build", "dist", ".eggs", ".tox", "node_modules"}


def tree_files(root):
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        for name in filenames:
            found.add(os.path.relpath(os.path.join(dirpath, name), root))
    return found


# Where the project layer keeps what the build wrote inside the tree's packages, at its
# path in the tree; the runner puts each file at that place in the run's copy of the tree.
BUILT_IN_TREE = "built-in-tree"


def keep_generated_modules(before, site):
    """A build that writes a module into the tree (setuptools_scm's write_to, e.g. black's
    _black_version.py) wrote it into this copy only: each run gets a fresh copy of the tree.
    A new top-level module (at the root, or under src/) is kept in the environment: Python
    source, or an extension module the build compiled in place (an editable install builds a
    C extension into the tree, `name.cpython-311-x86_64-linux-gnu.so`): into the project
    layer's `site` directories. One inside a package (pandas' `pandas/_libs/lib.cpython-38-
    x86_64-linux-gnu.so`, spaCy's Cython modules, a `pkg/_version.py`) must be where its
    package is imported from, the run's tree: kept under BUILT_IN_TREE at its path there."""
    nested = []
    for rel in sorted(tree_files(WORK) - before):
        parts = rel.split(os.sep)
        if not parts[-1].endswith((".py", ".so")):
            continue
        top = parts[1:] if parts[0] == "src" and len(parts) == 2 else parts
        if len(top) == 1:
            for directory in site:
                shutil.copyfile(os.path.join(WORK, rel), os.path.join(directory, top[0]))
            REPORT["notes"].append("the project's build wrote %s into the tree: kept in the environment" % rel)
            continue
        into = os.path.join(PROJECT, BUILT_IN_TREE, rel)
        os.makedirs(os.path.dirname(into), exist_ok=True)
        shutil.copyfile(os.path.join(WORK, rel), into)
        nested.append(rel)
    if nested:
        REPORT["notes"].append("the project's build wrote %d modules inside its packages (%s%s): put in each run's tree"
                               % (len(nested), ", ".join(nested[:3]), ", ..." if len(nested) > 3 else ""))


def runner_on_path_is_the_environments():
    """`pytest` on PATH runs this environment's interpreter. Where the project does not
    install pytest itself, the image's own `pytest` (a launcher of the image's interpreter,
    later on PATH) would run the tests outside this environment, without a requirement
    installed here: a launcher of the environment's interpreter comes first instead (the
    image's pytest is still the one it imports, through the system site-packages)."""
    for name in ("pytest", "py.test"):
        path = os.path.join(VENV, "bin", name)
        if os.path.lexists(path):
            continue
        with open(path, "w") as f:
            f.write('#!/bin/sh\nexec %s -m pytest "$@"\n' % PY)
        os.chmod(path, 0o755)


def dated_runner_or_the_images():
    """Resolved as of a date, the project's own pytest is that date's (--ignore-installed):
    where it does not start on this Python (pytest 3 on Python 3.10), it is removed from the
    environment, so the image's own pytest runs the tests."""
    code, out = run([PY, "-m", "pytest", "--version"], timeout=120, cwd="/tmp")
    if code == 0:
        return
    site = [os.path.join(VENV, "lib", p, "site-packages") for p in os.listdir(VENV + "/lib") if p.startswith("python")]
    if not any(os.path.isdir(os.path.join(p, "_pytest")) for p in site):
        return
    run([PY, "-m", "pip", "uninstall", "-y", "--disable-pip-version-check", "pytest"], timeout=120)
    REPORT["notes"].append("the pytest of %s does not start on Python %s (%s): the image's pytest runs the tests"
                           % (RESOLVE_BEFORE, REPORT["python"], why(out)))


def runner_beside_pins(pip):
    """The image's pytest imports its own dependencies (pluggy, typing_extensions, ...) from
    the environment, where the project's pins shadow them: when it no longer starts, pytest
    is installed into the environment, resolved with what is installed there as constraints
    (the project's pins stay), else as it comes."""
    code, out = run([PY, "-m", "pytest", "--version"], timeout=120, cwd="/tmp")
    if code == 0:
        return
    broken = why(out)
    site = [os.path.join(VENV, "lib", p, "site-packages") for p in os.listdir(VENV + "/lib") if p.startswith("python")]
    code, frozen = run([PY, "-m", "pip", "list", "--format", "freeze", "--disable-pip-version-check"]
                       + sum([["--path", p] for p in site], []), timeout=120)
    pins = [l for l in frozen.splitlines() if "==" in l and not l.lower().startswith(("pytest==", "-e"))] if code == 0 else []
    with open("/tmp/proven-installed.txt", "w") as f:
        f.write("\n".join(pins) + "\n")
    code, out = run(pip + ["-c", "/tmp/proven-installed.txt", "pytest"])
    how = "resolved with the environment's versions"
    if code != 0:
        code, out = run(pip + ["pytest"])
        how = "as it comes (it does not resolve with the environment's versions: %s)" % why(out)
    check, after = run([PY, "-m", "pytest", "--version"], timeout=120, cwd="/tmp")
    version = tail(after, 1) if check == 0 else "none that starts"
    REPORT["notes"].append("the image's pytest does not start beside the project's pins (%s): %s installed in the environment, %s"
                           % (broken, version, how))


# Resolving as of a date (PLAN["resolve_before"], when no lock file pins the versions): a
# project's unpinned requirements get the releases that existed then, not today's. pip has
# no such option before 25.3 (older Pythons' pips never will), so pip is pointed at a small
# index served here, on the container's loopback: each project page is read from the real
# index (PEP 691 JSON, through the egress proxy like any other request) and served as a
# PEP 503 page holding only the files uploaded before the date (PEP 700 upload-time), with
# their hashes and Requires-Python. Files themselves come from the real host.
RESOLVE_BEFORE = PLAN.get("resolve_before")
# The day each CPython minor came out. Nothing released before the interpreter that runs it
# was made for it (mock 1.0.1 of 2012 breaks on 3.6 with "Call constructor takes either 0
# or 3 positional arguments"), so a project older than the image's Python resolves as of
# that Python's release instead, the nearest state of its requirements that runs here.
PYTHON_RELEASED = {
    (3, 6): "2016-12-23T00:00:00Z", (3, 7): "2018-06-27T00:00:00Z",
    (3, 8): "2019-10-14T00:00:00Z", (3, 9): "2020-10-05T00:00:00Z",
    (3, 10): "2021-10-04T00:00:00Z", (3, 11): "2022-10-24T00:00:00Z",
    (3, 12): "2023-10-02T00:00:00Z", (3, 13): "2024-10-07T00:00:00Z",
    (3, 14): "2025-10-07T00:00:00Z",
}
RESOLVE_ASKED = RESOLVE_BEFORE
_released = PYTHON_RELEASED.get(tuple(sys.version_info[:2]))
if RESOLVE_BEFORE and _released and RESOLVE_BEFORE < _released:
    RESOLVE_BEFORE = _released
UPSTREAM = (PLAN.get("index_url") or "https://pypi.org/simple/").rstrip("/") + "/"


# Project pages read from the real index (PEP 691 JSON), by normalised name: each is read
# once, whatever dates it is served as of.
PAGES = {}


def upstream_page(name):
    """A project's page on the real index: (the page, None), or (None, an HTTP status)."""
    import urllib.request
    if name in PAGES:
        return PAGES[name], None
    request = urllib.request.Request(UPSTREAM + name + "/", headers={
        "Accept": "application/vnd.pypi.simple.v1+json"})
    for attempt in range(4):
        try:
            if left() < 1:
                break
            with urllib.request.urlopen(request, timeout=max(1, min(120, left()))) as r:
                PAGES[name] = json.loads(r.read().decode("utf-8"))
                return PAGES[name], None
        except Exception as e:
            code = getattr(e, "code", None)
            if isinstance(code, int) and 400 <= code < 500:
                return None, code
            # A connection that failed on the way (the proxy, the network): again.
            time.sleep(1 + attempt)
    return None, 502


def start_dated_index(before):
    """The dated index, on the loopback: `/simple/NAME/` as of `before`, and
    `/at/INSTANT/simple/NAME/` as of a later instant (a requirement that does not install
    as of the date is resolved, with its dependencies, as of the nearest instant it does).
    Returns the address of `/simple/`."""
    import html
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Index(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            parts = [p for p in self.path.split("?")[0].split("/") if p]
            as_of = before
            if len(parts) == 4 and parts[0] == "at":
                as_of = parts[1]
                parts = parts[2:]
            if len(parts) != 2 or parts[0] != "simple":
                self.send_error(404)
                return
            name = parts[1]
            # A project none of whose releases of the date builds here is served as of its
            # first wheel for this Python (`served_from_first_wheel`).
            as_of = max(as_of, SERVED_AS_OF.get(req_name(name), as_of))
            page, status = upstream_page(name)
            if page is None:
                self.send_error(status)
                return
            self.serve(name, page, as_of)

        def serve(self, name, page, before):
            files = page.get("files", [])
            dated = [f for f in files if f.get("upload-time") and f["upload-time"][:19] <= before[:19]]
            if files and not dated:
                # Every file came after the date: the project's history was uploaded again
                # (atomicwrites' files all date from its 2022 re-upload, though 1.0 came out
                # in 2016). Its upload times say nothing of what existed then, so the whole
                # project is served rather than none of it, and the report says so.
                dated = files
                note = "%s: every file on the index was uploaded after %s (the project was uploaded again); its versions are not held to the date" % (name, before[:10])
                if note not in REPORT["notes"]:
                    REPORT["notes"].append(note)
            links = []
            for f in dated:
                url = f["url"]
                sha = (f.get("hashes") or {}).get("sha256")
                if sha:
                    url += "#sha256=" + sha
                attrs = ' href="%s"' % html.escape(url)
                if f.get("requires-python"):
                    attrs += ' data-requires-python="%s"' % html.escape(f["requires-python"])
                if f.get("yanked"):
                    attrs += ' data-yanked=""'
                links.append("<a%s>%s</a><br/>" % (attrs, html.escape(f["filename"])))
            body = ("<!DOCTYPE html><html><body>%s</body></html>" % "\n".join(links)).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = HTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever)
    thread.daemon = True
    thread.start()
    return "http://127.0.0.1:%d/simple/" % server.server_address[1]


# The whole output of the last command the time cut short (its result keeps only the end).
CUT_SHORT = ""

# Projects the dated index serves as of a later instant than the date: normalised name ->
# instant (`served_from_first_wheel`).
SERVED_AS_OF = {}
# The project pip was building when it failed: its own words (every pip since 9), a legacy
# install's, and its build folder (`/tmp/pip-install-X/NAME_<hex>/`, `/tmp/pip-build-X/NAME/`)
# in "Command errored out" and "egg_info failed" lines.
FAILED_BUILD = re.compile(
    r"(?:Failed building wheel for ([A-Za-z0-9][A-Za-z0-9._-]*)"
    r"|Running setup\.py install for ([A-Za-z0-9][A-Za-z0-9._-]*) \.\.\. error"
    r"|/pip-install-[^/\s]+/([A-Za-z0-9][A-Za-z0-9._-]*?)_[0-9a-f]{32}/"
    r"|/pip-build-[^/\s]+/([A-Za-z0-9][A-Za-z0-9._-]*)/)")


def wheel_tags():
    """The wheel tags this Python installs (pip's own list), None when pip's copy of
    `packaging` is not there to say."""
    try:
        from pip._vendor.packaging.tags import sys_tags
    except Exception:
        return None
    return set(str(t) for t in sys_tags())


def installs_here(filename, tags):
    """Whether a wheel's file name carries a tag this Python installs."""
    parts = filename[:-len(".whl")].split("-")
    if len(parts) < 5:
        return False
    pys, abis, plats = parts[-3].split("."), parts[-2].split("."), parts[-1].split(".")
    return any("%s-%s-%s" % (py, abi, plat) in tags for py in pys for abi in abis for plat in plats)


def first_wheel_after(name, before):
    """The instant the first wheel of `name` this Python installs was uploaded after
    `before` (`YYYY-MM-DDTHH:MM:SSZ`), None when there is none."""
    page, _ = upstream_page(name)
    tags = wheel_tags()
    if not page or not tags:
        return None
    times = [f["upload-time"][:19] + "Z" for f in page.get("files", [])
             if f.get("upload-time") and f["upload-time"][:19] > before[:19] and not f.get("yanked")
             and f.get("filename", "").endswith(".whl") and installs_here(f["filename"], tags)]
    return min(times) if times else None


def serve_as_of(name, instant, pip, why):
    """Serves `name` as of `instant`, with what it needs as of then: it is installed here as
    of that instant (its wheel), and every project that install brought or changed is served
    as of the instant too, so that the install together finds them (cryptography 2.0 needs
    an asn1crypto that did not exist on scrapy's date). Said in the notes."""
    SERVED_AS_OF[name] = instant
    before = environment_versions()
    dated = [at_index(instant) if a == INDEX else a for a in pip if a != "--ignore-installed"]
    run(dated + ["--only-binary", name, name], within=max(1.0, min(300.0, left() / 3)))
    after = environment_versions()
    brought = sorted(n for n in after if n != name and before.get(n, (None, None))[1] != after[n][1])
    for n in brought:
        SERVED_AS_OF.setdefault(n, instant)
    REPORT["notes"].append(
        "%s: its release of %s %s here; served as of %s, when its first wheel for this Python "
        "was uploaded, %s (what needs it kept the date)"
        % (name, RESOLVE_BEFORE[:10], why, instant,
           "with what it needs as of then (%s)" % ", ".join(brought) if brought else "alone"))


# Words of a build the machine stopped, not the release: a full disk, a compiler killed for
# memory. Such a failure says nothing of the release, and what it would choose must never
# reach a cached environment.
MACHINE_STOPPED = ("No space left on device", "Cannot allocate memory", "MemoryError",
                   "Killed signal terminated program", "killed by signal", "signal 9")


def failed_builds(out):
    """The projects pip names as failing to build in `out`, normalised, each once; none when
    the output shows the machine stopped the build (`MACHINE_STOPPED`)."""
    if any(words in out for words in MACHINE_STOPPED):
        return []
    names = []
    for m in FAILED_BUILD.finditer(out):
        name = req_name(next(g for g in m.groups() if g))
        if name and name not in names:
            names.append(name)
    return names


def served_from_first_wheel(out, pip):
    """A dependency whose release of the date does not build here (cryptography 1.7's
    sdist against the image's OpenSSL 3; a C extension of before this Python) fails the
    install of everything that needs it, and every later attempt builds it again until the
    preparation's time runs out (scrapy of 2016: nothing of Twisted, pyOpenSSL or lxml
    installed). The dated index serves each project pip names as failing to build as of
    the first upload of a wheel for this Python after the date, the nearest release that
    installs here (`serve_as_of`); what needs it keeps the date. True when it serves one
    more so."""
    served = False
    for name in failed_builds(out):
        if name in SERVED_AS_OF:
            continue
        instant = first_wheel_after(name, RESOLVE_BEFORE)
        if not instant:
            continue
        serve_as_of(name, instant, pip, "did not build")
        served = True
    return served

MAX_DROPPED = 10
NOT_SERVED = re.compile(r"(?:No matching distribution found for|Could not find a version that satisfies the requirement) ([^\s(]+)")


def req_name(spec):
    """A requirement's project name, normalised (PEP 503)."""
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else ""


def unavailable(out, wanted):
    """The wanted (spec, source) pip says it cannot find, if it names one of them."""
    for m in NOT_SERVED.finditer(out):
        name = req_name(m.group(1))
        for item in wanted:
            if req_name(item[0]) == name:
                return item
    return None


BUILDING = re.compile(r"^\s*Building wheel for (\S+) \(.*\): (started|finished)")
COLLECTING = re.compile(r"^\s*Collecting ([A-Za-z0-9][A-Za-z0-9._-]*)(.*)$")
EXTRA_SOURCE = re.compile(r"(?:extras_require|requires-extra|optional-dependencies)\.([A-Za-z0-9_.-]+)")


def secondary(source):
    """A requirement of an extra not for tests (documentation, development, `all`): the
    tests need it least."""
    m = EXTRA_SOURCE.search(source)
    if not m:
        return False
    name = m.group(1).split(":")[0].lower()
    return not (name in TEST_NAMES or name.startswith("test"))


def being_built(out):
    """What pip was building when `out` ends (a release's wheel, else the metadata of the
    last release it collected), normalised, and the wanted requirement that brought each
    release in (pip 23.1 and later name it: `Collecting X (from A->-r FILE (line N))`)."""
    building, collecting, parents = None, None, {}
    for line in out.splitlines():
        m = BUILDING.match(line)
        if m:
            building = m.group(1) if m.group(2) == "started" else None
            continue
        m = COLLECTING.match(line)
        if m:
            collecting = req_name(m.group(1))
            chain = re.search(r"\(from (.*)\)\s*$", m.group(2))
            if chain:
                links = [l.strip() for l in chain.group(1).split("->")]
                top = [l for l in links if not l.startswith(("-r ", "-c ", "-e "))]
                if top:
                    parents[collecting] = req_name(top[-1])
    return (req_name(building) if building else collecting), parents


def stuck_on(out, wanted):
    """When installing `wanted` together ran out of time: what pip was building
    (`being_built`), and the wanted requirements to set aside so that the rest install
    together: the one it was building, or the one that brought it in; else, of a
    dependency pip does not trace, the requirements of extras not for tests. None when
    nothing can be set aside."""
    name, parents = being_built(out)
    if not name:
        return None
    for candidate in (name, parents.get(name)):
        found = [w for w in wanted if candidate and req_name(w[0]) == candidate]
        if found and len(found) < len(wanted):
            return name, found
    rest = [w for w in wanted if secondary(w[1])]
    if rest and len(rest) < len(wanted):
        return name, rest
    return None


# The release pip fetched, from its own line: `Downloading URL/NAME-VERSION.tar.gz`, `Using
# cached NAME-VERSION.zip`, `File was already downloaded /…/NAME-VERSION.tar.gz`.
FETCHED_SDIST = re.compile(
    r"(?:Downloading|Using cached|File was already downloaded)\s+(?:\S*/)?"
    r"([A-Za-z0-9][A-Za-z0-9._]*(?:-[A-Za-z][A-Za-z0-9._]*)*)-(\d[A-Za-z0-9.+!_]*)\.(?:tar\.gz|tar\.bz2|tgz|zip)\b")
# name (normalised) -> the version of it whose sdist failed to build here (`did_not_build`).
FAILED_RELEASE = {}


def did_not_build(out, wanted):
    """The wanted (spec, source) whose own sdist, or a dependency's that it brought in,
    failed to build in `out` (pip names it, `failed_builds`), each once; the version that
    failed is kept by name (`FAILED_RELEASE`), so that no later attempt builds that same
    release again. scrapy-3: reppy's C++ sdist of 2019 fails with this compiler and has no
    wheel for 3.8; built together, then alone, then again without isolation and as of
    today, it left the other requirements seconds each."""
    names = failed_builds(out)
    if not names:
        return []
    for m in FETCHED_SDIST.finditer(out):
        if req_name(m.group(1)) in names:
            FAILED_RELEASE[req_name(m.group(1))] = m.group(2)
    _, parents = being_built(out)
    found = []
    for name in names:
        for candidate in (name, parents.get(name)):
            for item in wanted:
                if candidate and req_name(item[0]) == candidate and item not in found:
                    found.append(item)
    return found


PROJECT = "/proj"
# Where a run finds the project layer: the runner copies it into the tree's copy.
PROJECT_IN_RUN = "/work/.proven-project"
# In the project layer, the dependencies a project older than this Python imports a name
# from that their release of this Python's day no longer has, as of the date asked
# (`dated_back`): put before the environment's own packages.
DATED_BACK = "dated-back"


def own_names():
    """The names the project publishes itself under, from its declarations (never by
    running them): setup.py's as the inspection read it, pyproject's [project] or poetry
    name, setup.cfg's [metadata] name."""
    names = set()
    found = PLAN.get("setup_declared") or {}
    if found.get("name"):
        names.add(found["name"])
    try:
        with open(os.path.join(WORK, "pyproject.toml"), errors="replace") as f:
            section = None
            for line in f:
                head = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
                if head:
                    section = head.group(1).strip()
                    continue
                m = re.match(r"""^\s*(name|dist-name)\s*=\s*["']([^"']+)["']""", line)
                if m and section in ("project", "tool.poetry", "tool.flit.metadata"):
                    names.add(m.group(2))
    except OSError:
        pass
    try:
        import configparser
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(os.path.join(WORK, "setup.cfg"))
        if cfg.has_option("metadata", "name"):
            names.add(cfg.get("metadata", "name"))
    except Exception:
        pass
    return {re.sub(r"[-_.]+", "-", n).lower() for n in names if n.strip()}


def drop_own_release():
    """A requirement that depends on the project itself (a plugin of it, a framework built
    on it) brings the project's own release from the index. The tree's code is the one
    under test: the release is removed here, and the project layer (the tree, editable)
    takes its place at run time, as an editable install into this environment replaced it
    before."""
    own = own_names()
    if not own:
        return
    # --local: the environment's own packages, never the image's it only sees.
    code, out = run([PY, "-m", "pip", "list", "--local", "--format", "json", "--disable-pip-version-check"], timeout=120)
    try:
        listed = json.loads(out.strip().splitlines()[-1])
    except Exception:
        return
    for p in listed:
        if re.sub(r"[-_.]+", "-", p["name"]).lower() in own:
            code, out = run([PY, "-m", "pip", "uninstall", "-y", "--disable-pip-version-check", p["name"]], timeout=120)
            if code == 0:
                REPORT["notes"].append("%s %s came with a requirement: removed, the tree's own code is the one under test"
                                       % (p["name"], p["version"]))


def project_layer_hook():
    """The cached layer never holds the project itself (building it runs the tree's code).
    It holds this hook instead, which the environment's interpreter reads at start: the
    project layer of the run's own tree (made for that tree alone, see install_project),
    where the runner put it, is a site directory of the environment."""
    line = ("import os, sys, site; d = %r %% sys.version_info[:2]; os.path.isdir(d) and site.addsitedir(d); "
            "b = %r; os.path.isdir(b) and sys.path.insert(min([i for i, p in enumerate(sys.path) if p.endswith('site-packages')] or [0]), b)\n"
            % (PROJECT_IN_RUN + "/lib/python%d.%d/site-packages", PROJECT_IN_RUN + "/" + DATED_BACK))
    for p in os.listdir(VENV + "/lib"):
        if p.startswith("python"):
            with open(os.path.join(VENV, "lib", p, "site-packages", "zz-proven-project-layer.pth"), "w") as f:
                f.write(line)


# The module `test_time_limit_hook` puts beside the environment's packages: one test of a
# whole suite stopped after PROVEN_TEST_TIMEOUT seconds, by SIGALRM in the main thread (as
# pytest-timeout's signal method), an error of that test, so the rest of the suite runs.
TEST_TIME_LIMIT_MODULE = r"""
'''A whole suite's limit on each test, from Proven's prepared environment. PYTEST_DONT_REWRITE:
imported when the interpreter starts, before pytest could rewrite it; without this word
pytest warns that it cannot, which a project's `filterwarnings = error` makes fatal (pytest's
own suite stopped at start).'''
import os
import signal
import threading

LIMIT = int(os.environ.get("PROVEN_TEST_TIMEOUT") or 0)
# After the first stop, the seconds a test has to end before the next, stronger one.
GRACE = 10
# How often the limit has stopped the test running now.
_fired = 0


class TestRanPastItsTime(Exception):
    pass


class TestRanPastItsTimeInALoop(SystemExit):
    '''The second stop: an event loop runs its callbacks inside `except Exception` (asyncio's
    Handle, Twisted's reactor), so the first stop, raised while one ran, was logged and the
    test went on waiting (scrapy's tests of real websites, under Twisted's asyncio reactor,
    held the whole suite until its timeout). asyncio lets SystemExit through; pytest and
    unittest record it as this test's failure and go on.'''


def _arm(seconds):
    global _fired
    _fired = 0
    signal.alarm(seconds)


def _stop(signum, frame):
    global _fired
    _fired += 1
    signal.alarm(GRACE)
    if _fired == 1:
        raise TestRanPastItsTime(
            "this test ran past %d s (sandbox.suite_test_timeout_seconds): stopped so that the "
            "rest of the suite runs" % LIMIT)
    if _fired == 2:
        raise TestRanPastItsTimeInALoop(
            "this test ran past %d s (sandbox.suite_test_timeout_seconds) and went on %d s "
            "after it was stopped (its event loop took the stop as an error of a callback): "
            "stopped again so that the rest of the suite runs" % (LIMIT, GRACE))
    # Nothing let the test end: the suite ends here, by name, rather than at its timeout.
    signal.alarm(0)
    raise KeyboardInterrupt(
        "this test ran past %d s (sandbox.suite_test_timeout_seconds) and could not be "
        "stopped: the suite ends here" % LIMIT)


def _limited(call):
    def limited(*args, **kwargs):
        if not LIMIT or threading.current_thread() is not threading.main_thread():
            return call(*args, **kwargs)
        left = signal.alarm(0)
        if left:
            # A limit is running already (pytest's, around a unittest case): it stands.
            signal.alarm(left)
            return call(*args, **kwargs)
        previous = signal.signal(signal.SIGALRM, _stop)
        _arm(LIMIT)
        try:
            return call(*args, **kwargs)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    return limited


def install():
    # unittest's cases (nose's and pytest's run them through TestCase.run too).
    import unittest
    if not getattr(unittest.TestCase.run, "_proven_limited", False):
        unittest.TestCase.run = _limited(unittest.TestCase.run)
        unittest.TestCase.run._proven_limited = True
    # pytest's own tests: this module is a plugin of it (PYTEST_PLUGINS).
    plugins = [p for p in os.environ.get("PYTEST_PLUGINS", "").split(",") if p]
    if __name__ not in plugins:
        os.environ["PYTEST_PLUGINS"] = ",".join(plugins + [__name__])


def pytest_runtest_setup(item):
    if LIMIT and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGALRM, _stop)
        _arm(LIMIT)


def pytest_runtest_logreport(report):
    if report.when == "teardown":
        signal.alarm(0)
"""


def test_time_limit_hook():
    """A whole suite's run (PROVEN_TEST_TIMEOUT set by the runner) stops any one test after
    that many seconds, as an error of that test, and goes on: one test that never ends (a
    worker forked beside TensorFlow's threads in keras, a multiprocessing test of luigi
    waiting on its children) otherwise took the whole suite's time, and no fix on such a
    project was ever proved. The environment's interpreter reads the hook at start; nothing
    happens where the variable is not set (a single test's run has its own timeout)."""
    for p in os.listdir(VENV + "/lib"):
        if p.startswith("python"):
            site = os.path.join(VENV, "lib", p, "site-packages")
            with open(os.path.join(site, "proven_test_time_limit.py"), "w") as f:
                f.write(TEST_TIME_LIMIT_MODULE)
            with open(os.path.join(site, "zz-proven-test-time-limit.pth"), "w") as f:
                f.write("import os; os.environ.get('PROVEN_TEST_TIMEOUT') and __import__('proven_test_time_limit').install()\n")


def declares_build_system():
    try:
        with open(os.path.join(WORK, "pyproject.toml"), errors="replace") as f:
            return any(line.strip().startswith("[build-system]") for line in f)
    except OSError:
        return False


def superseded_releases_removed():
    """Requirements that did not resolve together are installed one by one, as of a date
    with --ignore-installed (the image's own pytest is today's), which writes a release
    over another of the same distribution without removing the other's files: two Djangos'
    dist-info, and a module of the later one beside the earlier one's (`admin_filters`
    importing a name the earlier `options.py` lacks). The one installed last stands, as a
    plain install would leave it: the files only the others' RECORDs list are removed, with
    their dist-info."""
    import glob
    for site in glob.glob(VENV + "/lib/python*/site-packages"):
        by_name = {}
        for info in glob.glob(os.path.join(site, "*.dist-info")):
            name = re.sub(r"[-_.]+", "-", os.path.basename(info).split("-")[0]).lower()
            by_name.setdefault(name, []).append(info)
        for name, infos in sorted(by_name.items()):
            if len(infos) < 2:
                continue
            infos.sort(key=lambda i: os.stat(i).st_mtime_ns)
            keep = infos[-1]
            kept = set(record_paths(site, keep))
            for old in infos[:-1]:
                for path in record_paths(site, old):
                    if path in kept or not path.startswith(VENV + "/"):
                        continue
                    try:
                        if os.path.isfile(path) or os.path.islink(path):
                            os.remove(path)
                    except OSError:
                        pass
                shutil.rmtree(old, ignore_errors=True)
            REPORT["notes"].append("%s was installed at several releases, one over another (requirements installed one by one): the one installed last, %s, stands; the others' files were removed"
                                   % (name, os.path.basename(keep)[:-len(".dist-info")]))


def record_paths(site, info):
    """The files a dist-info's RECORD lists, as absolute paths (normalised)."""
    import csv
    try:
        with open(os.path.join(info, "RECORD"), errors="replace", newline="") as f:
            rows = [row[0] for row in csv.reader(f) if row and row[0]]
    except (OSError, csv.Error):
        return []
    return [os.path.normpath(os.path.join(site, row)) for row in rows]


def plugin_modules_recorded(site):
    """A project that is a pytest plugin (a `pytest11` entry point), installed editable,
    lists none of its modules in its RECORD, and pytest rewrites the asserts of a plugin's
    modules only where its distribution lists them: pytest-mock's introspection of a
    failed `assert_called_with` was gone, and its own tests of it failed. Its CI installs
    the package itself (tox), whose RECORD lists them; the top-level modules the entry
    points name are added to the RECORD, as that install lists them (no file is added:
    the code stays the run's tree). From Python 3.12 importlib.metadata leaves out the
    listed files that are not there: the module is then also a link, beside the install,
    to the tree's own (/work, the run's tree), as the installed package sits in its
    site directory; the code run is the tree's either way. pytest 9.2 reads an editable
    plugin's entry points itself."""
    import configparser
    import glob
    for info in sorted(glob.glob(os.path.join(site, "*.dist-info"))):
        cfg = configparser.ConfigParser(interpolation=None, delimiters=("=",))
        cfg.optionxform = str
        try:
            cfg.read(os.path.join(info, "entry_points.txt"))
        except configparser.Error:
            continue
        if not cfg.has_section("pytest11"):
            continue
        tops = sorted({v.split(":")[0].strip().split(".")[0] for _, v in cfg.items("pytest11")} - {""})
        lines, links = [], []
        for top in tops:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", top):
                continue
            roots = [r for r in (WORK, WORK + "/src")
                     if os.path.isdir(os.path.join(r, top)) or os.path.isfile(os.path.join(r, top + ".py"))]
            package = bool(roots) and os.path.isdir(os.path.join(roots[0], top))
            lines.append((top + "/__init__.py" if package else top + ".py") + ",,\n")
            if sys.version_info >= (3, 12) and roots:
                name = top if package else top + ".py"
                links.append((os.path.join(roots[0], name), os.path.join(site, name)))
        if not lines:
            continue
        try:
            with open(os.path.join(info, "RECORD"), "a") as f:
                f.writelines(lines)
            for target, link in links:
                if not os.path.lexists(link):
                    os.symlink(target, link)
        except OSError:
            continue
        REPORT["notes"].append("the project is a pytest plugin (%s): its modules are listed in its editable install's RECORD, as its installed package lists them, so pytest rewrites their asserts"
                               % ", ".join(tops))


def egg_links_on_path(site):
    """A legacy `setup.py develop` (what pip falls back to when the build backend is a
    setuptools older than 64, no PEP 660 hook: a project pinning its date's setuptools)
    into a prefix writes the egg-link but no easy-install.pth line, so the project's code
    (its `lib/` or `src/` folder, where package_dir puts it) is on no path and every test
    fails at import. Each egg-link's folder is put on the path, as easy-install.pth would."""
    listed = set()
    links = []
    for name in sorted(os.listdir(site)):
        path = os.path.join(site, name)
        try:
            with open(path, errors="replace") as f:
                lines = [l.strip() for l in f]
        except OSError:
            continue
        if name.endswith(".pth"):
            listed.update(lines)
        elif name.endswith(".egg-link") and lines and lines[0]:
            links.append(lines[0])
    missing = [l for l in links if l not in listed]
    if missing:
        with open(os.path.join(site, "proven-egg-links.pth"), "w") as f:
            f.write("\n".join(missing) + "\n")
        REPORT["notes"].append("the project's develop install left %s off the path (an egg-link without easy-install.pth): put on it"
                               % ", ".join(missing))


def cpus():
    """The CPUs this container may use: its cgroup's quota (Docker's --cpus), else the
    machine's."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            return max(1, int(int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return os.cpu_count() or 1


def builds_extensions():
    """Whether the tree's setup.py builds compiled extensions (C, C++, Cython)."""
    try:
        with open(os.path.join(WORK, "setup.py"), errors="replace") as f:
            text = f.read()
    except OSError:
        return False
    return any(word in text for word in ("ext_modules", "Extension(", "cythonize"))


def unbound_modules(built):
    """The extension modules among `built` (paths in the tree) the dynamic linker cannot
    load with every symbol bound, each as `path: undefined symbol: NAME`; loaded in a
    process of the environment's interpreter, which provides Python's own symbols, with
    RTLD_NOW, as an import loads them."""
    if not built:
        return []
    check = ("import ctypes, os, sys\n"
             "for p in sys.argv[1:]:\n"
             "    try:\n"
             "        ctypes.CDLL(p, mode=os.RTLD_NOW | os.RTLD_LOCAL)\n"
             "    except OSError as e:\n"
             "        if 'undefined symbol' in str(e):\n"
             "            print('%s: undefined symbol: %s' % (os.path.relpath(p), str(e).rsplit(': ', 1)[-1]))\n")
    code, out = run([PY, "-c", check] + [os.path.join(WORK, rel) for rel in built], timeout=120)
    return [line.strip() for line in out.splitlines() if "undefined symbol" in line]


def extensions_built_in_parallel(env):
    """A project with compiled extensions (pandas' and spaCy's dozens of Cython modules)
    is built by its CI with `setup.py build_ext --inplace -j N`; pip's editable install
    compiles them one at a time (`setup.py develop` takes no `--parallel`), so the build
    alone can outlast the preparation. They are built in place first with this
    container's CPUs, from the environment's own build requirements (Cython, numpy: the
    project's requirements, installed by now); the develop install after finds them up to
    date and compiles nothing again. Where that build fails (a build requirement only the
    isolated build environment has), the editable install builds them as before. True when
    every extension was built here and loads."""
    if not builds_extensions():
        return False
    jobs = cpus()
    if jobs < 2:
        return False
    # Only where the editable install is a legacy `setup.py develop`, which builds in place
    # and skips what is up to date: the setuptools of before 64 (2022-08), the date's one in
    # a preparation as of a date. A later one's editable build compiles everything again in
    # a directory of its own, so building first would only double the time.
    code, out = run([PY, "-c", "import setuptools; print(setuptools.__version__)"], timeout=60, cwd="/tmp")
    try:
        major = int(out.strip().splitlines()[-1].split(".")[0]) if code == 0 else None
    except (ValueError, IndexError):
        major = None
    if major is None or major >= 64:
        return False
    # As pip runs a setup.py: setuptools imported first (spaCy's setup.py reads
    # `distutils.util`, which only setuptools' import loads), with `__file__` set.
    shim = ("import sys, setuptools, tokenize; sys.argv[0] = __file__ = 'setup.py'; "
            "f = getattr(tokenize, 'open', open)(__file__); code = f.read().replace('\\r\\n', '\\n'); "
            "f.close(); exec(compile(code, __file__, 'exec'))")
    # Most of the time left: what it compiled stays compiled, so even cut short it leaves
    # the develop install less to compile one module at a time.
    before = tree_files(WORK)
    code, out = run([PY, "-c", shim, "build_ext", "--inplace", "-j", str(jobs)], env=env, share=0.85)
    built = sorted(rel for rel in tree_files(WORK) - before if rel.endswith(".so"))
    broken = unbound_modules(built) if code == 0 else []
    if broken:
        # setuptools' parallel build_ext builds extensions side by side in one temporary
        # directory: two that compile the same source with different macros (matplotlib's
        # src/py_converters.cpp, each with its own PY_ARRAY_UNIQUE_SYMBOL) write the same
        # object file, and one links the other's. The build says nothing; the module fails
        # at import. What it built is removed and the editable install builds one at a time,
        # as the project's CI does.
        for rel in built:
            os.remove(os.path.join(WORK, rel))
        shutil.rmtree(os.path.join(WORK, "build"), ignore_errors=True)
        REPORT["notes"].append("the project's extensions built in place with %d jobs did not load (%s): removed, the editable install builds them one at a time"
                               % (jobs, broken[0]))
    elif code == 0:
        REPORT["notes"].append("the project's extensions were built in place with %d jobs (setup.py build_ext --inplace -j %d)"
                               % (jobs, jobs))
        return True
    else:
        REPORT["notes"].append("building the project's extensions in place with %d jobs failed (%s): the editable install builds them"
                               % (jobs, why(out)))
    return False


# What an earlier preparation of this very tree built before its time ran out, mounted
# read-only by the runner (its incomplete project layer's RESUME_DIR), and where this one
# keeps what it built when its own time runs out.
RESUME_FROM = "/resume"
RESUME_DIR = "resume"
# At most this much of a build is kept to resume from.
RESUME_MAX_BYTES = 1 << 30
# What the build wrote this recently when its time ran out is left out (it may be cut short).
RESUME_SETTLED_SECONDS = 3


def resume_build():
    """A project whose own build outlasts the preparation's time (spaCy's dozens of Cython
    modules on a busy machine) never got built: each preparation began it again and was
    cut short at the same place. What an earlier preparation of this same tree built (the
    runner keys it by the tree, so it is this code's build) is put back first, newer than
    the sources, so the build goes on from there: a compiled module up to date is not
    compiled again."""
    if not os.path.isdir(RESUME_FROM):
        return
    # In the order the earlier build wrote them (kept with their times), each a microsecond
    # after the one before, from now on: newer than every source of the tree, and a file the
    # build wrote from another (a generated .pxi, then the .c Cython made of it) still the
    # older of the two. Put back in the order of their names instead, pandas' generated
    # .pxi files came out newer than the .c files that include them, and Cython made every
    # .c again: each preparation was cut short at the same place.
    # Everything kept, its build directory too (keep_for_resume keeps `build/`).
    found = []
    for dirpath, _, filenames in os.walk(RESUME_FROM):
        for name in filenames:
            source = os.path.join(dirpath, name)
            found.append((os.stat(source).st_mtime_ns, os.path.relpath(source, RESUME_FROM)))
    restored = 0
    now = time.time_ns()
    for written, rel in sorted(found):
        into = os.path.join(WORK, rel)
        if os.path.lexists(into):
            continue
        os.makedirs(os.path.dirname(into), exist_ok=True)
        shutil.copyfile(os.path.join(RESUME_FROM, rel), into)
        at = now + restored * 1000
        os.utime(into, ns=(at, at))
        restored += 1
    if restored:
        REPORT["notes"].append("the build went on from what an earlier preparation of this tree built before its time ran out (%d files)"
                               % restored)


def keep_for_resume(before):
    """The preparation's time ran out while the project was being built: what the build
    wrote into the tree so far (compiled modules, generated C) is kept in this incomplete
    layer, for the next preparation of the same tree to go on from (resume_build)."""
    kept, size = [], 0
    # The build directory too: setuptools compiles there first (`build/temp.*`, then
    # `build/lib.*`), and finds there what is up to date.
    built = set()
    for dirpath, dirnames, filenames in os.walk(os.path.join(WORK, "build")):
        built.update(os.path.relpath(os.path.join(dirpath, n), WORK) for n in filenames)
    for rel in sorted((tree_files(WORK) - before) | built):
        path = os.path.join(WORK, rel)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        # A file written as the build was killed may be cut short: put back, newer than
        # its sources, it would pass for built in every later preparation of this tree.
        if time.time() - os.path.getmtime(path) < RESUME_SETTLED_SECONDS:
            continue
        size += os.path.getsize(path)
        if size > RESUME_MAX_BYTES:
            break
        into = os.path.join(PROJECT, RESUME_DIR, rel)
        os.makedirs(os.path.dirname(into), exist_ok=True)
        # With its time: the next preparation puts them back in the order they were written.
        shutil.copy2(path, into)
        kept.append(rel)
    if kept:
        REPORT["notes"].append("what the build wrote before the time ran out is kept for the next preparation of this tree to go on from (%d files)"
                               % len(kept))


# The last pip that reads the legacy metadata of a project of its era: pip 24.1 refuses
# requirement specifiers packaging 22 does not parse (spaCy 2.2's "has invalid metadata:
# Expected matching RIGHT_PARENTHESIS"), which every pip before it installed.
LEGACY_METADATA_PIP = "pip<24.1"


def with_pip_of_legacy_metadata(pip, into, ways, env, reasons):
    """Today's pip refused the project's own metadata: the project is installed with the
    last pip that reads it, run from its wheel (the environment is read-only here), and
    the record says so."""
    code, out = run([PY, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", "/tmp/legacy-pip",
                     LEGACY_METADATA_PIP], within=120)
    wheels = sorted(f for f in os.listdir("/tmp/legacy-pip") if f.endswith(".whl")) if code == 0 else []
    if not wheels:
        return code, out
    wheel = os.path.join("/tmp/legacy-pip", wheels[-1])
    # Editable as before; then, where a backend of the date has no editable build and its
    # `setup.py develop` fails under a prefix, built and installed as a wheel of this tree
    # (the layer is this tree's alone).
    for how in [w + ["-e", WORK] for w in ways] + [[WORK]]:
        # `pip` is [PY, "-m", "pip", "install", options…]: the same options, that pip.
        code, out = run([PY, os.path.join(wheel, "pip")] + pip[3:] + into + how, env=env)
        if code == 0:
            REPORT["notes"].append("today's pip refuses the project's own metadata (%s): installed%s with %s, the last pip that reads it"
                                   % (reasons[0], "" if "-e" in how else " (not editable)",
                                      wheels[-1].split("-py")[0].replace("-", " ")))
            return code, out
        reason = why(out)
        if reason and reason not in reasons:
            reasons.append(reason)
    return code, out


def install_project(pip):
    """The project layer, for one tree: the project itself as an editable install into
    /proj (a prefix the runner copies into the run's tree as .proven-project), over the
    cached environment mounted read-only at /deps. Files the run adds to the tree (a test
    under proof) are removed first: the layer is made from the commit and the patch alone,
    which are its key."""
    for rel in PLAN.get("remove", []):
        path = os.path.join(WORK, rel)
        if os.path.isfile(path) or os.path.islink(path):
            os.remove(path)
    site = os.path.join(PROJECT, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    os.makedirs(site, exist_ok=True)
    before = tree_files(WORK)
    resume_build()
    # The run's checkout of the tree is one commit without tags (and a tree too large for
    # one has no git at all): a version read from git (setuptools_scm, versioneer-like
    # plugins) is given, or the build finds none or a wrong one. A legacy
    # `setup.py develop` wants its prefix's site directory on the path.
    env = {"PYTHONPATH": site}
    if not os.environ.get("SETUPTOOLS_SCM_PRETEND_VERSION"):
        # The commit's nearest tag, as its CI's checkout with tags gives it (PLAN
        # "scm_version"); pbr reads its own variable.
        version = PLAN.get("scm_version") or "0.0.0"
        env["SETUPTOOLS_SCM_PRETEND_VERSION"] = version
        env["PBR_VERSION"] = version
        if PLAN.get("scm_version"):
            REPORT["notes"].append("a version read from git is %s (the commit's nearest tag): the run's checkout of the tree has no tags" % version)
    into = ["--no-deps", "--ignore-installed", "--prefix", PROJECT]
    # An editable install: the project's code stays where each run's tree is (/work).
    # Each way tried has its own reason: the first way's (the project's own build) is
    # the one that names what is wrong; a later way's (no build isolation, where the
    # backend may not even be installed) is said after it when it differs.
    # A project with no build-system table builds with setuptools either way: the image's,
    # without fetching one into an isolated build environment first (made per tree, this
    # layer's time is every review's).
    global COMPILED
    COMPILED = COMPILED or builds_extensions()
    built_in_place = extensions_built_in_parallel(env)
    ways = [["--config-settings", "editable_mode=compat"], [], ["--no-build-isolation"]]
    if not declares_build_system():
        ways.insert(0, ["--no-build-isolation", "--config-settings", "editable_mode=compat"])
    elif built_in_place:
        # Built in place with the environment's build requirements: an isolated build
        # installs them anew, newer than every module built (pandas' extensions depend on
        # Cython's own .pxd files), and builds every extension again, which outlasted the
        # preparation. The editable install uses the requirements that built them.
        ways.insert(0, ["--no-build-isolation", "--config-settings", "editable_mode=compat"])
    reasons = []
    for i, how in enumerate(ways):
        code, out = run(pip + into + how + ["-e", WORK], env=env)
        if code == 0:
            if i == 0 and built_in_place and declares_build_system():
                REPORT["notes"].append("the project was installed with the build requirements that built its extensions in place (without build isolation): an isolated build installs them anew and builds every extension again")
            break
        reason = why(out)
        if reason and reason not in reasons:
            reasons.append(reason)
    if code != 0 and any("has invalid metadata" in r for r in reasons):
        code, out = with_pip_of_legacy_metadata(pip, into, ways, env, reasons)
    if code == 0:
        REPORT["project"] = {"installed": True, "how": "editable install of /work"}
        keep_generated_modules(before, [site])
        egg_links_on_path(site)
        plugin_modules_recorded(site)
    else:
        # The project's own build failed: its code is still importable from where it is.
        root = WORK + "/src" if os.path.isdir(WORK + "/src") and not os.path.exists(WORK + "/src/__init__.py") else WORK
        with open(os.path.join(site, "proven-project.pth"), "w") as f:
            f.write(root + "\n")
        reason = "; then ".join(reasons[:3]) or why(out)
        REPORT["project"] = {"installed": False, "how": "on the path as %s" % root, "error": reason}
        REPORT["not_prepared"].append({"what": "the project itself (as an installed package)",
                                       "source": "its build", "reason": reason})
    if RESOLVE_ASKED and RESOLVE_BEFORE != RESOLVE_ASKED:
        dated_back(pip, site)
    if code != 0 and REPORT.get("incomplete"):
        keep_for_resume(before)
    compiled_note()
    with open(PROJECT + "/report.json", "w") as f:
        json.dump(REPORT, f, indent=1)

# Run by the environment's interpreter in the project stage: imports every module of the
# project's own packages and loads its test files (argv[1], JSON: their directories and
# paths) and prints, as JSON, each name
# one of them imports from another distribution that this one does not have (`from D.m
# import X`: "cannot import name"), with the distribution that holds D.
IMPORT_CHECK = r"""
import importlib.util, json, os, pkgutil, re, sys, traceback
sys.stdout, out = open(os.devnull, "w"), sys.stdout
asked = json.loads(sys.argv[1])
own = {os.path.basename(p) for p in asked["packages"]} | {"tests", "test", "testing"}
found = {}
def check(load, where):
    try:
        load()
    except ImportError as e:
        said = str(e)
        if not said.startswith("cannot import name"):
            return
        frame = (traceback.extract_tb(e.__traceback__) or [None])[-1]
        line = (frame.line if frame else "") or ""
        m = re.match(r"\s*from\s+([\w.]+)\s+import", line)
        source = getattr(e, "name", None) or (m.group(1) if m else None)
        if not source or source.split(".")[0] in own:
            return
        missing = re.match(r"cannot import name '?(\w+)", said).group(1)
        found.setdefault(source.split(".")[0], {"module": source, "name": missing, "in": where})
    except BaseException:
        pass
for root in asked["packages"]:
    parent, name = os.path.split(root)
    sys.path.insert(0, parent)
    try:
        __import__(name)
        walked = [m.name for m in pkgutil.walk_packages([root], name + ".", onerror=lambda n: None)]
    except BaseException:
        walked = []
    for module in [name] + walked:
        if not any(part.startswith("test") for part in module.split(".")):
            check(lambda: __import__(module), module)
for i, path in enumerate(asked["tests"]):
    sys.path.insert(0, os.path.dirname(path))
    def load():
        spec = importlib.util.spec_from_file_location("proven_import_check_%d" % i, path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    check(load, os.path.relpath(path, asked["root"]))
def distribution(top):
    for entry in sys.path:
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for d in names:
            if not d.endswith(".dist-info"):
                continue
            try:
                with open(os.path.join(entry, d, "RECORD")) as f:
                    tops = {l.split("/")[0].split(",")[0] for l in f}
            except OSError:
                continue
            if top in tops or top + ".py" in tops:
                return d[:-len(".dist-info")].rsplit("-", 1)[0]
    return None
for top, what in found.items():
    what["distribution"] = distribution(top)
out.write("\nPROVEN-IMPORT-CHECK " + json.dumps(found) + "\n")
"""


# The test files the import check loads, at most.
MAX_TEST_FILES = 300


def own_test_files():
    """The project's test modules (`test_*.py`, `*_test.py`, `tests.py`) under its test
    directories at the tree's root, or at the root itself."""
    files = []
    for top in ["."] + [d for d in ("tests", "test", "testing") if os.path.isdir(os.path.join(WORK, d))]:
        base = os.path.join(WORK, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if top != "." else []
            for f in sorted(filenames):
                if re.match(r"^(test_\w+|\w+_test|tests?)\.py$", f):
                    files.append(os.path.join(dirpath, f))
    return files[:MAX_TEST_FILES]


def own_package_dirs():
    """The directories of the project's own top-level packages (at the tree's root or under
    src/), never its tests', documentation's or examples'."""
    dirs = []
    for base in (WORK, os.path.join(WORK, "src")):
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for n in names:
            path = os.path.join(base, n)
            if (re.match(r"^[A-Za-z_]\w*$", n) and os.path.isfile(os.path.join(path, "__init__.py"))
                    and not re.match(r"^(tests?|testing|docs?|examples?|bench\w*|scripts?|tools?)$", n, re.I)):
                dirs.append(path)
    return dirs


def names_gone(site):
    """`IMPORT_CHECK` run on the project's packages with the project layer on the path."""
    paths = [p for p in (os.path.join(PROJECT, DATED_BACK), site) if os.path.isdir(p)]
    asked = {"packages": own_package_dirs(), "tests": own_test_files(), "root": WORK}
    code, out = run([PY, "-c", IMPORT_CHECK, json.dumps(asked)], timeout=180,
                    env={"PYTHONPATH": os.pathsep.join(paths)})
    said = [l for l in out.splitlines() if l.startswith("PROVEN-IMPORT-CHECK ")]
    try:
        return json.loads(said[-1].split(" ", 1)[1]) if code == 0 and said else {}
    except ValueError:
        return {}


def dated_back(pip, site):
    """A project older than this Python resolves as of the Python's release (`PYTHON_RELEASED`).
    A dependency may have dropped, between the project's date and then, a name the project
    imports (httpie of 2014: `from requests.compat import is_windows`, gone from the
    requests of 2016; `from jinja2 import Markup`, gone in 2022): every module of the
    project then fails at import, and no test of it runs. That dependency, alone, is
    installed as of the date asked into the project layer, before the environment's own
    packages, and kept only if the name is then there; the record says which."""
    gone = names_gone(site)
    if not gone:
        return
    target = os.path.join(PROJECT, DATED_BACK)
    dated = [at_index(RESOLVE_ASKED) if a == INDEX else a for a in pip
             if a not in ("--ignore-installed",)]
    own = own_names()
    for top, what in sorted(gone.items()):
        dist = what.get("distribution")
        if not dist or re.sub(r"[-_.]+", "-", dist).lower() in own:
            continue
        before = set(os.listdir(target)) if os.path.isdir(target) else set()
        code, out = run(dated + ["--no-deps", "--target", target, dist], within=300)
        version = re.search(r"Successfully installed\s+\S*?-([0-9][^\s]*)", out)
        still = names_gone(site).get(top)
        if code == 0 and not still:
            REPORT["notes"].append(
                "%s imports %s from %s, which %s as of %s (this Python's release) no longer has: "
                "%s %s, as of the date asked (%s), is put before the environment's for this tree"
                % (what["in"], what["name"], what["module"], dist, RESOLVE_BEFORE, dist,
                   version.group(1) if version else "", RESOLVE_ASKED))
        else:
            # What this install added goes; what earlier ones put there stays.
            for added in set(os.listdir(target) if os.path.isdir(target) else []) - before:
                path = os.path.join(target, added)
                shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
            REPORT["notes"].append(
                "%s imports %s from %s, which %s as of %s (this Python's release) no longer has; "
                "as of the date asked (%s) it %s"
                % (what["in"], what["name"], what["module"], dist, RESOLVE_BEFORE, RESOLVE_ASKED,
                   "still lacks it" if code == 0 else "did not install: " + why(out)))


# The dated index's address, when resolving as of a date.
INDEX = None
# Later instants tried for a requirement nothing of the date installs, at most.
MAX_LATER = 4


def allowed_by(spec):
    """Whether a file (by its name) is of a release `spec` allows: its version within the
    specifier (`pandas<0.21`); every file when either cannot be read."""
    try:
        from pip._vendor.packaging.requirements import Requirement
        from pip._vendor.packaging.utils import parse_sdist_filename, parse_wheel_filename
        specifier = Requirement(spec).specifier
    except Exception:
        return lambda filename: True

    def allowed(filename):
        try:
            if filename.endswith(".whl"):
                version = parse_wheel_filename(filename)[1]
            else:
                version = parse_sdist_filename(filename)[1]
        except Exception:
            return True
        return specifier.contains(version, prereleases=True)
    return allowed


def later_instants(spec, before):
    """The instants files of a release the requirement allows were uploaded after `before`,
    oldest first: at most MAX_LATER of them, spread over its later history, the first
    always among them. None when every release it allows is older (`pandas<0.21` on a
    Python none of them was built for): a later instant would resolve the same release and
    build it again, a build that fails each time (tqdm-5 spent four builds of pandas 0.20.3
    on Python 3.7)."""
    page, _ = upstream_page(req_name(spec))
    if not page:
        return []
    allowed = allowed_by(spec)
    new = not_the_failed_release(req_name(spec))
    times = sorted({f["upload-time"][:19] + "Z" for f in page.get("files", [])
                    if f.get("upload-time") and f["upload-time"][:19] > before[:19] and not f.get("yanked")
                    and allowed(f.get("filename", "")) and new(f.get("filename", ""))})
    if len(times) <= MAX_LATER:
        return times
    step = (len(times) - 1) / float(MAX_LATER - 1)
    return sorted({times[int(round(i * step))] for i in range(MAX_LATER)})


def not_the_failed_release(name):
    """Whether a file (by its name) could install otherwise than the release of `name`
    whose sdist already failed to build here (`FAILED_RELEASE`): another version, or a
    wheel this Python installs. Every file when none failed."""
    failed = FAILED_RELEASE.get(name)
    if not failed:
        return lambda filename: True
    tags = wheel_tags() or set()

    def new(filename):
        if filename.endswith(".whl"):
            return installs_here(filename, tags)
        m = re.match(r"(.+)-(\d[A-Za-z0-9.+!_]*)\.(?:tar\.gz|tar\.bz2|tgz|zip)$", filename)
        return not m or m.group(2) != failed
    return new


def environment_versions():
    """name (normalised) -> (name, version) of what the environment holds, its own
    packages and the image's it sees."""
    site = [os.path.join(VENV, "lib", p, "site-packages") for p in os.listdir(VENV + "/lib") if p.startswith("python")]
    code, out = run([PY, "-m", "pip", "list", "--format", "freeze", "--disable-pip-version-check"]
                    + sum([["--path", p] for p in site], []), timeout=120)
    found = {}
    for line in out.splitlines() if code == 0 else []:
        if "==" in line:
            name, version = line.strip().split("==", 1)
            found[req_name(name)] = (name, version)
    return found


def nearest_that_installs(spec, pip, pip_now, reason, share=1.0):
    """A requirement nothing of the date installs here (an sdist that needs what this Python
    lacks, a release with no files for it), resolved as of the nearest later instant it
    installs at, together with its dependencies as of that instant (pip upgrades what it
    needs, eagerly): never today's release beside the date's dependencies (today's Twisted
    with an attrs of 2019). Today's, with today's dependencies, when no later instant of its
    own uploads installs. Said in the notes, with every version it changed."""
    if OUT_OF_TIME in reason or left() * share < 1:
        return False
    before = environment_versions()
    closure = ["--upgrade", "--upgrade-strategy", "eager"]
    dated = [a for a in pip if a != "--ignore-installed"]
    attempts = [(instant, [at_index(instant) if a == INDEX else a for a in dated])
                for instant in later_instants(spec, RESOLVE_BEFORE)]
    failed = FAILED_RELEASE.get(req_name(spec))
    if not attempts and failed:
        # Today's resolution would fetch that same sdist and fail to build it again.
        REPORT["notes"].append("%s: its release %s did not build here, and nothing it allows that could install otherwise was uploaded after %s: not built again"
                               % (spec, failed, RESOLVE_BEFORE))
        return False
    if not attempts:
        REPORT["notes"].append("%s: no release it allows was uploaded after %s: not tried again at a later instant, only with today's dependencies"
                               % (spec, RESOLVE_BEFORE))
    attempts.append(("now", pip_now))
    # This requirement's share of what is left, split among its attempts.
    ends = time.monotonic() + left() * share
    for n, (instant, command) in enumerate(attempts):
        code, out = run(command + closure + [spec],
                        within=max(0.0, ends - time.monotonic()) / (len(attempts) - n))
        if code != 0:
            continue
        after = environment_versions()
        name = req_name(spec)
        got = after.get(name, (spec, "?"))
        changed = ["%s %s -> %s" % (after[n][0], before[n][1] if n in before else "none", after[n][1])
                   for n in sorted(after) if n != name and before.get(n, (None, None))[1] != after[n][1]]
        when = "resolved now instead" if instant == "now" else "resolved as of %s instead" % instant
        REPORT["notes"].append("%s: as of %s it did not install (%s); %s: %s==%s, with its dependencies of then%s"
                               % (spec, RESOLVE_BEFORE, reason, when, got[0], got[1],
                                  " (%s)" % ", ".join(changed) if changed else " (none changed)"))
        return True
    return False


def build_tools_of_the_date(pip):
    """An sdist without a pyproject.toml is built by the setuptools the environment sees
    (pip's legacy `setup.py egg_info`, and every `--no-build-isolation` build): the image's,
    of today, which has lost what a setup.py of the date imports (markupsafe 1.0's
    `Feature`, gone in setuptools 46; the `packaging` API of its day). setuptools and wheel
    of the date are put into the environment first (a requirement naming its own replaces
    them); an isolated build gets them from the dated index already."""
    code, out = run(pip + ["setuptools", "wheel"], within=180)
    if code != 0:
        REPORT["notes"].append("the setuptools of %s could not be installed (%s): sdists are built with the image's"
                               % (RESOLVE_BEFORE[:10], why(out)))
        return
    versions = environment_versions()
    REPORT["notes"].append("sdists are built with the setuptools and wheel of %s (setuptools %s, wheel %s)"
                           % (RESOLVE_BEFORE[:10], versions.get("setuptools", ("", "?"))[1],
                              versions.get("wheel", ("", "?"))[1]))


def setup_requires_from(index):
    """A setup.py's `setup_requires` is fetched by setuptools itself, not by the pip that
    builds it (every `--no-build-isolation` build, and every build with the setuptools of a
    date): easy_install before setuptools 42, a `pip wheel` it starts after, both from the
    real index whatever pip was told. Twisted 18.7's `incremental` came as of today and
    needed a Python the date did not have (scrapy-4); from an operator's index alone, the
    fetch failed. Both read `[easy_install] index_url` from the user's distutils file, so
    they fetch from the index pip uses; a plain-http operator's index is trusted as pip's
    own command trusts it."""
    path = os.path.expanduser("~/.pydistutils.cfg")
    try:
        with open(path, "w") as f:
            f.write("[easy_install]\nindex_url = %s\n" % index)
    except OSError as e:
        REPORT["notes"].append("setup_requires are fetched from the real index: %s could not be written (%s)" % (path, e))
        return
    if index.startswith("http://"):
        host = index.split("://", 1)[1].split("/", 1)[0].split(":", 1)[0]
        trusted = os.environ.get("PIP_TRUSTED_HOST", "").split()
        if host not in trusted:
            os.environ["PIP_TRUSTED_HOST"] = " ".join(trusted + [host])


def at_index(instant):
    """The dated index's address as of a later instant."""
    return INDEX.replace("/simple/", "/at/%s/simple/" % instant)



def main():
    if PLAN.get("stage") != "project":
        os.makedirs(DEPS, exist_ok=True)
        code, out = run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", VENV], timeout=120)
        if code != 0:
            print("the virtual environment could not be made: " + tail(out), file=sys.stderr)
            sys.exit(3)
    wanted = []
    seen = set()

    def want(spec, source):
        # A comment is no requirement, as setuptools reads install_requires: a setup.py
        # passing its requirements.txt's lines (comments and all) declares what is left.
        spec = re.sub(r"(^|\s)#.*$", "", spec).strip()
        if not spec or spec.lower() in seen:
            return
        seen.add(spec.lower())
        reason = refused(spec)
        if reason:
            REPORT["refused"].append({"what": spec, "source": source, "reason": reason})
        else:
            wanted.append((spec, source))

    for r in PLAN.get("requirements", []):
        want(r["spec"], r["source"])
    # What setup.py declares, read in an inspection container of its own (never here: no
    # code of the tree runs where the cached layer is made).
    found = PLAN.get("setup_declared") or {}
    if PLAN.get("setup_report"):
        REPORT["setup_py"] = PLAN["setup_report"]
    setup_report = PLAN.get("setup_report") or {}
    if setup_report.get("evaluated") is False:
        said = (setup_report.get("error") or "").strip().splitlines()
        REPORT["not_prepared"].append({
            "what": "the requirements setup.py declares", "source": "setup.py",
            "reason": "setup.py could not be read: %s" % (said[-1].strip() if said else "it printed nothing")})
    read_with = setup_report.get("read_with") or {}
    if read_with.get("argv") and read_with["argv"] != ["egg_info"]:
        REPORT["notes"].append("setup.py was read as for the commands that build nothing (%s): as egg_info alone it stopped before its setup() call"
                               % " ".join(read_with["argv"]))
    if read_with.get("stand_ins"):
        REPORT["notes"].append("setup.py imports %s, which only its build environment has: it was read with stand-ins for them"
                               % ", ".join(read_with["stand_ins"]))
    if found:
        for key in ("install_requires", "tests_require"):
            for spec in found.get(key) or []:
                want(spec, "setup.py " + key)
        # Its test extras, and those something installs (a CI's `.[d]`, tox's `extras =`,
        # `flit install`: every extra, "*").
        named = {e.lower() for e in PLAN.get("extras", [])}
        for extra, specs in (found.get("extras_require") or {}).items():
            name = extra.split(":")[0].strip().lower()
            if name in TEST_NAMES or name.startswith("test") or name in named or "*" in named:
                for spec in specs or []:
                    marker = extra.split(":", 1)[1] if ":" in extra else ""
                    want(spec + (" ; " + marker if marker and ";" not in spec else ""), "setup.py extras_require." + extra)

    pip = [PY, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
           "--progress-bar", "off", "--no-warn-script-location", "--no-compile"]
    # The same pip on the real index, for a requirement nothing of the date installs.
    pip_now = list(pip)
    if PLAN.get("index_url"):
        pip_now += ["--index-url", PLAN["index_url"]]
        if PLAN["index_url"].startswith("http://"):
            pip_now += ["--trusted-host", PLAN["index_url"].split("://", 1)[1].split("/", 1)[0].split(":", 1)[0]]
    if RESOLVE_BEFORE:
        # pip reaches the dated index directly (NO_PROXY), the index reaches the real one
        # through the proxy. --ignore-installed: the image's own pytest is today's; the
        # project's requirements (pytest among them) are installed as of the date.
        os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
        global INDEX
        index = INDEX = start_dated_index(RESOLVE_BEFORE)
        pip += ["--index-url", index, "--trusted-host", "127.0.0.1", "--ignore-installed"]
        REPORT["notes"].append("versions resolved as of %s (the releases that existed then)" % RESOLVE_BEFORE)
        if RESOLVE_BEFORE != RESOLVE_ASKED:
            REPORT["notes"].append("asked for %s, older than this Python (%d.%d, released %s): resolved as of its release"
                                   % (RESOLVE_ASKED, sys.version_info[0], sys.version_info[1], RESOLVE_BEFORE))
    elif PLAN.get("index_url"):
        pip += ["--index-url", PLAN["index_url"]]
        # The operator's own index (never the project's): over plain http it is still theirs.
        if PLAN["index_url"].startswith("http://"):
            host = PLAN["index_url"].split("://", 1)[1].split("/", 1)[0].split(":", 1)[0]
            pip += ["--trusted-host", host]
    for extra in PLAN.get("extra_index_urls", []):
        pip += ["--extra-index-url", extra]
    if RESOLVE_BEFORE:
        setup_requires_from(INDEX)
    elif PLAN.get("index_url"):
        setup_requires_from(PLAN["index_url"])
    if PLAN.get("constraints"):
        with open("/tmp/proven-constraints.txt", "w") as f:
            f.write("\n".join(c["spec"] for c in PLAN["constraints"]) + "\n")
        pip += ["-c", "/tmp/proven-constraints.txt"]

    if RESOLVE_BEFORE and PLAN.get("stage") != "project":
        build_tools_of_the_date(pip)

    if PLAN.get("stage") == "project":
        install_project(pip)
        return

    # Requirements nothing of the date installs, tried after the others as of a later
    # instant (nearest_that_installs): (spec, source, pip's reason as of the date).
    later = []
    # Requirements whose build failed together: (spec, source, pip's reason).
    unbuilt = []
    if wanted:
        # Together first. A requirement pip names as not served (no release for this
        # Python, a private package) is dropped by name and the rest tried together again,
        # so one dev tool that cannot be had costs one more call, not one call per package.
        for _attempt in range(MAX_DROPPED + 1):
            with open("/tmp/proven-requirements.txt", "w") as f:
                f.write("\n".join(spec for spec, _ in wanted) + "\n")
            # A third of the time is kept for the requirements one by one, should one of
            # them hang the others' build together.
            code, out = run(pip + ["-r", "/tmp/proven-requirements.txt"], share=2.0 / 3)
            missing = unavailable(out, wanted) if code != 0 else None
            if missing is None:
                if code != 0 and RESOLVE_BEFORE and OUT_OF_TIME not in out and served_from_first_wheel(out, pip):
                    continue
                # One whose build failed (and no wheel serves it) is set aside by name with
                # pip's reason, and the rest installed together again: never built again
                # as it was (`did_not_build`).
                failing = did_not_build(out, wanted) if code != 0 and OUT_OF_TIME not in out else []
                if failing and len(failing) < len(wanted):
                    for item in failing:
                        wanted.remove(item)
                        unbuilt.append(item + (why(out),))
                    REPORT["notes"].append(
                        "together, %s did not build: set aside, the rest installed together again"
                        % ", ".join(spec for spec, _ in failing))
                    continue
                break
            spec, source = missing
            wanted.remove(missing)
            if RESOLVE_BEFORE:
                # As of the date no release of it is served for this Python (all of them
                # for Pythons before it): perhaps a later one is.
                later.append((spec, source, why(out)))
            else:
                REPORT["not_prepared"].append({"what": spec, "source": source, "reason": why(out)})
            if not wanted:
                code = 0
                break
        # Out of time together (on a loaded machine, an sdist compiling for minutes): what
        # pip was building is set aside by name and the rest installed together again, so
        # one slow build never leaves every other requirement a few seconds each.
        # Again while another build runs out of the time (scrapy-14: lxml, then Twisted).
        aside = []
        while code != 0 and OUT_OF_TIME in out and len(aside) < MAX_DROPPED:
            # A release of the date whose build outlasts the time here is served as of its
            # first wheel for this Python, as one whose build fails is; tried together again.
            building, _ = being_built(CUT_SHORT)
            instant = None
            if RESOLVE_BEFORE and building and building not in SERVED_AS_OF:
                instant = first_wheel_after(building, RESOLVE_BEFORE)
            if instant:
                serve_as_of(building, instant, pip, "did not build within the preparation's time")
                code, out = run(pip + ["-r", "/tmp/proven-requirements.txt"], share=2.0 / 3)
                continue
            stuck = stuck_on(CUT_SHORT, wanted)
            if not stuck:
                break
            building, more = stuck
            aside += more
            wanted = [w for w in wanted if w not in more]
            REPORT["notes"].append(
                "together, the requirements ran out of their time building %s: %s set aside, "
                "the rest installed together again" % (building, ", ".join(spec for spec, _ in more)))
            with open("/tmp/proven-requirements.txt", "w") as f:
                f.write("\n".join(spec for spec, _ in wanted) + "\n")
            code, out = run(pip + ["-r", "/tmp/proven-requirements.txt"], share=2.0 / 3)
        if code == 0:
            REPORT["notes"].append("every requirement resolved together" + (" but those set aside" if aside else ""))
            # Those set aside after the rest, each with its share of what is left.
            for i, (spec, source) in enumerate(aside):
                code, out = run(pip + [spec], share=1.0 / (len(aside) - i))
                if code != 0 and RESOLVE_BEFORE and OUT_OF_TIME not in out:
                    later.append((spec, source, why(out)))
                elif code != 0:
                    REPORT["not_prepared"].append({"what": spec, "source": source, "reason": why(out)})
        else:
            wanted += aside
            # Together they do not resolve: each on its own, so one that cannot be had never
            # blocks the others.
            REPORT["notes"].append("the requirements did not resolve together: " + why(out))
            for i, (spec, source) in enumerate(wanted):
                # Each its share of what is left: one that hangs never starves the rest.
                share = 1.0 / (len(wanted) - i)
                code, out = run(pip + [spec], share=share)
                if code != 0 and OUT_OF_TIME not in out:
                    # An sdist whose build needs what the index does not serve (setuptools from
                    # an operator's mirror), or an old setup.py newer setuptools breaks: built
                    # again with the image's own setuptools and wheel.
                    code, again = run(pip + ["--no-build-isolation", spec], share=share)
                    if code == 0:
                        REPORT["notes"].append("%s built without build isolation" % spec)
                if code != 0 and RESOLVE_BEFORE:
                    # Nothing of that date installs here: resolved later, after the others,
                    # so none of them installs its date's dependencies over its own.
                    later.append((spec, source, why(out)))
                elif code != 0:
                    REPORT["not_prepared"].append({"what": spec, "source": source, "reason": why(out)})
    for i, (spec, source, reason) in enumerate(unbuilt):
        # Built once more only otherwise than it failed: with the environment's own
        # setuptools and wheel (an old setup.py newer setuptools breaks), then at a later
        # instant whose release differs (`nearest_that_installs`).
        code, out = run(pip + ["--no-build-isolation", spec], share=1.0 / (len(unbuilt) - i))
        if code == 0:
            REPORT["notes"].append("%s built without build isolation" % spec)
        elif RESOLVE_BEFORE and OUT_OF_TIME not in out:
            later.append((spec, source, reason))
        else:
            REPORT["not_prepared"].append({"what": spec, "source": source, "reason": reason})
    for i, (spec, source, reason) in enumerate(later):
        if not nearest_that_installs(spec, pip, pip_now, reason, share=1.0 / (len(later) - i)):
            REPORT["not_prepared"].append({"what": spec, "source": source, "reason": reason})

    drop_own_release()
    superseded_releases_removed()
    project_layer_hook()
    test_time_limit_hook()

    if RESOLVE_BEFORE:
        dated_runner_or_the_images()
    runner_beside_pins(pip)
    runner_on_path_is_the_environments()

    code, out = run([PY, "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"], timeout=120)
    try:
        REPORT["installed"] = ["%s==%s" % (p["name"], p["version"]) for p in json.loads(out.strip().splitlines()[-1])]
    except Exception:
        pass
    # The run's root filesystem is read-only: compiled now, or compiled at every run.
    run([PY, "-m", "compileall", "-q", "-j", "0", VENV], timeout=600)
    compiled_note()
    with open(DEPS + "/report.json", "w") as f:
        json.dump(REPORT, f, indent=1)


main()
