# Sourced by the GPU-host scripts (scripts/gpu-*.sh): builds the MLIR-free
# part of attn (-DATTN_ENABLE_COMPILER=OFF: the runtime, attn-launch) there.
#   build_gpu_runtime DIR TARGET...
# configures DIR (Release, Ninja), builds the targets, logs to
# $OUT/build.log and, if that fails, prints the log's end and exits 2.
build_gpu_runtime() {
  local dir="$1"; shift
  { cmake -G Ninja -S . -B "$dir" -DATTN_ENABLE_COMPILER=OFF \
      -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$dir" -j "$(nproc)" --target "$@"; } \
    >"$OUT/build.log" 2>&1 ||
    { echo "!! build failed"; tail -20 "$OUT/build.log"; exit 2; }
}
