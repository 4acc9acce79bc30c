"""The `sasstune` and `sasstune-cc` commands of an installed package (pyproject.toml's
[project.scripts]): pip's launchers on PATH call these, which exec the binaries that
`pip install .` put inside this package, next to libsasstune.so and sasstune-worker (where the
command looks for its worker and sasstune-cc for the library; cmake/wheel.cmake)."""
import os
import sys

_MISSING = {
    "sasstune": "this sasstune package holds no sasstune command (install it with `pip install .` "
                "from the repository, which builds it)",
    "sasstune-cc": "not in this package: it is built only where LLVM 19 (llvm-config-19, libLLVM) is found "
                   "at build time, and never into the portable wheel; apt-get install llvm-19-dev and run "
                   "`pip install .` from the repository again",
}


def binary(name):
    """The path of the installed binary NAME (whether or not it exists)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


def _exec(name):
    path = binary(name)
    if not os.access(path, os.X_OK):
        sys.stderr.write("%s: %s\n" % (name, _MISSING[name]))
        return 1
    os.execv(path, [name] + sys.argv[1:])
    return 1  # not reached: execv returns only by raising


def sasstune():
    return _exec("sasstune")


def sasstune_cc():
    return _exec("sasstune-cc")
