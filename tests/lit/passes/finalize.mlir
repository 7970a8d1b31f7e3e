// RUN: %approxcc opt %s --pass-pipeline=approx-finalize --split-input-file | FileCheck %s

// The body replaces the knob: block arguments become the operands, results the yielded values.
// CHECK:       func.func @results(%[[X:.*]]: f32) -> f32 {
// CHECK-NOT:     approx.
// CHECK:         %[[Y:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:    func.return %[[Y]] : f32
func.func @results(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "sq", transform_types = ["func_substitute"], params = {}}> ({
  ^bb0(%a: f32):
    %y = arith.mulf %a, %a : f32
    "approx.yield"(%y) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}

// -----

// Nested knobs are inlined too.
// CHECK:       func.func @nested(%[[N:.*]]: index, %[[X:.*]]: f32) {
// CHECK-NOT:     approx.
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:      arith.addf %[[X]], %[[X]] : f32
func.func @nested(%n: index, %x: f32) {
  "approx.knob"(%n, %x) <{id = 0 : i64, name = "outer", transform_types = ["loop_perforate"], params = {}}> ({
  ^bb0(%t: index, %a: f32):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %s = "approx.knob"(%a) <{id = 1 : i64, name = "inner", transform_types = ["task_skipping"], params = {}}> ({
      ^bb1(%b: f32):
        %z = arith.addf %b, %b : f32
        "approx.yield"(%z) : (f32) -> ()
      }) : (f32) -> f32
    }
    "approx.yield"() : () -> ()
  }) : (index, f32) -> ()
  func.return
}

// -----

// A body that yields its own block argument: the knob's result is the operand.
// CHECK:       func.func @identity(%[[P:.*]]: i32) -> i32 {
// CHECK-NOT:     approx.
// CHECK-NEXT:    func.return %[[P]] : i32
func.func @identity(%p: i32) -> i32 {
  %r = "approx.knob"(%p) <{id = 0 : i64, name = "memo", transform_types = ["memoize"], params = {}}> ({
  ^bb0(%a: i32):
    "approx.yield"(%a) : (i32) -> ()
  }) : (i32) -> i32
  func.return %r : i32
}
