// The end-to-end check of the host lowering on a GPU
// (scripts/gpu-host-lowering.sh): a caller's function in destination-passing
// style, Q/K/V/O/LSE device buffers of dynamic sequence length, a causal
// grouped-query attention (8 query heads on 2 key/value heads, D = 64,
// bf16). convert-attn-to-gpu-launch makes the kernel write O and LSE into
// the caller's buffers and computes the grid from the dynamic sizes. The
// RUN lines check the host code here; the GPU run is the script's.

// RUN: attn-opt %s --attn-select-kernel-config="family=sm80" --convert-attn-to-gpu --convert-attn-to-gpu-launch | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --attn-select-kernel-config="family=sm90a" --convert-attn-to-gpu --convert-attn-to-gpu-launch | FileCheck %s --check-prefix=SM90A

// No output buffers of its own: the kernel writes the caller's O and LSE.
// SM80-LABEL: func.func @attention
// SM80-NOT: gpu.alloc
// SM80: arith.ceildivui %{{.*}}, %c128 : index
// SM80-NOT: gpu.alloc
// SM80: gpu.launch_func async {{.*}} @attn_kernels::@attn_fwd_d64_bf16_causal_m128n64w4s2
// SM80: gpu.wait
// SM90A-LABEL: func.func @attention
// SM90A-NOT: gpu.alloc
// SM90A-COUNT-3: call @attnMakeTensorMap
// SM90A: call @attnDeviceMultiprocessorCount
// SM90A-NOT: gpu.alloc
// SM90A: gpu.launch_func async {{.*}} @attn_kernels::@attn_fwd_sm90_d64_bf16_causal_m192n128s2_p
// SM90A: gpu.wait
func.func @attention(%q: memref<1x8x?x64xbf16>, %k: memref<1x2x?x64xbf16>,
                     %v: memref<1x2x?x64xbf16>, %o: memref<1x8x?x64xbf16>,
                     %lse: memref<1x8x?xf32>)
    attributes {llvm.emit_c_interface} {
  %qt = bufferization.to_tensor %q restrict : memref<1x8x?x64xbf16> to tensor<1x8x?x64xbf16>
  %kt = bufferization.to_tensor %k restrict : memref<1x2x?x64xbf16> to tensor<1x2x?x64xbf16>
  %vt = bufferization.to_tensor %v restrict : memref<1x2x?x64xbf16> to tensor<1x2x?x64xbf16>
  %ot, %lt = attn.attention %qt, %kt, %vt mask <causal>
      : tensor<1x8x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16>
      -> tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>
  bufferization.materialize_in_destination %ot in restrict writable %o
      : (tensor<1x8x?x64xbf16>, memref<1x8x?x64xbf16>) -> ()
  bufferization.materialize_in_destination %lt in restrict writable %lse
      : (tensor<1x8x?xf32>, memref<1x8x?xf32>) -> ()
  return
}
