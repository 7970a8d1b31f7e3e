// RUN: not %approxcc opt %s --split-input-file --pass-pipeline=approx-emit-management,approx-transform,approx-finalize 2>&1 | FileCheck %s

// CHECK: k.c:1:1: error: knob 'dyn': range [0, 2] has no room for 3 distinct integer thresholds
func.func @f(%s: i32, %n: index) {
  "approx.knob"(%s, %n) <{id = 0 : i64, name = "dyn", transform_types = ["loop_perforate"], params = {values = [1, 2], thresholds = 3, range = [0, 2], dynamic}, loc = "k.c:1:1"}> ({
  ^bb0(%state: i32, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (i32, index) -> ()
  func.return
}

// -----

// CHECK: k.c:2:1: error: knob 'memo': memoize: params.target must be "call" or "function"
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "memo", transform_types = ["memoize"], params = {}, loc = "k.c:2:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// RUN: not %approxcc opt %s --split-input-file --pass-pipeline=approx-finalize 2>&1 | FileCheck %s --check-prefix=FINAL
// FINAL: k.c:3:1: error: 'approx.transform' would remain after approx-finalize
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "t", transform_types = ["task_skipping"], params = {}, loc = "k.c:3:1"}> ({
    "approx.transform"() <{transform_type = "task_skipping", transform_value = 0 : i64}> : () -> ()
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// RUN: not %approxcc opt %s --split-input-file --pass-pipeline=approx-transform 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: k.c:4:1: error: loop_perforate: value 0 must be at least 1
func.func @f(%n: index) {
  "approx.knob"(%n) <{id = 0 : i64, name = "z", transform_types = ["loop_perforate"], params = {}, loc = "k.c:4:1"}> ({
  ^bb0(%t: index):
    "approx.transform"() <{transform_type = "loop_perforate", transform_value = 0 : i64}> : () -> ()
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}
