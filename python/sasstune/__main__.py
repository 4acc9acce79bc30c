"""python -m sasstune status | cache list|show KEY|clear [...] | install-pth [--user | --dir DIR] |
uninstall-pth [--user | --dir DIR]"""
import argparse
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig

from . import _autoload, _lib, _settings


def _site_dir(a):
    if a.dir:
        return a.dir
    if a.user:
        return site.getusersitepackages()
    return sysconfig.get_paths()["purelib"]


def cmd_status(a):
    out = {"adapter": __import__("sasstune").__version__, "library": None, "library_version": None,
           "candidates": [p for p, _ in _lib.candidates()]}
    try:
        p = _lib.load()
        out["library"], out["library_version"] = p.path, p.version
    except _lib.SasstuneError as e:
        out["library_error"] = str(e)
    try:
        s = _settings.current()
        out["settings"] = dict(s.values, mode=s.mode)
        out["schedule_cache"] = s.resolved_cache_dir()
    except ValueError as e:
        out["settings_error"] = str(e)
    out["SASSTUNE"] = os.environ.get("SASSTUNE")
    pths = [os.path.join(d, _autoload.PTH_NAME) for d in site.getsitepackages() + [site.getusersitepackages()]]
    out["pth_installed"] = [p for p in pths if os.path.exists(p)]
    print(json.dumps(out, indent=1))
    return 0 if out["library"] else 1


def find_cli():
    """The `sasstune` command: $SASSTUNE_CLI, else the one beside the library this adapter loads (a
    bundled package carries both, a build folder holds both), else the PATH's.  None if none."""
    env = os.environ.get("SASSTUNE_CLI")
    if env:
        return env
    lib = _lib.find_library()
    if os.path.isabs(lib):
        beside = os.path.join(os.path.dirname(lib), "sasstune")
        if os.path.isfile(beside) and os.access(beside, os.X_OK):
            return beside
    return shutil.which("sasstune")


def cmd_cache(a):
    """`sasstune cache ...` with the adapter's cache folder (settings and environment) unless --dir."""
    cli = find_cli()
    if not cli:
        print("python -m sasstune cache: no sasstune command beside %s nor on PATH (set SASSTUNE_CLI)" %
              _lib.find_library(), file=sys.stderr)
        return 1
    argv = [cli, "cache"] + a.rest
    if "--dir" not in a.rest and not any(x in ("-h", "--help") for x in a.rest):
        try:
            d = _settings.current().resolved_cache_dir()
        except ValueError as e:
            print("python -m sasstune cache: %s" % e, file=sys.stderr)
            return 2
        if d:
            argv += ["--dir", d]
    sys.stdout.flush()
    return subprocess.run(argv).returncode


def cmd_install_pth(a):
    d = _site_dir(a)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, _autoload.PTH_NAME)
    with open(path, "w") as f:
        f.write(_autoload.PTH_LINE)
    print("wrote %s: every Python of this environment now imports sasstune at start-up when SASSTUNE=1" % path)
    return 0


def cmd_uninstall_pth(a):
    path = os.path.join(_site_dir(a), _autoload.PTH_NAME)
    if os.path.exists(path):
        os.remove(path)
        print("removed %s" % path)
    else:
        print("%s: not there" % path)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m sasstune", description="sasstune's Triton adapter")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("status", help="which library, which settings, where the caches are")
    c = sub.add_parser("cache", help="the schedule cache: list, show KEY, clear [--older-than D] (runs `sasstune "
                       "cache` with this adapter's cache folder)", add_help=False)
    c.add_argument("rest", nargs=argparse.REMAINDER)
    for name, help_ in (("install-pth", "make SASSTUNE=1 work without `import sasstune`"),
                        ("uninstall-pth", "remove that file")):
        p = sub.add_parser(name, help=help_)
        g = p.add_mutually_exclusive_group()
        g.add_argument("--user", action="store_true", help="the user site-packages")
        g.add_argument("--dir", help="this site folder")
    a = ap.parse_args(argv)
    return {"status": cmd_status, "cache": cmd_cache, "install-pth": cmd_install_pth,
            "uninstall-pth": cmd_uninstall_pth}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
