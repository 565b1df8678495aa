// Bad input to attn-opt gives a diagnostic that points at the problem and a
// non-zero exit, never a crash (`not` fails on a crash).

// RUN: not attn-opt %s -split-input-file 2>&1 | FileCheck %s
// RUN: not attn-opt %s.does-not-exist 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not attn-opt /dev/null --attn-no-such-pass 2>&1 | FileCheck %s --check-prefix=NOPASS
// RUN: not attn-opt /dev/null --attn-tile=no-such-option=1 2>&1 | FileCheck %s --check-prefix=NOOPTION

// NOFILE: cannot open input file '{{.*}}attn-opt-errors.mlir.does-not-exist'
// NOPASS: Unknown command line argument '--attn-no-such-pass'
// NOOPTION: no such option no-such-option

// Four operand types for three operands: the parser wants the '->' after three.
// CHECK: attn-opt-errors.mlir:[[# @LINE + 3]]:66: error: expected '->'
func.func @wrong_type_count(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.attention %q, %q, %q
  : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// CHECK: attn-opt-errors.mlir:[[# @LINE + 2]]:8: error: 'attn.attention' op expected key batch (2) to match query batch (1)
func.func @wrong_shape(%q: tensor<1x1x4x8xf32>, %k: tensor<2x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.attention %q, %k, %k
      : tensor<1x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// CHECK: attn-opt-errors.mlir:[[# @LINE + 2]]:8: error: 'attn.attention' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float values, but got 'tensor<1x1x4x8xi32>'
func.func @wrong_element_type(%q: tensor<1x1x4x8xi32>) -> tensor<1x1x4x8xi32> {
  %o = attn.attention %q, %q, %q
      : tensor<1x1x4x8xi32>, tensor<1x1x4x8xi32>, tensor<1x1x4x8xi32> -> tensor<1x1x4x8xi32>
  return %o : tensor<1x1x4x8xi32>
}

// -----

// CHECK: attn-opt-errors.mlir:[[# @LINE + 4]]:3: error: type of return operand 0 ('tensor<1x1x4x8xf32>') doesn't match function result type ('tensor<1x1x4x8xf16>') in function @wrong_return_type
func.func @wrong_return_type(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf16> {
  %o = attn.attention %q, %q, %q
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// CHECK: attn-opt-errors.mlir:[[# @LINE + 2]]:8: error: custom op 'attn.softmax' is unknown
func.func @unknown_op(%q: tensor<1x1x4x8xf32>) {
  %o = attn.softmax %q : tensor<1x1x4x8xf32>
  return
}

// -----

// CHECK: attn-opt-errors.mlir:[[# @LINE + 2]]:27: error: use of undeclared SSA value name
func.func @undefined_value(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.attention %q, %k, %q
      : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// The file ends inside the function body.
// CHECK: attn-opt-errors.mlir:[[# @LINE + 2]]:9: error: expected operation name in quotes
func.func @unterminated(%q: tensor<1x1x4x8xf32>) {
  return
