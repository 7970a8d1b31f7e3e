// A state-driven knob as a dispatch inside one module: approx-ml-dispatch adds, per choice of
// the static knobs, a function that evaluates the decision tree on its state argument and
// runs the selected variant under `stablehlo.case`.
// RUN: %approxcc -S -emit-mlir %S/Inputs/mlp.py -o %t.mlir
// RUN: %approxcc opt %t.mlir --pass-pipeline=approx-ml-func-substitute,approx-ml-dispatch | FileCheck %s
// RUN: %approxcc opt %t.mlir --pass-pipeline=approx-ml-func-substitute,approx-ml-precision,approx-ml-dispatch | FileCheck %s --check-prefix=PREC

// Weights of every branch, the inputs, then the state, thresholds and decisions (positions in
// `approx.dispatch_values`) of the knob `sub`.
// CHECK:      func.func private @forward.exact.dispatch(%arg0: tensor<8x4xf32>, %arg1: tensor<2x8x8xf32>, %arg2: tensor<2x8xf32>, %arg3: tensor<f32>, %arg4: tensor<1xf32>, %arg5: tensor<2xi32>) -> tensor<2x4xf32>
// CHECK-SAME:   approx.dispatch_of = "forward"
// CHECK-SAME:   approx.dispatch_knobs = ["sub"], approx.dispatch_values = {{\[\[}}0 : i64, 1 : i64]], approx.branches = [@forward.exact, @forward.sub.linear]
// The leaf: how many thresholds are <= the state; the decision at that leaf picks the branch.
// CHECK:        "stablehlo.compare"(%arg4, %{{.*}}) <{comparison_direction = #stablehlo<comparison_direction LE>}>
// CHECK:        %[[LEAF:.*]] = "stablehlo.reduce"
// CHECK:        "stablehlo.dynamic_slice"(%arg5, %[[LEAF]])
// CHECK:        %[[BRANCH:.*]] = "stablehlo.add"
// CHECK:        "stablehlo.case"(%[[BRANCH]]) ({
// CHECK-NEXT:     func.call @forward.exact(%arg0, %arg1, %arg2)
// CHECK:        }, {
// CHECK-NEXT:     func.call @forward.sub.linear(%arg2)
// CHECK:        }) : (tensor<i32>) -> tensor<2x4xf32>
// CHECK-NOT:  .dispatch(

// One dispatch per static choice: prec=bf16 dispatches between the bf16 variants.
// PREC:       func.func private @forward.exact.dispatch(
// PREC:       func.func private @forward.prec.bf16.dispatch(
// PREC-SAME:    approx.choice = {skip = 0 : i64, perf = 1 : i64, quant = 0 : i64, prec = 1 : i64}
// PREC-SAME:    approx.branches = [@forward.prec.bf16, @forward.sub.linear.prec.bf16]
