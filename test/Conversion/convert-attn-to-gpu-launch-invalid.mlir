// RUN: attn-opt %s --convert-attn-to-gpu-launch --split-input-file --verify-diagnostics | FileCheck %s

// An op without attn.kernel (not meant for the GPU) is left alone.
// CHECK-LABEL: func.func @unannotated
// CHECK: attn.attention
func.func @unannotated(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                       %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %o = attn.attention %q, %k, %v
      : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
      -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @not_a_symbol(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                        %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{'attn.kernel' must be a symbol reference}}
  %o = attn.attention %q, %k, %v {attn.kernel = "k"}
      : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
      -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @no_launch(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                     %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{has 'attn.kernel' but no #attn.launch 'attn.launch': run convert-attn-to-gpu to annotate it}}
  %o = attn.attention %q, %k, %v {attn.kernel = @attn_kernels::@k}
      : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
      -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

// The dictionary of earlier convert-attn-to-gpu runs is not launch data.
func.func @old_dictionary(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                          %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{has 'attn.kernel' but no #attn.launch 'attn.launch': run convert-attn-to-gpu to annotate it}}
  %o = attn.attention %q, %k, %v {attn.kernel = @attn_kernels::@k,
      attn.launch = {block_m = 64 : i64, threads = 128 : i64, dynamic_shared_memory = 0 : i64,
                     grid_x = "ceil(seq_q / 64)", grid_y = "batch * heads_q"}}
      : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
      -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @flat_symbol(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                       %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{'attn.kernel' must be @module::@kernel, got @k}}
  %o = attn.attention %q, %k, %v {attn.kernel = @k,
      attn.launch = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64, threads = 128,
                     dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 64>,
                     source = "heuristic">}
      : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
      -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

func.func @missing_kernel(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                          %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{kernel @attn_kernels::@k is not in the module}}
  %o = attn.attention %q, %k, %v {attn.kernel = @attn_kernels::@k,
      attn.launch = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64, threads = 128,
                     dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 64>,
                     source = "heuristic">}
      : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
      -> tensor<1x1x64x64xf16>
  return %o : tensor<1x1x64x64xf16>
}

// -----

module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @k() kernel { gpu.return }
  }
  func.func @varlen(%q: tensor<256x4x64xf16>, %k: tensor<256x4x64xf16>,
                    %v: tensor<256x4x64xf16>, %cq: tensor<3xi32>,
                    %ck: tensor<3xi32>) -> tensor<256x4x64xf16> {
    // expected-error @+1 {{with cu_seqlens (variable length) cannot be lowered to a launch yet: the host lowering handles dense batches only}}
    %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck) : tensor<3xi32>, tensor<3xi32>
        max [128, 128] {attn.kernel = @attn_kernels::@k,
        attn.launch = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64, threads = 128,
                     dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 64>,
                     source = "heuristic">}
        : tensor<256x4x64xf16>, tensor<256x4x64xf16>, tensor<256x4x64xf16>
        -> tensor<256x4x64xf16>
    return %o : tensor<256x4x64xf16>
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @k() kernel { gpu.return }
  }
  func.func @bias(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                  %v: tensor<1x1x64x64xf16>, %b: tensor<1x1x64x64xf16>)
      -> tensor<1x1x64x64xf16> {
    // expected-error @+1 {{cannot be lowered to a launch yet: no host value for the kernel's parameter 'bias' (ptr)}}
    %o = attn.attention %q, %k, %v bias %b : tensor<1x1x64x64xf16>
        {attn.kernel = @attn_kernels::@k,
        attn.launch = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64, threads = 128,
                     dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 64>,
                     source = "heuristic">}
        : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
        -> tensor<1x1x64x64xf16>
    return %o : tensor<1x1x64x64xf16>
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @k() kernel { gpu.return }
  }
  func.func @no_q_map(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                      %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
    // expected-error @+1 {{'attn.launch' has no tensor map 'q_tmap'}}
    %o = attn.attention %q, %k, %v {attn.kernel = @attn_kernels::@k,
        attn.launch = #attn.launch<family = "sm90a-wgmma", block_m = 64, block_n = 64,
                                   threads = 128, dynamic_shared_memory = 0,
                                   grid = #attn.grid<query_tiles, block_rows = 64>,
                                   tensor_maps = [#attn.tensor_map<name = "k_tmap", tensor = "k", box_cols = 64, box_rows = 64>],
                                   source = "heuristic">}
        : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
        -> tensor<1x1x64x64xf16>
    return %o : tensor<1x1x64x64xf16>
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @attn_kernels {
    gpu.func @k() kernel { gpu.return }
  }
  func.func @backward_launch(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
                             %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
    // expected-error @+1 {{'attn.launch' describes backward kernels, not a forward attn.attention's}}
    %o = attn.attention %q, %k, %v {attn.kernel = @attn_kernels::@k,
        attn.launch = #attn.launch<family = "sm80-mma", block_m = 64, block_n = 64,
            threads = 128, dynamic_shared_memory = 0,
            grid = #attn.grid<key_tiles, block_rows = 64>,
            kernels = [#attn.kernel_launch<role = "preprocess", entry = "k", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>,
                       #attn.kernel_launch<role = "dkdv", entry = "k", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<key_tiles, block_rows = 64>>,
                       #attn.kernel_launch<role = "convert", entry = "k", threads = 128, dynamic_shared_memory = 0, grid = #attn.grid<query_tiles, block_rows = 16>>],
            source = "heuristic">}
        : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
        -> tensor<1x1x64x64xf16>
    return %o : tensor<1x1x64x64xf16>
  }
}

// -----

func.func @backward(%q: tensor<1x1x16x64xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x64xbf16> {
  // expected-error @+1 {{cannot be lowered to a launch yet: the host lowering handles the forward attn.attention only}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse {attn.kernel = @attn_kernels::@k}
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
         tensor<1x1x16x64xbf16>
  return %dq : tensor<1x1x16x64xbf16>
}
