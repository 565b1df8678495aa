// RUN: attn-opt %s --convert-attn-gpu-to-nvvm -verify-diagnostics

// Fragments have no NVVM lowering of their own: lower-attn-gpu-fragments
// turns them into registers first, and a fragment op left for this pass is
// an error rather than IR that silently keeps attn_gpu ops.
llvm.func @leftover(%x: f32) {
  // expected-error @+1 {{'attn_gpu.frag_splat' op has attn_gpu fragments: run lower-attn-gpu-fragments before convert-attn-gpu-to-nvvm}}
  %f = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x1xf32, rows>
  llvm.return
}
