// RUN: attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the #attn.launch verifiers (#attn.grid,
// #attn.tensor_map, #attn.kernel_launch, #attn.launch).

// expected-error @+1 {{expected block_rows in [1, 1024], got 0}}
func.func @case0() attributes {l = #attn.grid<query_tiles, block_rows = 0>} {
  return
}

// -----

// expected-error @+1 {{expected a tensor map's name (its kernel parameter), got none}}
func.func @case1() attributes {l = #attn.tensor_map<name = "", tensor = "q", box_cols = 64, box_rows = 128>} {
  return
}

// -----

// expected-error @+1 {{expected tensor q, k, v, o or do, got 'lse'}}
func.func @case2() attributes {l = #attn.tensor_map<name = "q_tmap", tensor = "lse", box_cols = 64, box_rows = 128>} {
  return
}

// -----

// expected-error @+1 {{expected box_rows in [1, 256], got 512}}
func.func @case3() attributes {l = #attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 512>} {
  return
}

// -----

// expected-error @+1 {{expected role preprocess, dkdv, convert or dq, got 'forward'}}
func.func @case4() attributes {l = #attn.kernel_launch<role = "forward", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>} {
  return
}

// -----

// expected-error @+1 {{expected the dkdv kernel's entry, got none}}
func.func @case5() attributes {l = #attn.kernel_launch<role = "dkdv", entry = "", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>} {
  return
}

// -----

// expected-error @+1 {{expected threads a multiple of 32 in [32, 1024], got 100}}
func.func @case6() attributes {l = #attn.kernel_launch<role = "dq", entry = "e", threads = 100, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>} {
  return
}

// -----

// expected-error @+1 {{expected dynamic_shared_memory >= 0, got -1}}
func.func @case7() attributes {l = #attn.kernel_launch<role = "dq", entry = "e", threads = 128, dynamic_shared_memory = -1, grid = #attn.grid<query_tiles, block_rows = 16>>} {
  return
}

// -----

// expected-error @+1 {{expected family sm80-mma or sm90a-wgmma, got 'sm80'}}
func.func @case8() attributes {l = #attn.launch<family = "sm80", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected block_n in [1, 1024], got 0}}
func.func @case9() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 0, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected warp_rows 16 or 32, got 8}}
func.func @case10() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic", warp_rows = 8>} {
  return
}

// -----

// expected-error @+1 {{expected stages >= 2, got 1}}
func.func @case11() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic", stages = 1>} {
  return
}

// -----

// expected-error @+1 {{expected threads a multiple of 32 in [32, 1024], got 2048}}
func.func @case12() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 2048, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected source heuristic, option or tuning-db, got 'guess'}}
func.func @case13() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "guess">} {
  return
}

// -----

// expected-error @+1 {{expected tensor_maps with family sm90a-wgmma (its kernels take TMA descriptors)}}
func.func @case14() attributes {l = #attn.launch<family = "sm90a-wgmma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected no tensor_maps with family sm80-mma (its kernels take no TMA descriptors)}}
func.func @case15() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic", tensor_maps = [#attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 128>]>} {
  return
}

// -----

// expected-error @+1 {{expected distinct tensor map names, got 'q_tmap' twice}}
func.func @case16() attributes {l = #attn.launch<family = "sm90a-wgmma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic", tensor_maps = [#attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 128>, #attn.tensor_map<name = "q_tmap", tensor = "k", box_cols = 64, box_rows = 128>]>} {
  return
}

// -----

// expected-error @+1 {{expected no deterministic or schedule without backward kernels}}
func.func @case17() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 128>, source = "heuristic", deterministic = true>} {
  return
}

// -----

// expected-error @+1 {{expected a query_tiles, length_major or persistent grid for a forward launch (no kernels), got key_tiles}}
func.func @case18() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 128>, source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected a query_tiles grid with family sm80-mma, got persistent}}
func.func @case19() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<persistent, block_rows = 128>, source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected the grid's block_rows to be block_m (128), got 64}}
func.func @case20() attributes {l = #attn.launch<family = "sm80-mma", block_m = 128, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 64>, source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected kernels preprocess, dkdv, convert (family sm80-mma, deterministic = false), got dkdv, preprocess, convert}}
func.func @case21() attributes {l = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>, kernels = [#attn.kernel_launch<role = "dkdv", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>>, #attn.kernel_launch<role = "preprocess", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>, #attn.kernel_launch<role = "convert", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>], source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected kernels preprocess, dkdv, dq (family sm80-mma, deterministic = true), got preprocess, dkdv, convert}}
func.func @case22() attributes {l = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>, kernels = [#attn.kernel_launch<role = "preprocess", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>, #attn.kernel_launch<role = "dkdv", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>>, #attn.kernel_launch<role = "convert", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>], source = "heuristic", deterministic = true>} {
  return
}

// -----

// expected-error @+1 {{expected threads, dynamic_shared_memory and grid to be the dkdv kernel's}}
func.func @case23() attributes {l = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64, threads = 256, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>, kernels = [#attn.kernel_launch<role = "preprocess", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>, #attn.kernel_launch<role = "dkdv", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>>, #attn.kernel_launch<role = "convert", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>], source = "heuristic">} {
  return
}

// -----

// expected-error @+1 {{expected schedule dq-pipelined, dq-first, dk-first, deterministic, head-split, transposed-dkv or none, got 'pingpong'}}
func.func @case24() attributes {l = #attn.launch<family = "sm90a-wgmma", block_m = 64, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>, kernels = [#attn.kernel_launch<role = "preprocess", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>, #attn.kernel_launch<role = "dkdv", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>>, #attn.kernel_launch<role = "convert", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>], source = "heuristic", tensor_maps = [#attn.tensor_map<name = "q_tmap", tensor = "q", box_cols = 64, box_rows = 128>], schedule = "pingpong">} {
  return
}

// -----

// expected-error @+1 {{expected no schedule with family sm80-mma}}
func.func @case25() attributes {l = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64, threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>, kernels = [#attn.kernel_launch<role = "preprocess", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>, #attn.kernel_launch<role = "dkdv", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>>, #attn.kernel_launch<role = "convert", entry = "e", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>], source = "heuristic", schedule = "dq-first">} {
  return
}
