// RUN: attn-opt %s | attn-opt | FileCheck %s

// Round-trips of #attn.launch and the attributes it holds (#attn.grid,
// #attn.tensor_map, #attn.kernel_launch): what convert-attn-to-gpu leaves
// on the ops for attn-compile and the host lowering. Defaults (warp_rows
// 16, stages 2, no tensor maps, no kernels, not deterministic, no schedule)
// are not printed.

// An sm80-mma forward: one block per query block.
// CHECK-LABEL: func.func @sm80_forward
// CHECK-SAME: l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, warp_rows = 32, threads = 128, dynamic_shared_memory = 49152, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic">
func.func @sm80_forward() attributes {l = #attn.launch<family = "sm80-mma",
    block_m = 128, block_n = 64, warp_rows = 32, stages = 2, threads = 128,
    dynamic_shared_memory = 49152,
    grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic">} {
  return
}

// An sm90a-wgmma forward with its TMA descriptors; the parameters may come
// in any order, and nested attributes without their `#attn.` prefix.
// CHECK-LABEL: func.func @sm90a_forward
// CHECK-SAME: l = #attn.launch<family = "sm90a-wgmma", block_m = 128, block_n = 128, stages = 3, threads = 384, dynamic_shared_memory = 164944, grid = #attn.grid<persistent, block_rows = 128>, tensor_maps = [#attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 128>, #attn.tensor_map<name = "k_tmap", tensor = "k", box_cols = 64, box_rows = 128>, #attn.tensor_map<name = "v_tmap", tensor = "v", box_cols = 64, box_rows = 128>], source = "tuning-db">
func.func @sm90a_forward() attributes {l = #attn.launch<source = "tuning-db",
    family = "sm90a-wgmma", block_m = 128, block_n = 128, stages = 3,
    threads = 384, dynamic_shared_memory = 164944,
    grid = <persistent, block_rows = 128>,
    tensor_maps = [
      #attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 128>,
      <name = "k_tmap", tensor = "k", box_cols = 64, box_rows = 128>,
      #attn.tensor_map<name = "v_tmap", tensor = "v", box_cols = 64, box_rows = 128>]>} {
  return
}

// The causal sm90a forward's length-major tiles.
// CHECK-LABEL: func.func @length_major
// CHECK-SAME: grid = #attn.grid<length_major, block_rows = 64>
func.func @length_major() attributes {l = #attn.launch<family = "sm90a-wgmma",
    block_m = 64, block_n = 128, threads = 256, dynamic_shared_memory = 1024,
    grid = #attn.grid<length_major, block_rows = 64>,
    tensor_maps = [#attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 64>],
    source = "option">} {
  return
}

// A backward: three kernels in launch order; the top level repeats the
// dkdv kernel's block, shared memory and grid.
// CHECK-LABEL: func.func @sm80_backward
// CHECK-SAME: l = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 128, threads = 256, dynamic_shared_memory = 40960, grid = #attn.grid<key_tiles, block_rows = 128>, kernels = [#attn.kernel_launch<role = "preprocess", entry = "pre", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>, #attn.kernel_launch<role = "dkdv", entry = "dkdv", threads = 256, dynamic_shared_memory = 40960, grid = #attn.grid<key_tiles, block_rows = 128>>, #attn.kernel_launch<role = "dq", entry = "dq", threads = 128, dynamic_shared_memory = 32768, grid = #attn.grid<query_tiles, block_rows = 64>>], deterministic = true, source = "heuristic">
func.func @sm80_backward() attributes {l = #attn.launch<family = "sm80-mma",
    block_m = 64, block_n = 128, threads = 256, dynamic_shared_memory = 40960,
    grid = #attn.grid<key_tiles, block_rows = 128>,
    kernels = [
      #attn.kernel_launch<role = "preprocess", entry = "pre", threads = 128,
        dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>,
      #attn.kernel_launch<role = "dkdv", entry = "dkdv", threads = 256,
        dynamic_shared_memory = 40960, grid = #attn.grid<key_tiles, block_rows = 128>>,
      #attn.kernel_launch<role = "dq", entry = "dq", threads = 128,
        dynamic_shared_memory = 32768, grid = #attn.grid<query_tiles, block_rows = 64>>],
    deterministic = true, source = "heuristic">} {
  return
}

// The sm90a-wgmma dkdv kernel: its dQ schedule and four descriptors.
// CHECK-LABEL: func.func @sm90a_backward
// CHECK-SAME: tensor_maps = [#attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 64>, #attn.tensor_map<name = "do_tmap", tensor = "do", box_cols = 64, box_rows = 64>], kernels = [
// CHECK-SAME: schedule = "dq-pipelined", source = "heuristic">
func.func @sm90a_backward() attributes {l = #attn.launch<family = "sm90a-wgmma",
    block_m = 64, block_n = 128, threads = 384, dynamic_shared_memory = 200000,
    grid = #attn.grid<key_tiles, block_rows = 128>,
    tensor_maps = [
      #attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 64>,
      #attn.tensor_map<name = "do_tmap", tensor = "do", box_cols = 64, box_rows = 64>],
    kernels = [
      #attn.kernel_launch<role = "preprocess", entry = "pre", threads = 128,
        dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>,
      #attn.kernel_launch<role = "dkdv", entry = "dkdv", threads = 384,
        dynamic_shared_memory = 200000, grid = #attn.grid<key_tiles, block_rows = 128>>,
      #attn.kernel_launch<role = "convert", entry = "convert", threads = 128,
        dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>],
    schedule = "dq-pipelined", source = "heuristic">} {
  return
}
