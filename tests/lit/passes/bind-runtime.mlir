// RUN: %approxcc opt %s --pass-pipeline=approx-bind-runtime | FileCheck %s

// Every callee of a state computation, knob body and try region resolves with the type the
// call uses (variadic llvm.func declarations accept extra arguments), and every variant has
// the exact function's type: the module is unchanged.
// CHECK-LABEL: func.func @kernel
// CHECK:         llvm.call @confidence
// CHECK:         approx.knob
// CHECK:           func.call @f(
// CHECK:           func.call @ok(
// CHECK:           func.call @fallback(
llvm.func @confidence(!llvm.ptr, ...) -> i32
func.func private @f(f32) -> f32
func.func private @f_fast(f32) -> f32
func.func private @ok(f32) -> i1
func.func private @fallback(f32)
func.func @kernel(%p: !llvm.ptr, %x: f32, %n: i32) -> f32 {
  %s = "llvm.call"(%p, %n) <{callee = @confidence, var_callee_type = !llvm.func<i32 (ptr, ...)>, operandSegmentSizes = array<i32: 2, 0>, op_bundle_sizes = array<i32>}> : (!llvm.ptr, i32) -> i32
  %r = "approx.knob"(%s, %x) <{id = 0 : i64, name = "s", transform_types = ["func_substitute"], params = {target = "call", callee = @f, variants = [@f_fast], dynamic, thresholds = 1}}> ({
  ^bb0(%st: i32, %a: f32):
    %y = func.call @f(%a) : (f32) -> f32
    "approx.try"() <{recover = @fallback}> ({
      %good = func.call @ok(%y) : (f32) -> i1
      "approx.yield"(%good) : (i1) -> ()
    }, {
      func.call @fallback(%a) : (f32) -> ()
      "approx.yield"() : () -> ()
    }) : () -> ()
    "approx.yield"(%y) : (f32) -> ()
  }) : (i32, f32) -> f32
  func.return %r : f32
}
