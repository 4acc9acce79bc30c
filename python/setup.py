"""Packaging extras that pyproject.toml cannot say:

* the wheel carries sasstune-autoload.pth at the top of site-packages, so that SASSTUNE=1 works
  in every Python of the environment without `import sasstune` (the line imports nothing unless
  SASSTUNE is set);
* SASSTUNE_BUNDLE=BUILD_DIR copies BUILD_DIR/libsasstune.so, BUILD_DIR/sasstune-worker and the
  BUILD_DIR/sasstune command (for `python -m sasstune cache`) into the package, where the adapter
  looks first after $SASSTUNE_LIBRARY.
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPy(build_py):

    def run(self):
        super().run()
        os.makedirs(self.build_lib, exist_ok=True)
        shutil.copyfile(os.path.join(HERE, "sasstune", "autoload.pth"),
                        os.path.join(self.build_lib, "sasstune-autoload.pth"))
        bundle = os.environ.get("SASSTUNE_BUNDLE")
        if bundle:
            for name in ("libsasstune.so", "sasstune-worker", "sasstune"):
                src = os.path.join(bundle, name)
                if not os.path.isfile(src):
                    raise SystemExit("SASSTUNE_BUNDLE: %s is missing" % src)
                shutil.copy2(src, os.path.join(self.build_lib, "sasstune", name))

setup(cmdclass={"build_py": BuildPy})
