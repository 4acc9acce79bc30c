"""The `sasstune` / `sasstune-cc` launchers (sasstune/_commands.py, pyproject.toml [project.scripts]):
they exec the binary inside the package with the user's arguments, say why when it is missing, and
in an installed package (scripts/test-wheel.sh) the binaries, worker and library share one folder."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import INSTALLED
from sasstune import _commands, _lib


def _launch(tmp_path, name, args, binary):
    """Run the launcher for NAME in a child whose binary() is BINARY; returns the CompletedProcess."""
    code = textwrap.dedent("""
        import sys
        from sasstune import _commands
        _commands.binary = lambda name: %r
        sys.argv = [%r] + %r
        sys.exit(getattr(_commands, %r)())
    """) % (binary, name, args, name.replace("-", "_"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


def test_launcher_execs_the_binary_with_the_arguments(tmp_path):
    fake = tmp_path / "sasstune"
    fake.write_text('#!/bin/sh\necho "argv0=$0"; for a in "$@"; do echo "arg=$a"; done; exit 7\n')
    fake.chmod(0o755)
    p = _launch(tmp_path, "sasstune", ["inspect", "a b.cubin", "--json"], str(fake))
    assert p.returncode == 7, p.stderr
    assert p.stdout.splitlines()[1:] == ["arg=inspect", "arg=a b.cubin", "arg=--json"]


@pytest.mark.parametrize("name,why", [("sasstune", "holds no sasstune command"),
                                      ("sasstune-cc", "LLVM 19")])
def test_a_missing_binary_is_explained(tmp_path, name, why):
    p = _launch(tmp_path, name, ["--help"], str(tmp_path / "absent"))
    assert p.returncode == 1
    assert p.stderr.startswith(name + ": ") and why in p.stderr, p.stderr


def test_binaries_live_in_the_package_folder():
    assert os.path.dirname(_commands.binary("sasstune")) == os.path.dirname(os.path.abspath(_commands.__file__))


@pytest.mark.skipif(not INSTALLED, reason="the installed package only (scripts/test-wheel.sh)")
def test_installed_layout_and_the_command_on_path():
    pkg = os.path.dirname(os.path.abspath(_commands.__file__))
    assert pkg.startswith(sys.prefix + os.sep) and sys.prefix != sys.base_prefix
    for f in ("sasstune", "sasstune-worker"):
        assert os.access(os.path.join(pkg, f), os.X_OK), f
    assert _lib.find_library() == os.path.join(pkg, "libsasstune.so")
    exe = shutil.which("sasstune")
    assert exe and os.path.dirname(exe) == os.path.join(sys.prefix, "bin"), exe
    p = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("sasstune "), (p.stdout, p.stderr)
