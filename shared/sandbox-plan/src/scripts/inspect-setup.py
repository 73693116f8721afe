# Proven: reads what a project's setup.py declares, in an inspection container of its own.
#
# setup.py is code of the tree under review: it runs here with no network, nothing
# writable but this container's own scratch, and nothing mounted that a later run reads.
# Its setup() call is captured, never executed for real; what it declared is printed after
# a marker and becomes part of the prepared layer's key (DESIGN.md section 6).
import json, os, sys
captured = {}
def setup(**kw):
    captured.update(kw)
try:
    import setuptools
    setuptools.setup = setup
except Exception:
    pass
try:
    import distutils.core
    distutils.core.setup = setup
except Exception:
    pass
sys.argv = ["setup.py", "egg_info"]
sys.path.insert(0, os.getcwd())
g = {"__name__": "__main__", "__file__": os.path.abspath("setup.py")}
exec(compile(open("setup.py", "rb").read(), "setup.py", "exec"), g)
def norm(v):
    if v is None:
        return None
    if isinstance(v, str):
        return [l.strip() for l in v.splitlines() if l.strip() and not l.strip().startswith("#")]
    if isinstance(v, dict):
        return {str(k): norm(x) for k, x in v.items()}
    try:
        return [str(x) for x in v]
    except TypeError:
        return str(v)
out = {k: norm(captured.get(k)) for k in ("install_requires", "tests_require", "extras_require", "setup_requires")}
out["python_requires"] = captured.get("python_requires") and str(captured.get("python_requires"))
out["name"] = captured.get("name") and str(captured.get("name"))
print("\n@@proven-setup@@" + json.dumps(out))
