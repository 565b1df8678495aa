// Hostile input for kernel generation: a window near INT64_MAX. The GPU
// kernels truncated it to i32 (2^32 was a window of 0) and overflowed the
// key range (every row masked); it bounds nothing and compiles as no mask.
// RUN: attn-compile %s --family sm80 --no-cubin --emit manifest | FileCheck %s
// RUN: attn-compile %s --family sm90a --no-cubin --emit manifest | FileCheck %s
// CHECK: "entry": "attn_fwd{{(_sm90)?}}_d64_bf16_nolse_m
// CHECK-NOT: window
func.func @forward(%q: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.attention %q, %q, %q mask <sliding> window [9223372036854775807, 9223372036854775807]
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16> -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
