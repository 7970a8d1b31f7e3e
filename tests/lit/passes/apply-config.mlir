// RUN: printf '{"approxcc": "1", "knobs": {"l": {"value": 4}, "d": {"thresholds": [10, 20], "decisions": [1, 2, 4]}}}' > %t.json
// RUN: %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.json}' | FileCheck %s

// CHECK: approx.knob "l" {{.*}} params {values = [1 : i64, 2 : i64, 4 : i64], value = 4 : i64}
// CHECK: approx.knob "d" {{.*}} params {values = [1 : i64, 2 : i64, 4 : i64], thresholds = 2 : i64, dynamic, decision_thresholds = [10 : i64, 20 : i64], decisions = [1 : i64, 2 : i64, 4 : i64]}
// A knob the configuration does not mention stays exact (no value).
// CHECK: approx.knob "e" {{.*}} params {values = [1 : i64, 2 : i64]}
func.func @k(%n: index, %s: i32) {
  "approx.knob"(%n) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"], params = {values = [1, 2, 4]}}> ({
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (index) -> ()
  "approx.knob"(%s, %n) <{id = 1 : i64, name = "d", transform_types = ["loop_perforate"], params = {values = [1, 2, 4], thresholds = 2, dynamic}}> ({
  ^bb0(%state: i32, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (i32, index) -> ()
  "approx.knob"(%n) <{id = 2 : i64, name = "e", transform_types = ["loop_perforate"], params = {values = [1, 2]}}> ({
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}
