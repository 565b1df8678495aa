// RUN: attn-opt %s -split-input-file -verify-diagnostics

llvm.func @init_count(%bar: !llvm.ptr<3>) {
  // expected-error @+1 {{'attn_gpu.mbarrier_init' op expected count in [1, 1048575], got 0}}
  attn_gpu.mbarrier_init %bar, count = 0 : !llvm.ptr<3>
  llvm.return
}

// -----

llvm.func @init_global(%bar: !llvm.ptr<1>) {
  // expected-error @+1 {{'attn_gpu.mbarrier_init' op operand #0 must be LLVM pointer in address space 3}}
  attn_gpu.mbarrier_init %bar, count = 1 : !llvm.ptr<1>
  llvm.return
}

// -----

llvm.func @expect_tx(%bar: !llvm.ptr<3>) {
  // expected-error @+1 {{'attn_gpu.mbarrier_arrive_expect_tx' op expected bytes in [0, 1048575], got 1048576}}
  attn_gpu.mbarrier_arrive_expect_tx %bar, bytes = 1048576 : !llvm.ptr<3>
  llvm.return
}

// -----

llvm.func @tma_rank(%dst: !llvm.ptr<3>, %map: !llvm.ptr, %bar: !llvm.ptr<3>,
                    %i: i32) {
  // expected-error @+1 {{'attn_gpu.tma_load' op expected 1 to 5 coordinates, got 6}}
  attn_gpu.tma_load %dst, %map[%i, %i, %i, %i, %i, %i], %bar
      : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
  llvm.return
}

// -----

llvm.func @barrier_threads(%id: i32) {
  // expected-error @+1 {{'attn_gpu.named_barrier_sync' op expected threads to be a positive multiple of 32 up to 1024, got 100}}
  attn_gpu.named_barrier_sync %id, threads = 100
  llvm.return
}

// -----

llvm.func @arrive_threads(%id: i32) {
  // expected-error @+1 {{'attn_gpu.named_barrier_arrive' op expected threads to be a positive multiple of 32 up to 1024, got 2048}}
  attn_gpu.named_barrier_arrive %id, threads = 2048
  llvm.return
}

// -----

llvm.func @descriptor(%tile: !llvm.ptr<3>) {
  // expected-error @+1 {{'attn_gpu.wgmma_descriptor' op expected stride_bytes to be a multiple of 16 below 262144, got 1000}}
  %d = attn_gpu.wgmma_descriptor %tile, leading_bytes = 16, stride_bytes = 1000
      : !llvm.ptr<3>
  llvm.return
}

// -----

llvm.func @wait_pending(%x: f32) {
  // expected-error @+1 {{'attn_gpu.wgmma_wait_group' op expected pending in [0, 7], got 8}}
  %w = attn_gpu.wgmma_wait_group 8, %x : f32
  llvm.return
}

// -----

llvm.func @wgmma_n(%d: i64, %c0: f32, %c1: f32) {
  // expected-error @+1 {{'attn_gpu.wgmma_ss' op expected n to be a multiple of 8 in [8, 256], got 4}}
  %s:2 = attn_gpu.wgmma_ss %d, %d, %c0, %c1
      {n = 4 : i64, element_type = bf16, accumulate = true} : f32, f32
  llvm.return
}

// -----

llvm.func @wgmma_type(%d: i64, %c0: f32, %c1: f32, %c2: f32, %c3: f32) {
  // expected-error @+1 {{'attn_gpu.wgmma_ss' op expected element_type f16 or bf16, got 'f32'}}
  %s:4 = attn_gpu.wgmma_ss %d, %d, %c0, %c1, %c2, %c3
      {n = 8 : i64, element_type = f32, accumulate = true}
      : f32, f32, f32, f32
  llvm.return
}

// -----

llvm.func @wgmma_acc(%a: i32, %d: i64, %c0: f32, %c1: f32) {
  // expected-error @+1 {{'attn_gpu.wgmma_rs' op expected n/2 = 4 f32 accumulators per thread, got 2}}
  %s:2 = attn_gpu.wgmma_rs %a, %a, %a, %a, %d, %c0, %c1
      {n = 8 : i64, element_type = bf16, accumulate = true} : f32, f32
  llvm.return
}

// -----

llvm.func @opaque_empty() {
  // expected-error @+1 {{'attn_gpu.opaque' op expected at least one value}}
  "attn_gpu.opaque"() : () -> ()
  llvm.return
}

// -----

llvm.func @reduce_three(%p: !llvm.ptr, %x: f32) {
  // expected-error @+1 {{'attn_gpu.global_reduce_add' op expected 1 or 2 values, got 3}}
  attn_gpu.global_reduce_add %p, %x, %x, %x : !llvm.ptr, f32, f32, f32
  llvm.return
}

// -----

llvm.func @reduce_vector(%p: !llvm.ptr<1>, %x: f32) {
  // expected-error @+1 {{'attn_gpu.global_reduce_add' op expected 2 values with vector, got 1}}
  attn_gpu.global_reduce_add %p, %x {vector} : !llvm.ptr<1>, f32
  llvm.return
}
