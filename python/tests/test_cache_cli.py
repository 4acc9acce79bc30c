"""python -m sasstune cache list|show|clear: runs the `sasstune` command found beside the library
(or $SASSTUNE_CLI, or on PATH) with the adapter's cache folder."""
import json
import os
import stat

import pytest
from test_budget import _store_negative

from sasstune import __main__ as cli
from sasstune import _lib, _settings


def _fake_cli(folder, out):
    path = os.path.join(str(folder), "sasstune")
    with open(path, "w") as f:
        f.write('#!/bin/sh\nfor a in "$@"; do echo "$a"; done > %s\nexit 3\n' % out)
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


def test_runs_the_command_beside_the_library_with_the_cache_folder(tmp_path, monkeypatch):
    lib_dir = tmp_path / "pkg"
    lib_dir.mkdir()
    (lib_dir / "libsasstune.so").write_bytes(b"")
    out = tmp_path / "args"
    _fake_cli(lib_dir, out)
    monkeypatch.setenv("SASSTUNE_LIBRARY", str(lib_dir / "libsasstune.so"))
    monkeypatch.delenv("SASSTUNE_CLI", raising=False)
    assert cli.main(["cache", "list", "--json"]) == 3  # its exit status
    assert out.read_text().split("\n")[:4] == ["cache", "list", "--json", "--dir"]
    assert out.read_text().split("\n")[4] == os.environ["SASSTUNE_CACHE_DIR"]
    # --dir given: passed as is
    assert cli.main(["cache", "show", "abcd", "--dir", "/x"]) == 3
    assert out.read_text().split() == ["cache", "show", "abcd", "--dir", "/x"]


def test_no_command_is_an_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SASSTUNE_LIBRARY", str(tmp_path / "libsasstune.so"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert cli.main(["cache", "list"]) == 1
    assert "no sasstune command" in capsys.readouterr().err


def test_real_command_lists_a_negative_entry(tmp_path, capfd):
    lib = _lib.find_library()
    if not os.path.isabs(lib) or not os.path.isfile(os.path.join(os.path.dirname(lib), "sasstune")):
        pytest.skip("no sasstune command beside %s" % lib)
    stock = b"\x7fELF not really a cubin"
    _store_negative(tmp_path / "sasstune", stock, "add_kernel", "12.8.93", "10s")
    assert cli.main(["cache", "list"]) == 0
    text = capfd.readouterr().out
    assert "add_kernel" in text and "nothing beat stock (best 0.998x, budget 10s)" in text, text
    assert "1 entry (1 negative, 0 stale, 0 invalid) in %s" % _settings.current().resolved_cache_dir() in text
    assert cli.main(["cache", "clear", "--json"]) == 0
    assert json.loads(capfd.readouterr().out)["kept"] == 0
