// RUN: not %approxcc opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: k.c:1:1: error: 'approx.knob' in knob 'a': unknown transform_type 'unroll'
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "a", transform_types = ["unroll"], params = {}, loc = "k.c:1:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:2:1: error: 'approx.knob' in knob 'b': a loop_perforate knob must contain an scf.for at the top level of its body
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "b", transform_types = ["loop_perforate"], params = {}, loc = "k.c:2:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:3:1: error: 'approx.knob' in knob 'c': params.value 5 is not in params.values [1, 2]
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "c", transform_types = ["task_skipping"], params = {values = [1, 2], value = 5}, loc = "k.c:3:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:4:1: error: 'approx.knob' in knob 'd': params.values must not be empty
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "d", transform_types = ["task_skipping"], params = {values = []}, loc = "k.c:4:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:5:1: error: 'approx.knob' in knob 'e': params.range must be [lo, hi] with lo < hi, got [4, 2]
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "e", transform_types = ["task_skipping"], params = {range = [4, 2]}, loc = "k.c:5:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:6:1: error: 'approx.knob' in knob 'f': unknown knob params: speed
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "f", transform_types = ["task_skipping"], params = {speed = 1}, loc = "k.c:6:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:7:1: error: 'approx.knob' in knob 'g': approx.yield operands must match the knob results' types
func.func @f(%x: f32) {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "g", transform_types = ["task_skipping"], params = {}, loc = "k.c:7:1"}> ({
  ^bb0(%a: f32):
    "approx.yield"() : () -> ()
  }) : (f32) -> f32
  func.return
}

// -----

// CHECK: k.c:8:1: error: 'approx.knob' in knob 'h': knob block arguments must match the knob operands' types
func.func @f(%x: f32) {
  "approx.knob"(%x) <{id = 0 : i64, name = "h", transform_types = ["task_skipping"], params = {}, loc = "k.c:8:1"}> ({
  ^bb0(%a: i32):
    "approx.yield"() : () -> ()
  }) : (f32) -> ()
  func.return
}

// -----

// CHECK: k.c:9:1: error: 'approx.knob' in knob 'i': Operation using value defined out of its IsolatedFromAbove parent
func.func @f(%x: f32) {
  "approx.knob"() <{id = 0 : i64, name = "i", transform_types = ["task_skipping"], params = {}, loc = "k.c:9:1"}> ({
    %y = arith.addf %x, %x : f32
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:11:1: error: duplicate knob name 'j'
// CHECK: k.c:10:1: note: first defined here
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "j", transform_types = ["task_skipping"], params = {}, loc = "k.c:10:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  "approx.knob"() <{id = 1 : i64, name = "j", transform_types = ["task_skipping"], params = {}, loc = "k.c:11:1"}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:12:1: error: 'approx.decision_tree' in knob 'k': expected 3 decisions for 2 thresholds, got 2
func.func @f(%s: i32) {
  "approx.knob"(%s) <{id = 0 : i64, name = "k", transform_types = ["task_skipping"], params = {}, loc = "k.c:12:1"}> ({
  ^bb0(%a: i32):
    %v = "approx.decision_tree"(%a) <{thresholds = [1, 5], decisions = [0, 1], transform_type = "task_skipping", operandSegmentSizes = array<i32: 1, 0, 0>}> : (i32) -> index
    "approx.yield"() : () -> ()
  }) : (i32) -> ()
  func.return
}

// -----

// CHECK: k.c:13:1: error: 'approx.decision_tree' in knob 'l': thresholds must be strictly increasing, got [5, 1]
func.func @f(%s: f32) {
  "approx.knob"(%s) <{id = 0 : i64, name = "l", transform_types = ["task_skipping"], params = {}, loc = "k.c:13:1"}> ({
  ^bb0(%a: f32):
    %v = "approx.decision_tree"(%a) <{thresholds = [5, 1], decisions = [0, 1, 0], transform_type = "task_skipping", operandSegmentSizes = array<i32: 1, 0, 0>}> : (f32) -> index
    "approx.yield"() : () -> ()
  }) : (f32) -> ()
  func.return
}

// -----

// CHECK: k.c:14:1: error: 'approx.decision_tree' in knob 'm': unknown transform_type 'fuse'
func.func @f(%s: i32) {
  "approx.knob"(%s) <{id = 0 : i64, name = "m", transform_types = ["task_skipping"], params = {}, loc = "k.c:14:1"}> ({
  ^bb0(%a: i32):
    %v = "approx.decision_tree"(%a) <{thresholds = [1], decisions = [0, 1], transform_type = "fuse", operandSegmentSizes = array<i32: 1, 0, 0>}> : (i32) -> index
    "approx.yield"() : () -> ()
  }) : (i32) -> ()
  func.return
}

// -----

// CHECK: k.c:15:1: error: 'approx.transform' in knob 'n': approx.transform needs exactly one of transform_value and a dynamic operand
func.func @f(%v: index) {
  "approx.knob"(%v) <{id = 0 : i64, name = "n", transform_types = ["task_skipping"], params = {}, loc = "k.c:15:1"}> ({
  ^bb0(%a: index):
    "approx.transform"(%a) <{transform_type = "task_skipping", transform_value = 1 : i64}> : (index) -> ()
    "approx.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}

// -----

// CHECK: k.c:16:1: error: 'approx.try' in knob 'o': recover must be "exact" or a symbol, got "retry"
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "o", transform_types = ["task_skipping"], params = {}, loc = "k.c:16:1"}> ({
    "approx.try"() <{recover = "retry"}> ({
      %t = arith.constant true
      "approx.yield"(%t) : (i1) -> ()
    }, {}) : () -> ()
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:17:1: error: 'approx.try' in knob 'p': approx.try check region must end with approx.yield of one i1
func.func @f() {
  "approx.knob"() <{id = 0 : i64, name = "p", transform_types = ["task_skipping"], params = {}, loc = "k.c:17:1"}> ({
    "approx.try"() <{recover = @fallback}> ({
      %t = arith.constant 1 : i32
      "approx.yield"(%t) : (i32) -> ()
    }, {}) : () -> ()
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// A transform outside a knob has no annotation location; xDSL's HasParent check reports it.
// CHECK: approxcc: error: 'approx.transform': 'approx.transform' expects parent op 'approx.knob'
func.func @f() {
  "approx.transform"() <{transform_type = "memoize", transform_value = 1 : i64}> : () -> ()
  func.return
}
