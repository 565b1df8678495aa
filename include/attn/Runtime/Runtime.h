//===- Runtime.h - load and launch generated attention kernels --*- C++ -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
// The MLIR-free runtime: reads a kernel directory written by attn-compile
// (manifest.json + PTX/cubin, docs/kernel-abi.md), loads it through the
// CUDA driver API (dlopened, see CudaDriver.h) and launches it on raw device
// pointers. Failures are error values naming the CUDA call and error.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_RUNTIME_H
#define ATTN_RUNTIME_RUNTIME_H

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/Manifest.h"
#include "attn/Runtime/Status.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attn::runtime {

/// The run-time arguments of one launch: device pointers, the shape and
/// the strides (in elements) of Q [B, Hq, Nq, D], K and V [B, Hkv, Nk, *],
/// O [B, Hq, Nq, Dv] and LSE [B, Hq, Nq]. Head dims and dtype are the
/// manifest's.
struct LaunchArgs {
  cu::DevicePtr q = 0, k = 0, v = 0, o = 0, lse = 0;
  int64_t batch = 0, headsQ = 0, headsKv = 0, seqQ = 0, seqKv = 0;
  std::array<int64_t, 3> qStride{}, kStride{}, vStride{}, oStride{};
  std::array<int64_t, 2> lseStride{};
  /// Variants (docs/kernel-abi.md): the bias [B|1, Hq|1, Nq, Nk] (stride 0
  /// along broadcast dims) and, variable length, the i32 cu_seqlens
  /// [batch + 1]; seqQ/seqKv are then the maximum lengths.
  cu::DevicePtr bias = 0, cuSeqlensQ = 0, cuSeqlensKv = 0;
  std::array<int64_t, 3> biasStride{};
  /// Key padding (key_range kernels): i32 [batch] each, batch entry b sees
  /// keys [keyStart[b], keyEnd[b]).
  cu::DevicePtr keyStart = 0, keyEnd = 0;
  /// ALiBi kernels: f32 slopes, the slope of (b, h) at
  /// alibiSlopes[b · alibiSlopesStrideB + h] (stride 0: one [Hq] for all).
  cu::DevicePtr alibiSlopes = 0;
  int64_t alibiSlopesStrideB = 0;
  /// The softmax scale (a kernel argument, not part of the kernel): finite
  /// and non-zero; dense() sets the problem's.
  double softmaxScale = 0;

  /// The sizes a grid policy sees (LaunchGrid.h), `numSms` for persistent
  /// grids.
  GridSizes gridSizes(int64_t numSms) const;

  /// Arguments for dense row-major tensors of `problem`'s shape.
  static LaunchArgs dense(const AttentionProblem &problem, cu::DevicePtr q,
                          cu::DevicePtr k, cu::DevicePtr v, cu::DevicePtr o,
                          cu::DevicePtr lse);
};

/// An f32 parameter's 8-byte slot: the float's bits in the low 4 bytes
/// (what cuLaunchKernel reads for a 4-byte parameter).
uint64_t f32ParamSlot(double value);

/// Grid, block and dynamic shared memory of one launch.
struct LaunchGeometry {
  std::array<unsigned, 3> grid{};
  unsigned threads = 0;
  unsigned dynamicSharedMemory = 0;
};

/// Checks `args` against the manifest (positive sizes, head ratio, the
/// pointers the kernel needs) and computes the manifest's grid
/// (LaunchGrid.h). `numSms` is what a persistent grid sees.
Expected<LaunchGeometry> computeLaunchGeometry(const KernelManifest &m,
                                               const LaunchArgs &args,
                                               int64_t numSms = 0);

/// The kernel's argument list, filled by name in the manifest's order.
struct PackedParams {
  std::vector<uint64_t> storage; // one 8-byte slot per parameter
  /// The 128-byte TMA descriptors of "tensormap" parameters.
  struct alignas(64) TensorMap {
    uint64_t words[16];
  };
  std::vector<TensorMap> tensorMaps;
  std::vector<void *> pointers;  // what cuLaunchKernel takes
};
/// One 4-D tiled TMA descriptor {head dim, sequence, heads, batch} of a
/// tensor whose head dim is contiguous: what encodeTensorMap derives from a
/// manifest, and what the host lowering's attnMakeTensorMap passes.
struct TiledTensorMap {
  std::string tensor; // q, k, v, o: for messages
  cu::DevicePtr base = 0;
  int dataType = 0; // CU_TENSOR_MAP_DATA_TYPE_*
  int64_t elementBytes = 2;
  int64_t dim = 0, seq = 0, heads = 0, batch = 0;
  std::array<int64_t, 3> stride{}; // b, h, n in elements
  int64_t boxCols = 0, boxRows = 0;
  int64_t swizzle = 128; // bytes: 0, 32, 64 or 128
};
/// cuTensorMapEncodeTiled of `t`, with its 16-byte stride and alignment
/// rules checked first (an error names the tensor and stride).
Status encodeTiledTensorMap(const TiledTensorMap &t,
                            PackedParams::TensorMap &out);
/// Encodes the TMA descriptor of tensormap parameter `p` for `args`: a 4-D
/// tiled map {head dim, sequence, heads, batch} of q, k, v, or of o for
/// tensor "o" and "do" (the backward passes dO as `args.o`).
Status encodeTensorMap(const KernelManifest &m, const KernelParam &p,
                       const LaunchArgs &args, PackedParams::TensorMap &out);
/// Fills the manifest's parameters from `args`; an i32 parameter whose
/// value does not fit is an error naming it.
Expected<PackedParams> packParams(const KernelManifest &m,
                                  const LaunchArgs &args);
/// What packParams and the backward launch share: the manifest's
/// parameters in order, tensor maps through `encodeMap`, the others'
/// 8-byte values through `valueOf` (false: the parameter is not in
/// `abiName`, e.g. "the backward ABI"), i32 values checked for range.
Expected<PackedParams> packParamList(
    const KernelManifest &m, const std::string &abiName,
    const std::function<bool(const std::string &, uint64_t &)> &valueOf,
    const std::function<Status(const KernelParam &,
                               PackedParams::TensorMap &)> &encodeMap);

struct LoadOptions {
  /// Load the PTX even when a cubin is present (tests the JIT path).
  bool preferPtx = false;
  /// Device for a context when none is current on the calling thread.
  int deviceOrdinal = 0;
};

/// A loaded kernel: its module lives as long as this object.
class Kernel {
public:
  /// Reads `<dir>/manifest.json` and loads the cubin when present and
  /// loadable on this device, the PTX otherwise, into the current context
  /// (or the device's primary context when none is current).
  static Expected<std::unique_ptr<Kernel>> load(const std::string &dir,
                                                const LoadOptions &opts = {});
  ~Kernel();
  Kernel(const Kernel &) = delete;
  Kernel &operator=(const Kernel &) = delete;

  const KernelManifest &manifest() const { return man; }
  const std::string &directory() const { return dir; }
  /// "cubin" or "ptx".
  const std::string &loadedFrom() const { return from; }
  /// Why the cubin was not used ("" when it was, or when there is none).
  const std::string &loadNote() const { return note; }
  int64_t numSms() const { return sms; }
  int registers() const { return regs; }
  cu::Context context() const { return ctx; }
  const CudaDriver &driver() const { return *drv; }
  /// The loaded module (the backward kernels look their other entries up
  /// in it).
  cu::Module cuModule() const { return module; }

  Expected<LaunchGeometry> geometry(const LaunchArgs &args) const {
    return computeLaunchGeometry(man, args, sms);
  }
  /// Launches asynchronously on `stream` (nullptr: the legacy default
  /// stream). Errors from the kernel itself surface at the next sync.
  Status launch(const LaunchArgs &args, cu::Stream stream) const;

private:
  Kernel() = default;
  const CudaDriver *drv = nullptr;
  KernelManifest man;
  std::string dir, from, note;
  cu::Context ctx = nullptr;
  cu::Module module = nullptr;
  cu::Function function = nullptr;
  int64_t sms = 0;
  int regs = -1;
};

} // namespace attn::runtime

#endif // ATTN_RUNTIME_RUNTIME_H
