"""Where attn's native libraries and tools are, in one place.

An installed wheel carries them in the package (``attn/_lib/``:
libattn_compiler.so, libattn_runtime.so, libattn_tuning_lookup.so and
attn-tune). In a source checkout they come from a CMake build tree:
$ATTN_BUILD_DIR, else the repository's ``build*/`` folders, newest first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

PACKAGE_LIB = Path(__file__).resolve().parent / "_lib"
_REPO = Path(__file__).resolve().parents[2]


def build_dirs() -> List[Path]:
    """The CMake build trees to look in: $ATTN_BUILD_DIR, else the
    repository's build*/ folders."""
    if os.environ.get("ATTN_BUILD_DIR"):
        return [Path(os.environ["ATTN_BUILD_DIR"])]
    return sorted(d for d in _REPO.glob("build*") if d.is_dir())


def candidates(subdir: str, name: str, env: Optional[str] = None,
               package_name: Optional[str] = None) -> List[Path]:
    """Where to look for ``name``: $<env> when set (alone), else the
    package's _lib/ (as ``package_name`` when the wheel's differs), then
    ``<build>/<subdir>/`` of every build tree, the newest file first."""
    if env and os.environ.get(env):
        return [Path(os.environ[env])]
    built = [d / subdir / name for d in build_dirs()]
    built.sort(key=lambda p: -p.stat().st_mtime if p.is_file() else 0)
    return [PACKAGE_LIB / (package_name or name)] + built


def find(subdir: str, name: str, env: Optional[str] = None,
         package_name: Optional[str] = None) -> Optional[Path]:
    """The first existing file of candidates(...), or None."""
    return next((p for p in candidates(subdir, name, env, package_name)
                 if p.is_file()), None)


# The compiler's C API (attn-c/Compiler.h, attn-c/Execution.h): the wheel's
# self-contained libattn_compiler.so, else a build tree's libattn-c.so
# (target AttnCAPI; the tree's libattn_compiler.so only through
# $ATTN_COMPILER_LIB).
COMPILER_LIB = dict(subdir="lib", name="libattn-c.so",
                    env="ATTN_COMPILER_LIB",
                    package_name="libattn_compiler.so")


def compiler_library() -> Optional[Path]:
    return find(**COMPILER_LIB)


def find_tool(name: str, env: str) -> Optional[str]:
    """A tool: $<env> (as given), the package's _lib/, a build tree's
    bin/, then PATH."""
    import shutil
    if os.environ.get(env):
        return os.environ[env]
    path = find("bin", name)
    return str(path) if path is not None else shutil.which(name)


def attn_tune_main() -> None:
    """The wheel's ``attn-tune`` command: runs the packaged binary."""
    tool = PACKAGE_LIB / "attn-tune"
    if not tool.is_file():
        sys.exit(f"attn-tune: {tool} is missing from this installation")
    os.execv(str(tool), [str(tool)] + sys.argv[1:])
