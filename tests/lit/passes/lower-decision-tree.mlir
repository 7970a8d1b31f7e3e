// RUN: %approxcc opt %s --pass-pipeline=approx-lower-decision-tree --split-input-file | FileCheck %s

// decisions[0] below the first threshold; state >= t_i selects the leaf right of t_i.
// CHECK-LABEL: func.func @integer
// CHECK:         ^{{.*}}(%[[S:.*]]: i32, %{{.*}}: index):
// CHECK-NOT:     approx.decision_tree
// CHECK:         %[[T0:.*]] = arith.constant 37 : i32
// CHECK-NEXT:    %[[T1:.*]] = arith.constant 80 : i32
// CHECK-NEXT:    %[[D0:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[D1:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[D2:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[R0:.*]] = arith.cmpi sge, %[[S]], %[[T0]] : i32
// CHECK-NEXT:    %[[V0:.*]] = arith.select %[[R0]], %[[D1]], %[[D0]] : index
// CHECK-NEXT:    %[[R1:.*]] = arith.cmpi sge, %[[S]], %[[T1]] : i32
// CHECK-NEXT:    %[[V1:.*]] = arith.select %[[R1]], %[[D2]], %[[V0]] : index
// CHECK-NEXT:    approx.transform "loop_perforate" %[[V1]]
// The knob body is not copied: one loop.
// CHECK:         scf.for
// CHECK-NOT:     scf.for
func.func @integer(%s: i32, %n: index) {
  approx.knob "l" id 0 [loop_perforate] (%s, %n) params {dynamic} : (i32, index) -> () {
  ^bb0(%state: i32, %t: index):
    %v = approx.decision_tree %state [37, 80] -> [1, 2, 4] "loop_perforate" : i32
    approx.transform "loop_perforate" %v
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    approx.yield
  }
  func.return
}

// -----

// A float state: integer thresholds become constants of its type, compared with cmpf oge.
// CHECK-LABEL: func.func @float
// CHECK:         ^{{.*}}(%[[S:.*]]: f32):
// CHECK:         %[[T0:.*]] = arith.constant 5.000000e+01 : f32
// CHECK-NEXT:    %[[D0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[R0:.*]] = arith.cmpf oge, %[[S]], %[[T0]] : f32
// CHECK-NEXT:    %[[V0:.*]] = arith.select %[[R0]], %[[D1]], %[[D0]] : index
// CHECK-NEXT:    approx.transform "task_skipping" %[[V0]]
func.func @float(%s: f32) {
  approx.knob "t" id 0 [task_skipping] (%s) params {dynamic} : (f32) -> () {
  ^bb0(%state: f32):
    %v = approx.decision_tree %state [50] -> [0, 1] "task_skipping" : f32
    approx.transform "task_skipping" %v
    approx.yield
  }
  func.return
}

// -----

// An integer state: fractional thresholds round up (s >= 2.5 <=> s >= 3), one below the
// type's range clamps to its minimum, one above it is never reached and drops out with its
// leaf.
// CHECK-LABEL: func.func @ranges
// CHECK:         %[[T0:.*]] = arith.constant -128 : i8
// CHECK-NEXT:    %[[T1:.*]] = arith.constant 3 : i8
// CHECK-NEXT:    %[[D0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[D1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[D2:.*]] = arith.constant 0 : index
// CHECK-NEXT:    arith.cmpi sge, %{{.*}}, %[[T0]] : i8
// CHECK-NEXT:    arith.select %{{.*}}, %[[D1]], %[[D0]] : index
// CHECK-NEXT:    arith.cmpi sge, %{{.*}}, %[[T1]] : i8
// CHECK-NEXT:    %[[V:.*]] = arith.select %{{.*}}, %[[D2]], %{{.*}} : index
// CHECK-NEXT:    approx.transform "task_skipping" %[[V]]
func.func @ranges(%s: i8) {
  approx.knob "r" id 0 [task_skipping] (%s) params {dynamic} : (i8) -> () {
  ^bb0(%state: i8):
    %v = approx.decision_tree %state [-1000.0, 2.5, 1000.0] -> [0, 1, 0, 1] "task_skipping" : i8
    approx.transform "task_skipping" %v
    approx.yield
  }
  func.return
}

// -----

// The SSA form (tunable builds) uses its operands as they are.
// CHECK-LABEL: func.func @ssa
// CHECK:         ^{{.*}}(%[[S:.*]]: i64, %[[T:.*]]: i64, %[[D0:.*]]: index, %[[D1:.*]]: index):
// CHECK-NEXT:    %[[R:.*]] = arith.cmpi sge, %[[S]], %[[T]] : i64
// CHECK-NEXT:    %[[V:.*]] = arith.select %[[R]], %[[D1]], %[[D0]] : index
// CHECK-NEXT:    approx.transform "task_skipping" %[[V]]
func.func @ssa(%s: i64, %t: i64, %d0: index, %d1: index) {
  approx.knob "s" id 0 [task_skipping] (%s, %t, %d0, %d1) params {dynamic} : (i64, i64, index, index) -> () {
  ^bb0(%state: i64, %t0: i64, %e0: index, %e1: index):
    %v = approx.decision_tree %state [%t0] -> [%e0, %e1] "task_skipping" : i64
    approx.transform "task_skipping" %v
    approx.yield
  }
  func.return
}

// -----

// No thresholds: the single decision is the value.
// CHECK-LABEL: func.func @constant
// CHECK:         %[[D:.*]] = arith.constant 2 : index
// CHECK-NEXT:    approx.transform "loop_perforate" %[[D]]
func.func @constant(%s: i32, %n: index) {
  approx.knob "c" id 0 [loop_perforate] (%s, %n) params {dynamic, thresholds = 0} : (i32, index) -> () {
  ^bb0(%state: i32, %t: index):
    %v = approx.decision_tree %state [] -> [2] "loop_perforate" : i32
    approx.transform "loop_perforate" %v
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    approx.yield
  }
  func.return
}
