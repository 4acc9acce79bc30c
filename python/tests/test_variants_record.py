"""Plugin API 2 from the adapter: the record carries the PTX, the ptxas binary Triton ran and its
options (a real sm_90 compile, no GPU), the options reproduce Triton's cubin byte for byte, the
same record reaches the launch-time calls, and the variants setting changes the cache key."""
import os
import subprocess

import pytest
from conftest import FakePlugin, compile_add, store_entry
import triton

import sasstune
from sasstune import _lib, _triton


class Spy(FakePlugin):
    """The real library, with every call recorded."""

    def __init__(self):
        real = _lib.load()
        super().__init__(None, version=real.version)
        self.real = real

    def run(self, cubin, **kw):
        self.calls.append(dict(kw, cubin=bytes(cubin)))
        return self.real.run(cubin, **kw)


def _compile(options=None):
    from conftest import ADD_SIG, add_kernel
    from triton.backends.compiler import GPUTarget
    src = triton.compiler.ASTSource(fn=add_kernel, signature=ADD_SIG, constexprs={"B": 1024})
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options)


def test_library_speaks_api_2():
    p = _lib.load()
    assert p.api_version == 2 and p._run2 is not None


def test_record_carries_ptx_ptxas_and_options():
    spy = Spy()
    sasstune.enable()
    _lib.set_plugin(spy)
    ck = compile_add()
    c = spy.calls[0]
    assert ".entry add_kernel" in c["ptx"] and ".target sm_90a" in c["ptx"]
    assert c["ptx"] == _triton._ptx_of(ck)  # what Triton kept is what the launch-time calls pass
    assert os.path.basename(c["ptxas_path"]) == "ptxas" and os.access(c["ptxas_path"], os.X_OK)
    assert c["ptxas_options"] == "-lineinfo --gpu-name=sm_90a"
    st = ck.metadata.sasstune
    assert st["ptxas_path"] == c["ptxas_path"] and st["ptxas_options"] == c["ptxas_options"]
    assert _triton._made_by(st, _triton._ptx_of(ck)) == {k: c[k] for k in ("ptx", "ptxas_path", "ptxas_options")}


def test_options_follow_the_compile_and_reproduce_its_cubin(tmp_path):
    spy = Spy()
    sasstune.enable()
    _lib.set_plugin(spy)
    ck = _compile({"enable_fp_fusion": False, "ptx_options": "--maxrregcount=40"})
    c = spy.calls[0]
    assert c["ptxas_options"] == "-lineinfo --fmad=false --maxrregcount=40 --gpu-name=sm_90a"
    # ptxas with these options on this PTX gives Triton's cubin, byte for byte
    ptx = tmp_path / "k.ptx"
    ptx.write_text(c["ptx"])
    out = tmp_path / "k.cubin"
    subprocess.run([c["ptxas_path"], *c["ptxas_options"].split(), str(ptx), "-o", str(out)], check=True,
                   timeout=120)
    assert out.read_bytes() == c["cubin"] == ck.kernel


def test_other_triton_versions_pass_no_options(monkeypatch):
    monkeypatch.setattr(triton, "__version__", "3.7.0")
    path, opts = _triton.ptxas_command(object(), 90)
    assert path and opts is None
    monkeypatch.setattr(triton, "__version__", "3.6.0")
    assert _triton.ptxas_command(None, 90)[1] is None  # no compile options: unknown


def test_an_api_1_library_gets_the_rest_through_run(tmp_path):
    p = _lib.Plugin(_lib.find_library())
    p._run2 = None  # as for a library whose api_version is 1
    r = p.run(b"\x7fELF-not-really", kernel="k", options_json='{"mode": "cache-only", "cache_dir": "%s"}' % tmp_path,
              ptx=".version 8.7", ptxas_path="/x/ptxas", ptxas_options="-lineinfo")
    assert r.status == "unchanged" and r.cubin == b"\x7fELF-not-really"


def test_variants_setting_is_validated_and_namespaced(monkeypatch):
    monkeypatch.setenv("SASSTUNE_VARIANTS", "maybe")
    with pytest.raises(ValueError, match="SASSTUNE_VARIANTS"):
        sasstune.enable()
    monkeypatch.setenv("SASSTUNE_VARIANTS", "off")
    sasstune.enable()
    off = _triton.namespace()[0]
    sasstune.enable(variants="on")
    assert '"variants": "on"' in _triton.settings().options()
    assert _triton.namespace()[0] != off  # another Triton cache namespace


def test_variants_on_changes_the_key(tmp_path, monkeypatch):
    """An entry under the plain key is a hit with variants off, and not with variants on (the key
    then names the ptxas versions found and Triton's options)."""
    sasstune.enable()
    stock = compile_add().kernel
    store_entry(tmp_path / "sasstune", stock, stock + b"\0TUNED", "add_kernel", _triton.ptxas_version(90))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "off"))
    _triton.STATS.reset()
    compile_add()
    assert sasstune.stats()["events"][-1]["status"] == "cached"
    sasstune.enable(variants="on")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "on"))
    _triton.STATS.reset()
    ck = compile_add()
    ev = sasstune.stats()["events"][-1]
    assert ev["status"] == "unchanged" and "cache miss" in ev["message"]
    assert not ck.kernel.endswith(b"\0TUNED")
