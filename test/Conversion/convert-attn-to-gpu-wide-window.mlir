// RUN: attn-opt %s --convert-attn-to-gpu="family=sm80" --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="family=sm90a" --split-input-file | FileCheck %s --check-prefix=SM90

// A window side at least as wide as both sequences (Nq + Nk, 2^30 where a
// length is dynamic) bounds nothing: the kernels take it as unbounded
// instead of truncating it to i32 (2^32 became a window of 0) or
// overflowing d(i) + right (every key masked near INT64_MAX).

// CHECK-LABEL: func.func @left_2_32
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_brinfx0_nolse_m
// SM90-LABEL: func.func @left_2_32
// SM90: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_bf16_brinfx0_nolse_m
func.func @left_2_32(%q: tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16> {
  %o = attn.attention %q, %q, %q mask <sliding> window [4294967296, 0]
      : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// Both sides near INT64_MAX: no mask at all (the plain kernel).
// CHECK-LABEL: func.func @both_int64_max
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_nolse_m128n64w4s2
// SM90-LABEL: func.func @both_int64_max
// SM90: attn.kernel = @attn_kernels::@attn_fwd_sm90_d64_bf16_nolse_m192n128s2_p
func.func @both_int64_max(%q: tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16> {
  %o = attn.attention %q, %q, %q mask <sliding_top_left> window [9223372036854775806, 9223372036854775807]
      : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// One below Nq + Nk still bounds (row 127 of 128 x 128 sees key 0 only
// from a left side of 127 on): kept as written.
// CHECK-LABEL: func.func @just_below
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_br255x0_nolse_m
func.func @just_below(%q: tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16> {
  %o = attn.attention %q, %q, %q mask <sliding> window [255, 0]
      : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16> -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// Dynamic lengths: from 2^30 on.
// CHECK-LABEL: func.func @dynamic
// CHECK: attn.kernel = @attn_kernels::@attn_fwd_d64_bf16_br1073741823xinf_nolse_m
func.func @dynamic(%q: tensor<1x1x?x64xbf16>) -> tensor<1x1x?x64xbf16> {
  %o = attn.attention %q, %q, %q mask <sliding> window [1073741823, 1073741824]
      : tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16>, tensor<1x1x?x64xbf16> -> tensor<1x1x?x64xbf16>
  return %o : tensor<1x1x?x64xbf16>
}

// -----

// The backward: a window as wide as the sequences is the causal mask the
// kernels implement (a narrower one is refused, KernelCapabilities.h).
// CHECK-LABEL: func.func @grad_wide
// CHECK: attn.kernel = @attn_kernels::@attn_bwd_d64_bf16_causal_dkdv_n128m64
// SM90-LABEL: func.func @grad_wide
// SM90: attn.kernel = @attn_kernels::@attn_bwd_sm90_d64_bf16_causal_dkdv_n128m128s2
func.func @grad_wide(%q: tensor<1x1x16x64xbf16>, %lse: tensor<1x1x16xf32>)
    -> tensor<1x1x16x64xbf16> {
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %lse
      mask <sliding> window [4294967296, 0]
      : tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
        tensor<1x1x16x64xbf16>, tensor<1x1x16xf32>
      -> tensor<1x1x16x64xbf16>, tensor<1x1x16x64xbf16>,
         tensor<1x1x16x64xbf16>
  return %dq : tensor<1x1x16x64xbf16>
}
