"""Builds the attn wheel: dist/attn-<version>-py3-none-<platform>.whl.

    python3 scripts/attn_wheel.py [--out dist] [--no-build]

(scripts/build-wheel.sh runs this.) It builds the native parts with CMake
in $ATTN_BUILD_DIR (default: build/, configured as scripts/setup.sh does
when it is not yet): libattn_compiler.so (the compiler's C API linked
against the static MLIR/LLVM archives, lib/CAPI/CMakeLists.txt),
libattn_runtime.so, libattn_tuning_lookup.so and attn-tune, all MLIR-free
at run time. It then writes the wheel with zipfile: python/attn, those four
stripped into attn/_lib/ (where attn._native finds them), and the
dist-info (METADATA from pyproject.toml, WHEEL, entry_points.txt, RECORD).
``--no-build`` packs what the build directory holds.

The same module is pyproject.toml's in-tree PEP 517 backend, so
``pip wheel --no-build-isolation .`` gives the same wheel with no other
dependency.
"""

import argparse
import base64
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLVM_PREFIX = Path("/usr/lib/llvm-22")
# (file in the build directory, its name in attn/_lib/)
NATIVE = [("lib/libattn_compiler.so", "libattn_compiler.so"),
          ("lib/libattn_runtime.so", "libattn_runtime.so"),
          ("lib/libattn_tuning_lookup.so", "libattn_tuning_lookup.so"),
          ("bin/attn-tune", "attn-tune")]
# What a wheel may weigh (issue 22).
MAX_MIB = 40
TARGETS = ["attn_compiler", "attn_runtime", "attn_tuning_lookup", "attn-tune"]


def project() -> dict:
    """pyproject.toml's [project] table (tomllib from Python 3.11; the
    few keys used here otherwise)."""
    text = (ROOT / "pyproject.toml").read_text()
    try:
        import tomllib
        return tomllib.loads(text)["project"]
    except ImportError:
        keys = dict(re.findall(r'^([a-z-]+) = "([^"]*)"$', text, re.M))
        return {k: keys[k] for k in ("name", "version", "description",
                                     "requires-python")}


def build_native(build: Path) -> None:
    if not (build / "build.ninja").is_file():
        subprocess.run(
            ["cmake", "-G", "Ninja", "-S", str(ROOT), "-B", str(build),
             "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_COMPILER=gcc",
             "-DCMAKE_CXX_COMPILER=g++",
             f"-DMLIR_DIR={LLVM_PREFIX}/lib/cmake/mlir",
             f"-DLLVM_DIR={LLVM_PREFIX}/lib/cmake/llvm",
             f"-DLLVM_EXTERNAL_LIT={LLVM_PREFIX}/bin/lit"], check=True)
    subprocess.run(["cmake", "--build", str(build), "--target"] + TARGETS,
                   check=True)


def platform_tag() -> str:
    """linux_<machine>: the libraries need this host's glibc and
    libstdc++ or newer (Debian 12: glibc 2.36, GCC 12)."""
    return "linux_" + platform.machine()


def metadata(proj: dict) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {proj['name']}",
             f"Version: {proj['version']}",
             f"Summary: {proj['description']}",
             f"Requires-Python: {proj['requires-python']}",
             "Provides-Extra: torch", 'Requires-Dist: torch; extra == "torch"']
    readme = ROOT / "README.md"
    if readme.is_file():
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + readme.read_text()
    return "\n".join(lines) + "\n"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return f"{name},sha256={digest.rstrip(b'=').decode()},{len(data)}"


def write_wheel(build: Path, out: Path) -> Path:
    proj = project()
    name, version = proj["name"], proj["version"]
    tag = f"py3-none-{platform_tag()}"
    dist_info = f"{name}-{version}.dist-info"
    files = []  # (name in the wheel, bytes, executable)
    package = ROOT / "python" / "attn"
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" not in path.parts:
            files.append((f"attn/{path.relative_to(package).as_posix()}",
                          path.read_bytes(), False))
    with tempfile.TemporaryDirectory() as tmp:
        for built, packed in NATIVE:
            source = build / built
            if not source.is_file():
                sys.exit(f"attn_wheel: {source} is missing: build it "
                         f"(cmake --build {build} --target "
                         f"{' '.join(TARGETS)})")
            stripped = Path(tmp) / packed
            shutil.copyfile(source, stripped)
            subprocess.run(["strip", "--strip-unneeded", str(stripped)],
                           check=True)
            files.append((f"attn/_lib/{packed}", stripped.read_bytes(),
                          packed == "attn-tune"))
    files.append((f"{dist_info}/METADATA", metadata(proj).encode(), False))
    files.append((f"{dist_info}/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: attn_wheel\n"
        f"Root-Is-Purelib: false\nTag: {tag}\n").encode(), False))
    scripts = proj.get("scripts", {"attn-tune": "attn._native:attn_tune_main"})
    files.append((f"{dist_info}/entry_points.txt", (
        "[console_scripts]\n" + "".join(
            f"{k} = {v}\n" for k, v in scripts.items())).encode(), False))
    record = [_record_line(n, d) for n, d, _ in files]
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD",
                  ("\n".join(record) + "\n").encode(), False))

    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{name}-{version}-{tag}.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED,
                         compresslevel=9) as zf:
        for n, data, executable in files:
            info = zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            # A regular file (S_IFREG) with its mode: pip keeps the x bit.
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            zf.writestr(info, data)
    wheel.write_bytes(buffer.getvalue())
    return wheel


def build_dir() -> Path:
    return Path(os.environ.get("ATTN_BUILD_DIR") or ROOT / "build")


# --- PEP 517 ----------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    build_native(build_dir())
    return write_wheel(build_dir(), Path(wheel_directory)).name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "dist"),
                        help="folder for the wheel (default: dist/)")
    parser.add_argument("--no-build", action="store_true",
                        help="pack what the build directory holds")
    args = parser.parse_args()
    if not args.no_build:
        build_native(build_dir())
    wheel = write_wheel(build_dir(), Path(args.out))
    size = wheel.stat().st_size / 2**20
    print(f"wrote {wheel} ({size:.1f} MiB)")
    if size > MAX_MIB:
        print(f"attn_wheel: error: the wheel is over {MAX_MIB} MiB",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
