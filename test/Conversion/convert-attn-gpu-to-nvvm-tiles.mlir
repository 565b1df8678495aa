// RUN: attn-opt %s --convert-attn-gpu-to-nvvm -verify-diagnostics -split-input-file

// Fragments have no NVVM lowering of their own: lower-attn-gpu-tiles
// turns them into registers first, and a fragment op left for this pass is
// an error rather than IR that silently keeps attn_gpu ops.
llvm.func @leftover(%x: f32) {
  // expected-error @+1 {{'attn_gpu.frag_splat' op has attn_gpu fragments or rings: run lower-attn-gpu-tiles before convert-attn-gpu-to-nvvm}}
  %f = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x1xf32, rows>
  llvm.return
}

// -----

llvm.func @leftover_ring(%base: !llvm.ptr<3>) {
  // expected-error @+1 {{'attn_gpu.ring_view' op has attn_gpu fragments or rings}}
  %r = attn_gpu.ring_view %base : !llvm.ptr<3> -> !attn_gpu.ring<2x64x64xbf16>
  llvm.return
}
