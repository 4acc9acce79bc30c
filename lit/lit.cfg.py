# lit configuration for the sasstune command suite.
import os
import sys
import lit.formats

config.name = "sasstune"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".ll"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.st_build_dir, "lit")
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]

config.substitutions.append(("%sasstune-cc", os.path.join(config.st_build_dir, "sasstune-cc")))
config.substitutions.append(("%sasstune", os.path.join(config.st_build_dir, "sasstune")))
config.substitutions.append(("%libsasstune", os.path.join(config.st_build_dir, "libsasstune.so")))
config.substitutions.append(("%fixtures", config.st_fixtures))
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("FileCheck", config.st_filecheck))
config.substitutions.append(("%nvdisasm", os.path.join(config.st_triton_bin, "nvdisasm")))
config.substitutions.append(("%ptxas", os.path.join(config.st_triton_bin, "ptxas")))
# the mock CUDA driver and mock CUPTI (test/mock/) for GPU commands without a GPU
config.substitutions.append(("%cuda_mock", os.path.join(config.st_build_dir, "test", "libcuda_mock.so")))
config.substitutions.append(("%cupti_mock", os.path.join(config.st_build_dir, "test", "libcupti_mock.so")))

for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "HOME", "PATH", "SASSTUNE_NVDISASM"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Tests must not touch the user's cache.
config.environment["SASSTUNE_CACHE_DIR"] = os.path.join(config.test_exec_root, "cache")

if os.path.exists(os.path.join(config.st_build_dir, "sasstune-cc")):
    config.available_features.add("sasstune-cc")
if os.path.exists(os.path.join(config.st_build_dir, "test", "libcupti_mock.so")):
    config.available_features.add("cupti-mock")
if os.path.exists(os.path.join(config.st_triton_bin, "nvdisasm")):
    config.available_features.add("nvdisasm")
