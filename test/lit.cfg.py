# -*- Python -*-
# lit configuration for the attn regression tests.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# The build tree's libraries (libattn-c.so, ...), wherever the build is.
config.substitutions.append(("%attn_lib", os.path.join(config.attn_obj_root, "lib")))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# `not` and `count` are only substituted after a pipe; everywhere else
# (`RUN: not attn-opt ...`) they are found on PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.attn_tools_dir, append_path=True)

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
tools = ["attn-opt", "attn-run", "attn-compile", "attn-tune"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ptxas from the CUDA toolkit, for tests that assemble generated PTX.
ptxas = os.path.join(config.cuda_root, "bin", "ptxas") if config.cuda_root else ""
if ptxas and os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# mlir-runner and MLIR's runner utilities (printMemrefF32), for tests that
# JIT-run host code lowered by upstream passes.
_llvm_lib = os.path.join(config.llvm_tools_dir, "..", "lib")
_runner_utils = [os.path.join(_llvm_lib, n) for n in
                 ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so")]
if os.path.exists(os.path.join(config.llvm_tools_dir, "mlir-runner")) and \
        all(os.path.exists(p) for p in _runner_utils):
    config.available_features.add("mlir-runner")
    config.substitutions.append(("%mlir_runner_utils", ",".join(_runner_utils)))

# A `cuda` feature only where a GPU answers; GPU tests say REQUIRES: cuda and
# show up as UNSUPPORTED (skipped) elsewhere.
def _has_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
        return out.returncode == 0 and "GPU" in out.stdout
    except Exception:
        return False

if _has_gpu():
    config.available_features.add("cuda")

# scripts/sanitize.sh: the sanitizer options reach every test, and processes
# that are not instrumented themselves (python3 loading libattn_runtime.so)
# get the sanitizer runtimes preloaded.
llvm_config.with_system_environment(["ASAN_OPTIONS", "UBSAN_OPTIONS"])
if os.environ.get("ATTN_SANITIZER_PRELOAD"):
    config.environment["LD_PRELOAD"] = os.environ["ATTN_SANITIZER_PRELOAD"]
    config.available_features.add("sanitizer")
