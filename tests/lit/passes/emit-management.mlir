// RUN: %approxcc opt %s --pass-pipeline=approx-emit-management --split-input-file | FileCheck %s

// A static knob without a configured value gets the exact value (loop_perforate: 1).
// CHECK-LABEL: func.func @exact
// CHECK:         approx.knob "l"
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: memref<?xf32>, %{{.*}}: index):
// CHECK-NEXT:      approx.transform "loop_perforate" 1{{$}}
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
// CHECK:         approx.transform "loop_perforate" 3{{$}}
// CHECK:         scf.for
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
// CHECK:         approx.transform "func_substitute" 0{{$}}
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

// -----

// An unconfigured dynamic knob: thresholds evenly spaced inside `range`
// (0 + 100 * 1/3 = 33.3 -> 33, 66.7 -> 67), every decision exact, over the state (the first
// block argument).
// CHECK-LABEL: func.func @dynamic_default
// CHECK:         ^{{.*}}(%[[S:.*]]: i32, %{{.*}}: index):
// CHECK-NEXT:      %[[V:.*]] = approx.decision_tree %[[S]] [33, 67] -> [1, 1, 1] "loop_perforate" : i32
// CHECK-NEXT:      approx.transform "loop_perforate" %[[V]]
// CHECK-NEXT:      arith.constant 0 : index
func.func @dynamic_default(%s: i32, %n: index) {
  approx.knob "d" id 0 [loop_perforate] (%s, %n) params {values = [1, 2, 4], dynamic, thresholds = 2, range = [0, 100]} : (i32, index) -> () {
  ^bb0(%state: i32, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    approx.yield
  }
  func.return
}

// -----

// Defaults: one threshold in [0, 100]; task_skipping's exact value is 0.
// CHECK-LABEL: func.func @dynamic_float
// CHECK:         approx.decision_tree %{{.*}} [50] -> [0, 0] "task_skipping" : f32
func.func @dynamic_float(%s: f32) {
  approx.knob "f" id 0 [task_skipping] (%s) params {dynamic} : (f32) -> () {
  ^bb0(%state: f32):
    approx.yield
  }
  func.return
}

// -----

// A configured tree is used as it is, float thresholds included.
// CHECK-LABEL: func.func @dynamic_configured
// CHECK:         approx.decision_tree %{{.*}} [0.5, 2.5] -> [1, 2, 4] "loop_perforate" : f64
func.func @dynamic_configured(%s: f64, %n: index) {
  approx.knob "c" id 0 [loop_perforate] (%s, %n) params {values = [1, 2, 4], dynamic, thresholds = 2, decision_thresholds = [0.5, 2.5], decisions = [1, 2, 4]} : (f64, index) -> () {
  ^bb0(%state: f64, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    approx.yield
  }
  func.return
}

// -----

// A configured static value on a dynamic knob wins: the state is not consulted.
// CHECK-LABEL: func.func @dynamic_with_value
// CHECK-NOT:     approx.decision_tree
// CHECK:         approx.transform "task_skipping" 1{{$}}
func.func @dynamic_with_value(%s: i64) {
  approx.knob "v" id 0 [task_skipping] (%s) params {values = [0, 1], dynamic, value = 1} : (i64) -> () {
  ^bb0(%state: i64):
    approx.yield
  }
  func.return
}
