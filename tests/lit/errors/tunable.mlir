// RUN: not %approxcc opt %s --split-input-file --pass-pipeline=approx-tunable 2>&1 | FileCheck %s

// approx-tunable runs after approx-emit-management.
// CHECK: k.c:1:1: error: approx-tunable: knob 'a' needs exactly one transform type and one approx.transform or approx.decision_tree (run approx-emit-management first)
approx.knob "a" id 0 [task_skipping] () params {} loc "k.c:1:1" : () -> () {
  approx.yield
}

// -----

// CHECK: k.c:2:1: error: approx-tunable: knob 'b' needs exactly one transform type
approx.knob "b" id 0 [task_skipping, memoize] () params {} loc "k.c:2:1" : () -> () {
  approx.transform "task_skipping" 0
  approx.transform "memoize" 1
  approx.yield
}

// -----

// CHECK: k.c:3:1: error: approx-tunable: knob 'c' is already tunable
func.func @f(%s: i32, %t: i32, %d: index) {
  approx.knob "c" id 0 [task_skipping] (%s, %t, %d) params {dynamic} loc "k.c:3:1" : (i32, i32, index) -> () {
  ^bb0(%a: i32, %b: i32, %c: index):
    %v = approx.decision_tree %a [%b] -> [%c, %c] "task_skipping" : i32
    approx.transform "task_skipping" %v
    approx.yield
  }
  func.return
}
