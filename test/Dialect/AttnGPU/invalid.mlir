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
  // expected-error @+1 {{'attn_gpu.global_reduce_add' op expected a multiple of 2 values with width 2, got 3}}
  attn_gpu.global_reduce_add %p, %x, %x, %x {width = 2} : !llvm.ptr, f32, f32, f32
  llvm.return
}

// -----

llvm.func @reduce_vector(%p: !llvm.ptr<1>, %x: f32) {
  // expected-error @+1 {{'attn_gpu.global_reduce_add' op expected a multiple of 4 values with width 4, got 2}}
  attn_gpu.global_reduce_add %p, %x, %x {width = 4} : !llvm.ptr<1>, f32, f32
  llvm.return
}

// -----

llvm.func @reduce_stride_vector(%p: !llvm.ptr<1>, %x: f32) {
  // expected-error @+1 {{'attn_gpu.global_reduce_add' op expected width 1, 2 or 4, got 3}}
  attn_gpu.global_reduce_add %p, %x, %x, %x {width = 3, stride = 12} : !llvm.ptr<1>, f32, f32, f32
  llvm.return
}

// -----

llvm.func @reduce_stride_unaligned(%p: !llvm.ptr<1>, %x: f32) {
  // expected-error @+1 {{'attn_gpu.global_reduce_add' op expected a positive multiple of 4 as stride, got 6}}
  attn_gpu.global_reduce_add %p, %x, %x {stride = 6} : !llvm.ptr<1>, f32, f32
  llvm.return
}

// -----

llvm.func @reduce_stride_unaligned_vector(%p: !llvm.ptr<1>, %x: f32) {
  // expected-error @+1 {{'attn_gpu.global_reduce_add' op expected a positive multiple of 16 as stride, got 8}}
  attn_gpu.global_reduce_add %p, %x, %x, %x, %x {width = 4, stride = 8} : !llvm.ptr<1>, f32, f32, f32, f32
  llvm.return
}

// -----

// The fragment type: its parser and FragmentType::verify.

llvm.func @frag_rows() {
  // expected-error @+1 {{expected a fragment of 16 rows (one warp's), got 8}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<8x64xf32, acc>
  llvm.return
}

// -----

llvm.func @frag_acc_element() {
  // expected-error @+1 {{expected f32 elements in an acc fragment, got 'bf16'}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x64xbf16, acc>
  llvm.return
}

// -----

llvm.func @frag_acc_cols() {
  // expected-error @+1 {{expected a positive multiple of 8 columns in an acc fragment, got 12}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x12xf32, acc>
  llvm.return
}

// -----

llvm.func @frag_acc_zero_cols() {
  // expected-error @+1 {{expected a positive multiple of 8 columns in an acc fragment, got 0}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x0xf32, acc>
  llvm.return
}

// -----

llvm.func @frag_a_element() {
  // expected-error @+1 {{expected f16 or bf16 elements in an a fragment, got 'f32'}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, a>
  llvm.return
}

// -----

llvm.func @frag_a_cols() {
  // expected-error @+1 {{expected a positive multiple of 16 columns in an a fragment, got 24}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x24xbf16, a>
  llvm.return
}

// -----

llvm.func @frag_rows_cols() {
  // The element type is printed as a diagnostic argument ('f32'): the
  // expectation stops before it.
  // expected-error @+1 {{expected a rows fragment to be 16x1xf32, got 16x2x}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x2xf32, rows>
  llvm.return
}

// -----

llvm.func @frag_rows_element() {
  // expected-error @+1 {{expected a rows fragment to be 16x1xf32, got 16x1x}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x1xbf16, rows>
  llvm.return
}

// -----

llvm.func @frag_layout() {
  // expected-error @+1 {{expected fragment layout acc, a or rows, got 'b'}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, b>
  llvm.return
}

// -----

llvm.func @frag_shape_1d() {
  // expected-error @+1 {{expected a fragment shape rows x cols, got 1 dimensions}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16xf32, acc>
  llvm.return
}

// -----

llvm.func @frag_shape_3d() {
  // expected-error @+1 {{expected a fragment shape rows x cols, got 3 dimensions}}
  %f = attn_gpu.frag_undef : !attn_gpu.frag<16x8x2xf32, acc>
  llvm.return
}

// -----

// The fragment ops.

llvm.func @splat_operand(%x: f32) {
  // expected-error @+1 {{'attn_gpu.frag_splat' op expected an acc or rows fragment, got '!attn_gpu.frag<16x32xbf16, a>'}}
  %f = attn_gpu.frag_splat %x : f32 -> !attn_gpu.frag<16x32xbf16, a>
  llvm.return
}

// -----

llvm.func @from_registers_count(%x: f32) {
  // expected-error @+1 {{'attn_gpu.frag_from_registers' op expected 4 registers for '!attn_gpu.frag<16x8xf32, acc>', got 3}}
  %f = attn_gpu.frag_from_registers %x, %x, %x : f32, f32, f32
      -> !attn_gpu.frag<16x8xf32, acc>
  llvm.return
}

// -----

llvm.func @from_registers_type(%x: f32) {
  // expected-error @+1 {{'attn_gpu.frag_from_registers' op expected 'i32' registers for '!attn_gpu.frag<16x16xf16, a>', got 'f32'}}
  %f = attn_gpu.frag_from_registers %x, %x, %x, %x : f32, f32, f32, f32
      -> !attn_gpu.frag<16x16xf16, a>
  llvm.return
}

// -----

llvm.func @registers_count() {
  %r = attn_gpu.frag_undef : !attn_gpu.frag<16x1xf32, rows>
  // expected-error @+1 {{'attn_gpu.frag_registers' op expected 2 registers for '!attn_gpu.frag<16x1xf32, rows>', got 4}}
  %x:4 = attn_gpu.frag_registers %r : !attn_gpu.frag<16x1xf32, rows>
      -> f32, f32, f32, f32
  llvm.return
}

// -----

llvm.func @registers_type() {
  %a = attn_gpu.frag_undef : !attn_gpu.frag<16x8xf32, acc>
  // expected-error @+1 {{'attn_gpu.frag_registers' op expected 'f32' registers for '!attn_gpu.frag<16x8xf32, acc>', got 'i32'}}
  %x:4 = attn_gpu.frag_registers %a : !attn_gpu.frag<16x8xf32, acc>
      -> f32, f32, i32, f32
  llvm.return
}

// -----

llvm.func @mma_cols(%d: i64) {
  %acc = attn_gpu.frag_undef : !attn_gpu.frag<16x264xf32, acc>
  // expected-error @+1 {{'attn_gpu.warpgroup_mma' op expected at most 256 accumulator columns (wgmma's largest N), got 264}}
  %s = attn_gpu.warpgroup_mma %d, %d, %acc
      {element_type = bf16, accumulate = false}
      : i64, !attn_gpu.frag<16x264xf32, acc>
  llvm.return
}

// -----

llvm.func @mma_no_element_type(%d: i64) {
  %acc = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.warpgroup_mma' op expected element_type with a descriptor A}}
  %s = attn_gpu.warpgroup_mma %d, %d, %acc {accumulate = false}
      : i64, !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mma_descriptor_k_step(%d: i64) {
  %acc = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.warpgroup_mma' op expected a_k_step only with a fragment A}}
  %s = attn_gpu.warpgroup_mma %d, %d, %acc
      {element_type = f16, accumulate = false, a_k_step = 1 : i64}
      : i64, !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mma_fragment_element_type(%d: i64) {
  %a = attn_gpu.frag_undef : !attn_gpu.frag<16x64xbf16, a>
  %acc = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.warpgroup_mma' op expected element_type to match the A fragment's 'bf16', got 'f16'}}
  %s = attn_gpu.warpgroup_mma %a, %d, %acc
      {element_type = f16, accumulate = true}
      : !attn_gpu.frag<16x64xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mma_fragment_transpose_a(%d: i64) {
  %a = attn_gpu.frag_undef : !attn_gpu.frag<16x64xbf16, a>
  %acc = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.warpgroup_mma' op expected transpose_a only with a descriptor A}}
  %s = attn_gpu.warpgroup_mma %a, %d, %acc {accumulate = true, transpose_a}
      : !attn_gpu.frag<16x64xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mma_k_step_past_end(%d: i64) {
  %a = attn_gpu.frag_undef : !attn_gpu.frag<16x64xbf16, a>
  %acc = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.warpgroup_mma' op expected a_k_step in [0, 4) for '!attn_gpu.frag<16x64xbf16, a>', got 4}}
  %s = attn_gpu.warpgroup_mma %a, %d, %acc {accumulate = true, a_k_step = 4 : i64}
      : !attn_gpu.frag<16x64xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mma_k_step_negative(%d: i64) {
  %a = attn_gpu.frag_undef : !attn_gpu.frag<16x32xf16, a>
  %acc = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.warpgroup_mma' op expected a_k_step in [0, 2) for '!attn_gpu.frag<16x32xf16, a>', got -1}}
  %s = attn_gpu.warpgroup_mma %a, %d, %acc {accumulate = true, a_k_step = -1 : i64}
      : !attn_gpu.frag<16x32xf16, a>, !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mma_f32_input(%d: i64) {
  %acc = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.warpgroup_mma' op expected f16 or bf16 inputs, got 'f32'}}
  %s = attn_gpu.warpgroup_mma %d, %d, %acc
      {element_type = f32, accumulate = false}
      : i64, !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mask_window_without_row(%k: i32) {
  %s = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.mask_scores' op expected row_minus_key with a window side}}
  %m = attn_gpu.mask_scores %s keys_left %k {window_right = 0 : i64}
      : !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mask_row_without_window(%k: i32) {
  %s = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.mask_scores' op expected row_minus_key only with a window side}}
  %m = attn_gpu.mask_scores %s keys_left %k row_minus_key %k
      : !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mask_negative_window(%k: i32) {
  %s = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.mask_scores' op expected window sides >= 0, got -2}}
  %m = attn_gpu.mask_scores %s keys_left %k row_minus_key %k
      {window_left = -2 : i64, window_right = 0 : i64}
      : !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mask_negative_right(%k: i32) {
  %s = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.mask_scores' op expected window sides >= 0, got -1}}
  %m = attn_gpu.mask_scores %s keys_left %k row_minus_key %k
      {window_right = -1 : i64} : !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @mask_no_scores(%k: i32) {
  // The custom form needs a type; the generic form can have no scores.
  // expected-error @+1 {{'attn_gpu.mask_scores' op expected at least one score fragment}}
  "attn_gpu.mask_scores"(%k) <{operandSegmentSizes = array<i32: 0, 1, 0, 0>}>
      : (i32) -> ()
  llvm.return
}

// -----

llvm.func @softmax_fma_tiles(%c: f32) {
  %s = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  %m = attn_gpu.frag_undef : !attn_gpu.frag<16x1xf32, rows>
  // expected-error @+1 {{'attn_gpu.online_softmax' op expected exp2_fma_tiles in [0, 8], got 9}}
  %p:4 = attn_gpu.online_softmax %s, %m, %m, %c {exp2_fma_tiles = 9 : i64}
      : !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @softmax_fma_tiles_negative(%c: f32) {
  %s = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  %m = attn_gpu.frag_undef : !attn_gpu.frag<16x1xf32, rows>
  // expected-error @+1 {{'attn_gpu.online_softmax' op expected exp2_fma_tiles in [0, 8], got -1}}
  %p:4 = attn_gpu.online_softmax %s, %m, %m, %c {exp2_fma_tiles = -1 : i64}
      : !attn_gpu.frag<16x64xf32, acc>
  llvm.return
}

// -----

llvm.func @to_operand_cols() {
  %p = attn_gpu.frag_undef : !attn_gpu.frag<16x64xf32, acc>
  // expected-error @+1 {{'attn_gpu.to_operand' op expected 64 columns in the A operand, got 32}}
  %a = attn_gpu.to_operand %p : !attn_gpu.frag<16x64xf32, acc>
      -> !attn_gpu.frag<16x32xbf16, a>
  llvm.return
}

// -----

llvm.func @ring_rank(%b: !llvm.ptr<3>) {
  // expected-error @+1 {{expected a ring shape stages x rows x cols, got 2 dimensions}}
  %r = attn_gpu.ring_view %b : !llvm.ptr<3> -> !attn_gpu.ring<128x128xbf16>
  llvm.return
}

// -----

llvm.func @ring_no_stage(%b: !llvm.ptr<3>) {
  // expected-error @+1 {{expected at least one stage, got 0}}
  %r = attn_gpu.ring_view %b : !llvm.ptr<3> -> !attn_gpu.ring<0x128x128xbf16>
  llvm.return
}

// -----

llvm.func @ring_rows(%b: !llvm.ptr<3>) {
  // expected-error @+1 {{expected rows to be a positive multiple of 8 (the swizzle's period), got 12}}
  %r = attn_gpu.ring_view %b : !llvm.ptr<3> -> !attn_gpu.ring<2x12x128xbf16>
  llvm.return
}

// -----

llvm.func @ring_cols(%b: !llvm.ptr<3>) {
  // expected-error @+1 {{expected cols to be a positive multiple of 64 (whole 128-byte panels), got 96}}
  %r = attn_gpu.ring_view %b : !llvm.ptr<3> -> !attn_gpu.ring<2x128x96xbf16>
  llvm.return
}

// -----

llvm.func @ring_element(%b: !llvm.ptr<3>) {
  // expected-error @+1 {{expected f16 or bf16 elements, got 'f32'}}
  %r = attn_gpu.ring_view %b : !llvm.ptr<3> -> !attn_gpu.ring<2x128x128xf32>
  llvm.return
}

// -----

llvm.func @ring_panel(%b: !llvm.ptr<3>, %s: i32) {
  %r = attn_gpu.ring_view %b : !llvm.ptr<3> -> !attn_gpu.ring<2x128x128xbf16>
  // expected-error @+1 {{'attn_gpu.ring_tile' op expected panel in [0, 2) for '!attn_gpu.ring<2x128x128xbf16>', got 2}}
  %t = attn_gpu.ring_tile %r[%s] {panel = 2 : i64} : !attn_gpu.ring<2x128x128xbf16>
  llvm.return
}

// -----

llvm.func @ring_panel_negative(%b: !llvm.ptr<3>, %s: i32) {
  %r = attn_gpu.ring_view %b : !llvm.ptr<3> -> !attn_gpu.ring<2x64x64xf16>
  // expected-error @+1 {{'attn_gpu.ring_tile' op expected panel in [0, 1) for '!attn_gpu.ring<2x64x64xf16>', got -1}}
  %t = attn_gpu.ring_tile %r[%s] {panel = -1 : i64} : !attn_gpu.ring<2x64x64xf16>
  llvm.return
}

// -----

// A ring larger than shared memory (whose panel would not fit a wgmma
// descriptor's byte fields either).
llvm.func @ring_too_large(%b: !llvm.ptr<3>) {
  // expected-error @+1 {{expected the ring to fit in shared memory (232448 bytes per block), got 1 tiles of 2048x64 elements}}
  %r = attn_gpu.ring_view %b : !llvm.ptr<3> -> !attn_gpu.ring<1x2048x64xbf16>
  llvm.return
}

// -----

func.func @warp_mma_tile(%a: !attn_gpu.frag<16x16xbf16, a>, %b0: i32, %b1: i32, %c: !attn_gpu.frag<16x64xf32, acc>) {
  // expected-error @+1 {{'attn_gpu.warp_mma' op expected n_tile in [0, 8) for '!attn_gpu.frag<16x64xf32, acc>', got 8}}
  %d = attn_gpu.warp_mma %a, %b0, %b1, %c {n_tile = 8 : i64} : !attn_gpu.frag<16x16xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  return
}

// -----

func.func @warp_mma_k(%a: !attn_gpu.frag<16x32xbf16, a>, %b0: i32, %b1: i32, %c: !attn_gpu.frag<16x64xf32, acc>) {
  // expected-error @+1 {{'attn_gpu.warp_mma' op expected a_k_step in [0, 2) for '!attn_gpu.frag<16x32xbf16, a>', got 2}}
  %d = attn_gpu.warp_mma %a, %b0, %b1, %c {n_tile = 0 : i64, a_k_step = 2 : i64} : !attn_gpu.frag<16x32xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
  return
}

// -----

llvm.func @reduce_stride_many(%p: !llvm.ptr<1>, %x: f32) {
  // expected-error @+1 {{'attn_gpu.global_reduce_add' op expected 1 to 32 groups of values, got 33}}
  attn_gpu.global_reduce_add %p, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x, %x {stride = 4} : !llvm.ptr<1>, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  llvm.return
}
