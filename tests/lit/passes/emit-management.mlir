// RUN: %approxcc opt %s --pass-pipeline=approx-emit-management --split-input-file | FileCheck %s

// A static knob without a configured value gets the exact value (loop_perforate: 1).
// CHECK-LABEL: func.func @exact
// CHECK:         "approx.knob"
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: memref<?xf32>, %{{.*}}: index):
// CHECK-NEXT:      "approx.transform"() <{transform_type = "loop_perforate", transform_value = 1 : i64}>
// CHECK-NEXT:      arith.constant 0 : index
// CHECK:           scf.for
func.func @exact(%out: memref<?xf32>, %n: index) {
  "approx.knob"(%out, %n) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"], params = {values = [1, 2, 3, 4]}, loc = "k.c:5:11"}> ({
  ^bb0(%o: memref<?xf32>, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %f = arith.constant 1.0 : f32
      memref.store %f, %o[%k] : memref<?xf32>
    }
    "approx.yield"() : () -> ()
  }) : (memref<?xf32>, index) -> ()
  func.return
}

// -----

// A configured value is used as the transform value.
// CHECK-LABEL: func.func @configured
// CHECK:         "approx.transform"() <{transform_type = "loop_perforate", transform_value = 3 : i64}>
func.func @configured(%n: index) {
  "approx.knob"(%n) <{id = 1 : i64, name = "l", transform_types = ["loop_perforate"], params = {values = [1, 2, 3], value = 3}}> ({
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}

// -----

// Each transform type has its own exact value (func_substitute: 0).
// CHECK-LABEL: func.func @substitute
// CHECK:         "approx.transform"() <{transform_type = "func_substitute", transform_value = 0 : i64}>
// CHECK-NEXT:    func.call @f
func.func private @f(f32) -> f32
func.func private @f_fast(f32) -> f32
func.func @substitute(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 2 : i64, name = "s", transform_types = ["func_substitute"], params = {values = [0, 1], variants = [@f_fast]}}> ({
  ^bb0(%a: f32):
    %y = func.call @f(%a) : (f32) -> f32
    "approx.yield"(%y) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}
