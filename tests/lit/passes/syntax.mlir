// Every approx op's custom syntax round-trips (print, parse, print the same), and the
// generic form parses to the same ops.
// RUN: %approxcc opt %s > %t.1.mlir
// RUN: %approxcc opt %t.1.mlir > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// RUN: FileCheck %s < %t.1.mlir

// CHECK-LABEL: func.func @custom
// CHECK:         %{{.*}} = approx.knob "score_loop" id 0 [loop_perforate] (%{{.*}}, %{{.*}}) params {target = "loop", values = [1 : i64, 2 : i64, 4 : i64], dynamic, thresholds = 2 : i64, range = [0 : i64, 100 : i64]} loc "k.c:5:11" : (i32, index) -> f32 {
// CHECK-NEXT:    ^{{.*}}(%[[S:.*]]: i32, %{{.*}}: index):
// CHECK-NEXT:      %[[V:.*]] = approx.decision_tree %[[S]] [37, 80] -> [1, 2, 4] "loop_perforate" : i32
// CHECK-NEXT:      approx.transform "loop_perforate" %[[V]]
// CHECK:           approx.try recover exact {
// CHECK:             approx.yield %{{.*}} : i1
// CHECK-NEXT:      } {}
// CHECK:           approx.yield %{{.*}} : f32
// CHECK:         approx.knob "sub" id 1 [func_substitute] (%{{.*}}) params {target = "call", callee = @f, values = [0 : i64, 1 : i64], variants = [@f_fast]} : (f32) -> f32 {
// CHECK:           approx.transform "func_substitute" 1{{$}}
// CHECK:           approx.try recover @fallback {
// CHECK:           } {
// CHECK-NEXT:        func.call @fallback() : () -> ()
// CHECK-NEXT:        approx.yield
// CHECK-NEXT:      }
// CHECK:           approx.decision_tree %{{.*}} [%{{.*}}] -> [%{{.*}}, %{{.*}}] "task_skipping" : f32
// CHECK:           approx.decision_tree %{{.*}} [-0.5, 2.25, 1.0e+20] -> [0, 1, 0, 1] "task_skipping" {note} : f32
func.func private @f(f32) -> f32
func.func private @f_fast(f32) -> f32
func.func private @fallback()
func.func @custom(%s: i32, %n: index, %x: f32) -> f32 {
  %r = approx.knob "score_loop" id 0 [loop_perforate] (%s, %n) params {target = "loop", values = [1, 2, 4], dynamic, thresholds = 2, range = [0, 100]} loc "k.c:5:11" : (i32, index) -> f32 {
  ^bb0(%state: i32, %t: index):
    %v = approx.decision_tree %state [37, 80] -> [1, 2, 4] "loop_perforate" : i32
    approx.transform "loop_perforate" %v
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    approx.try recover exact {
      %ok = arith.constant true
      approx.yield %ok : i1
    } {}
    %z = arith.constant 0.0 : f32
    approx.yield %z : f32
  }
  %y = approx.knob "sub" id 1 [func_substitute] (%r) params {target = "call", callee = @f, values = [0, 1], variants = [@f_fast]} : (f32) -> f32 {
  ^bb0(%a: f32):
    approx.transform "func_substitute" 1
    %b = func.call @f(%a) : (f32) -> f32
    approx.try recover @fallback {
      %ok = arith.constant true
      approx.yield %ok : i1
    } {
      func.call @fallback() : () -> ()
      approx.yield
    }
    approx.yield %b : f32
  }
  approx.knob "trees" id 2 [task_skipping] (%y) params {} : (f32) -> () {
  ^bb0(%a: f32):
    %t0 = arith.constant 1.5 : f32
    %d0 = arith.constant 0 : index
    %d1 = arith.constant 1 : index
    %v = approx.decision_tree %a [%t0] -> [%d0, %d1] "task_skipping" : f32
    %w = approx.decision_tree %a [-0.5, 2.25, 1.0e+20] -> [0, 1, 0, 1] "task_skipping" {note} : f32
    approx.yield
  }
  func.return %y : f32
}

// CHECK-LABEL: func.func @generic
// CHECK:         approx.knob "g" id 3 [task_skipping] (%{{.*}}) params {dynamic} : (i64) -> () {
// CHECK:           %[[V:.*]] = approx.decision_tree %{{.*}} [10] -> [0, 1] "task_skipping" : i64
// CHECK-NEXT:      approx.transform "task_skipping" %[[V]]
// CHECK-NEXT:      approx.transform "task_skipping" 1{{$}}
// CHECK-NEXT:      approx.try recover exact {
func.func @generic(%s: i64) {
  "approx.knob"(%s) <{id = 3 : i64, name = "g", transform_types = ["task_skipping"], params = {dynamic}}> ({
  ^bb0(%a: i64):
    %v = "approx.decision_tree"(%a) <{thresholds = [10], decisions = [0, 1], transform_type = "task_skipping", operandSegmentSizes = array<i32: 1, 0, 0>}> : (i64) -> index
    "approx.transform"(%v) <{transform_type = "task_skipping"}> : (index) -> ()
    "approx.transform"() <{transform_type = "task_skipping", transform_value = 1 : i64}> : () -> ()
    "approx.try"() <{recover = "exact"}> ({
      %ok = "arith.constant"() <{value = true}> : () -> i1
      "approx.yield"(%ok) : (i1) -> ()
    }, {}) : () -> ()
    "approx.yield"() : () -> ()
  }) : (i64) -> ()
  func.return
}
