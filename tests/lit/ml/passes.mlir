// The approx IR of a decorated JAX function and the IR after each ML pass.
// RUN: %approxcc -S -emit-mlir %S/Inputs/mlp.py -o %t.mlir
// RUN: FileCheck %s --check-prefix=EMIT < %t.mlir
// RUN: %approxcc opt %t.mlir --pass-pipeline=approx-ml-func-substitute | FileCheck %s --check-prefix=SUB
// RUN: %approxcc opt %t.mlir --pass-pipeline=approx-ml-task-skipping | FileCheck %s --check-prefix=SKIP
// RUN: %approxcc opt %t.mlir --pass-pipeline=approx-ml-loop-perforate | FileCheck %s --check-prefix=PERF
// RUN: %approxcc opt %t.mlir --pass-pipeline=approx-ml-quantize | FileCheck %s --check-prefix=QUANT
// RUN: %approxcc opt %t.mlir --pass-pipeline=approx-ml-precision | FileCheck %s --check-prefix=PREC
// RUN: %approxcc opt %t.mlir --pass-pipeline=approx-ml-func-substitute,approx-ml-task-skipping,approx-ml-loop-perforate,approx-ml-quantize,approx-ml-precision | FileCheck %s --check-prefix=ALL

// One knob per decorator, nested in decorator order; the dynamic knob's state is an f32
// argument; innermost, a call of the exact function's StableHLO.
// EMIT:      builtin.module attributes {approx.ml_source = "{{.*}}mlp.py"}
// EMIT:      func.func @forward(%0: tensor<8x4xf32>, %1: tensor<2x8x8xf32>, %2: tensor<2x8xf32>, %3: f32 {approx.state = "load"}) -> tensor<2x4xf32>
// EMIT-NEXT:   approx.knob "sub" id 0 [func_substitute] (%3, %0, %1, %2) params {target = "function", values = [0 : i64, 1 : i64], variants = [@forward.sub.linear], dynamic, thresholds = 1 : i64, range = [0 : i64, 10 : i64]} loc "{{.*}}mlp.py:27:2"
// EMIT:        approx.knob "skip" id 1 [task_skipping] {{.*}} params {target = "function", values = [0 : i64, 1 : i64]}
// EMIT:        approx.knob "perf" id 2 [loop_perforate] {{.*}} params {target = "function", values = [1 : i64, 2 : i64]}
// EMIT:        approx.knob "quant" id 3 [quantize] {{.*}} params {target = "function", values = [0 : i64, 1 : i64, 2 : i64]}
// EMIT:        approx.knob "prec" id 4 [precision] {{.*}} params {target = "function", values = [0 : i64, 1 : i64]}
// EMIT:        func.call @forward.exact(
// EMIT:      func.func private @forward.exact(%{{.*}}: tensor<8x4xf32>, %{{.*}}: tensor<2x8x8xf32>, %{{.*}}: tensor<2x8xf32>) -> tensor<2x4xf32> attributes {approx.variant_of = "forward", approx.choice = {sub = 0 : i64, skip = 0 : i64, perf = 1 : i64, quant = 0 : i64, prec = 0 : i64}
// EMIT:        "stablehlo.while"
// EMIT:      func.func private @forward.sub.linear(
// EMIT-NOT:  func.func private @forward.{{skip|perf|quant|prec}}

// func_substitute: the substitute (which ignores the weights) as its own function, the
// knob's `variants` as in C.
// SUB:       approx.knob "sub" {{.*}} variants = [@forward.sub.linear],
// SUB:       func.func private @forward.sub.linear(%{{.*}}: tensor<2x8xf32>) -> tensor<2x4xf32> {{.*}}approx.choice = {sub = 1 : i64,
// SUB-NEXT:    "stablehlo.slice"

// Each pass adds its variants of every variant already in the module (here the exact
// function and the substitute).
// task_skipping 1: the last of the two stacked layers is gone.
// SKIP:      approx.knob "skip" {{.*}} variants = [@forward.skip.1, @forward.sub.linear.skip.1]}
// SKIP:      func.func private @forward.skip.1(%{{.*}}: tensor<8x4xf32>, %{{.*}}: tensor<1x8x8xf32>, %{{.*}}: tensor<2x8xf32>)

// loop_perforate 2: the scan runs over every second layer.
// PERF:      approx.knob "perf" {{.*}} variants = [@forward.perf.2, @forward.sub.linear.perf.2]}
// PERF:      func.func private @forward.perf.2(
// PERF:        "stablehlo.slice"(%{{.*}}) <{limit_indices = array<i64: 2, 8, 8>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 2, 1, 1>}> : (tensor<2x8x8xf32>) -> tensor<1x8x8xf32>

// quantize: int4 in groups of 4 rows (packed pairs, f32 scales per group), and w8a8 (int8
// weights, activations quantised per row, int8 x int8 matmul accumulating in int32).
// QUANT:     approx.knob "quant" {{.*}} variants = [@forward.quant.int4_g4, @forward.quant.w8a8, @forward.sub.linear.quant.int4_g4, @forward.sub.linear.quant.w8a8]}
// QUANT:     func.func private @forward.quant.int4_g4(%{{.*}}: tensor<4x4xi8>, %{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<2x4x8xi8>, %{{.*}}: tensor<2x2x8xf32>, %{{.*}}: tensor<2x8xf32>)
// QUANT:       "stablehlo.shift_right_arithmetic"
// QUANT:     func.func private @forward.quant.w8a8(%{{.*}}: tensor<8x4xi8>, %{{.*}}: tensor<1x4xf32>, %{{.*}}: tensor<2x8x8xi8>, %{{.*}}: tensor<2x1x8xf32>, %{{.*}}: tensor<2x8xf32>)
// QUANT:       "stablehlo.dot_general"{{.*}} : (tensor<2x8xi8>, tensor<8x4xi8>) -> tensor<2x4xi32>

// precision bf16: bf16 weights and compute, matmuls accumulating in f32, f32 outputs.
// PREC:      approx.knob "prec" {{.*}} variants = [@forward.prec.bf16, @forward.sub.linear.prec.bf16]}
// PREC:      func.func private @forward.prec.bf16(%{{.*}}: tensor<8x4xbf16>, %{{.*}}: tensor<2x8x8xbf16>, %{{.*}}: tensor<2x8xf32>) -> tensor<2x4xf32>
// PREC:        "stablehlo.dot_general"{{.*}} : (tensor<2x8xbf16>, tensor<8x4xbf16>) -> tensor<2x4xf32>

// All passes: the product of the domains, 2 x 2 x 2 x 3 x 2 = 48 variants.
// ALL-COUNT-48: approx.variant_of = "forward"
// ALL-NOT: approx.variant_of
