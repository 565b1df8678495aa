// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file -verify-diagnostics
// convert-attn-to-gpu generates the kernel an op's #attn.kernel_config
// names; what no kernel can be is refused, as are selection options that
// the attribute already decided.
// RUN: not attn-opt %s --convert-attn-to-gpu="block-m=64" --split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: 'attn.attention' op carries a #attn.kernel_config, which fixes what the convert-attn-to-gpu option block-m would choose; give block-m to attn-select-kernel-config instead

func.func @not_a_config(%q: tensor<1x2x100x64xbf16>) -> tensor<1x2x100x64xbf16> {
  // expected-error @+1 {{expected attribute 'attn.kernel_config' to be a #attn.kernel_config}}
  %o = attn.attention %q, %q, %q {attn.kernel_config = "sm80"}
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16> -> tensor<1x2x100x64xbf16>
  return %o : tensor<1x2x100x64xbf16>
}

// -----

func.func @backward_schedule(%q: tensor<1x2x100x64xbf16>) -> tensor<1x2x100x64xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: its kernel_config's schedule 'dq-first' is not one of the sm90a-wgmma forward kernel's (pingpong, overlap, serial)}}
  %o = attn.attention %q, %q, %q {attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "dq-first", source = "option", reason = "by hand">}
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16> -> tensor<1x2x100x64xbf16>
  return %o : tensor<1x2x100x64xbf16>
}

// -----

func.func @unsupported(%q: tensor<1x2x100x20xbf16>) -> tensor<1x2x100x20xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: head dim 20 is not supported by the sm90a-wgmma forward kernels: they take a multiple of 8 in [8, 256] (zero-padded to 64, 128 or 256 by TMA)}}
  %o = attn.attention %q, %q, %q {attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 128, block_n = 128, schedule = "pingpong", source = "option", reason = "by hand">}
      : tensor<1x2x100x20xbf16>, tensor<1x2x100x20xbf16>,
        tensor<1x2x100x20xbf16> -> tensor<1x2x100x20xbf16>
  return %o : tensor<1x2x100x20xbf16>
}

// -----

func.func @forward_schedule(%q: tensor<1x2x100x64xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x64xbf16> {
  // expected-error @+1 {{cannot be compiled for the GPU: its kernel_config's schedule 'pingpong' is not one of the sm90a-wgmma backward kernel's (dq-pipelined, dq-first, dk-first; above head dim 128 head-split, transposed-dkv)}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse {attn.kernel_config = #attn.kernel_config<family = "sm90a", block_m = 64, block_n = 128, schedule = "pingpong", source = "option", reason = "by hand">}
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
         tensor<1x2x100x64xbf16>
  return %dq : tensor<1x2x100x64xbf16>
}

// -----

func.func @grad_not_a_config(%q: tensor<1x2x100x64xbf16>, %lse: tensor<1x2x100xf32>)
    -> tensor<1x2x100x64xbf16> {
  // expected-error @+1 {{expected attribute 'attn.kernel_config' to be a #attn.kernel_config}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse {attn.kernel_config = 1}
      : tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
        tensor<1x2x100x64xbf16>, tensor<1x2x100xf32>
      -> tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16>,
         tensor<1x2x100x64xbf16>
  return %dq : tensor<1x2x100x64xbf16>
}
