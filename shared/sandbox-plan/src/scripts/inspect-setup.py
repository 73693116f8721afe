# Proven: reads what a project's setup.py declares, in an inspection container of its own.
#
# setup.py is code of the tree under review: it runs here with no network, nothing
# writable but this container's own scratch, and nothing mounted that a later run reads.
# Its setup() call is captured, never executed for real; what it declared is printed after
# a marker and becomes part of the prepared layer's key (DESIGN.md section 6).
import importlib.abc, importlib.machinery, json, os, sys, types
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
sys.path.insert(0, os.getcwd())


class StandIn(types.ModuleType):
    """A module this image has not, standing in while setup.py is read (a build requirement
    imported at the top of setup.py: `import numpy`, `from Cython.Build import cythonize`):
    any attribute is another stand-in."""
    __path__ = []
    __version__ = "999"

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything()


class Anything:
    """What a stand-in's attribute is, and what calling one gives (`numpy.get_include()`,
    `cythonize(extensions)`): only setup()'s arguments of requirements are read."""
    def __call__(self, *args, **kwargs):
        return Anything()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything()

    def __iter__(self):
        return iter(())

    def __str__(self):
        return ""


class StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on the import path: a module named here, and its submodules, is a stand-in."""
    names = []

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in self.names:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        return StandIn(spec.name)

    def exec_module(self, module):
        pass


stand_ins = StandIns()
sys.meta_path.append(stand_ins)


def read(argv):
    captured.clear()
    sys.argv = ["setup.py"] + argv
    g = {"__name__": "__main__", "__file__": os.path.abspath("setup.py")}
    exec(compile(open("setup.py", "rb").read(), "setup.py", "exec"), g)


# A setup.py that builds extensions often needs its build requirements (Cython, numpy),
# which only a build environment has, to get as far as its setup() call (pandas:
# "Cannot cythonize without Cython installed."). Most skip that work for a command that
# builds nothing: pandas for `sdist` and `clean`, numpy's and scikit-learn's family for
# `egg_info` and `--help`. It is read as pip reads it (`egg_info`) first, then with every
# such command named; a module it imports that this image has not is a stand-in, one at a
# time, named in what it printed.
NO_BUILD = ["egg_info", "sdist", "clean", "--help"]
error = None
for argv in (["egg_info"], NO_BUILD):
    for _ in range(8):
        try:
            read(argv)
            error = None
            break
        except ModuleNotFoundError as e:
            error = e
            top = (e.name or "").split(".")[0]
            if not top or top in stand_ins.names:
                break
            stand_ins.names.append(top)
        except BaseException as e:
            error = e
            break
    if error is None or captured:
        break
if error is not None and not captured:
    raise error


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
out["read_with"] = {"argv": sys.argv[1:], "stand_ins": stand_ins.names}
print("\n@@proven-setup@@" + json.dumps(out))
