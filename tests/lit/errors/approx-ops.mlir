// Verifier errors of knob params, approx.try's regions and approx.decision_tree's two forms.
// RUN: not %approxcc opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: k.c:1:1: error: 'approx.knob' in knob 'a': params.target must be one of loop, statement, call, function
approx.knob "a" id 0 [task_skipping] () params {target = "block"} loc "k.c:1:1" : () -> () {
  approx.yield
}

// -----

// CHECK: k.c:2:1: error: 'approx.knob' in knob 'b': params.callee must be a symbol reference
approx.knob "b" id 0 [func_substitute] () params {target = "call", callee = "f"} loc "k.c:2:1" : () -> () {
  approx.yield
}

// -----

// CHECK: k.c:3:1: error: 'approx.knob' in knob 'c': params.callee needs target = "call"
approx.knob "c" id 0 [func_substitute] () params {target = "statement", callee = @f} loc "k.c:3:1" : () -> () {
  approx.yield
}

// -----

// CHECK: k.c:4:1: error: 'approx.knob' in knob 'd': a dynamic knob's first operand must be its state (a signless integer or a float)
approx.knob "d" id 0 [task_skipping] () params {dynamic} loc "k.c:4:1" : () -> () {
  approx.yield
}

// -----

// CHECK: k.c:5:1: error: 'approx.knob' in knob 'e': a dynamic knob's first operand must be its state (a signless integer or a float)
func.func @f(%n: index) {
  approx.knob "e" id 0 [task_skipping] (%n) params {dynamic} loc "k.c:5:1" : (index) -> () {
  ^bb0(%t: index):
    approx.yield
  }
  func.return
}

// -----

// CHECK: k.c:6:1: error: 'approx.try' in knob 'f': recover = "exact" needs an empty recovery region
approx.knob "f" id 0 [task_skipping] () params {} loc "k.c:6:1" : () -> () {
  approx.try recover exact {
    %ok = arith.constant true
    approx.yield %ok : i1
  } {
    approx.yield
  }
  approx.yield
}

// -----

// CHECK: k.c:7:1: error: 'approx.try' in knob 'g': a recover symbol needs a recovery region of one block without arguments ending with approx.yield of no values
approx.knob "g" id 0 [task_skipping] () params {} loc "k.c:7:1" : () -> () {
  approx.try recover @fallback {
    %ok = arith.constant true
    approx.yield %ok : i1
  } {}
  approx.yield
}

// -----

// CHECK: k.c:8:1: error: 'approx.decision_tree' in knob 'h': expected 2 decisions for 1 thresholds, got 1
func.func @f(%s: i32, %t: i32, %d: index) {
  approx.knob "h" id 0 [task_skipping] (%s, %t, %d) params {dynamic} loc "k.c:8:1" : (i32, i32, index) -> () {
  ^bb0(%a: i32, %b: i32, %c: index):
    %v = approx.decision_tree %a [%b] -> [%c] "task_skipping" : i32
    approx.yield
  }
  func.return
}

// -----

// The generic form can mix the two forms; the verifier rejects it.
// CHECK: k.c:9:1: error: 'approx.decision_tree' in knob 'i': thresholds and decisions must both be attributes or both be operands
func.func @f(%s: i32, %d: index) {
  approx.knob "i" id 0 [task_skipping] (%s, %d) params {dynamic} loc "k.c:9:1" : (i32, index) -> () {
  ^bb0(%a: i32, %c: index):
    %v = "approx.decision_tree"(%a, %c) <{thresholds = [], transform_type = "task_skipping", operandSegmentSizes = array<i32: 1, 0, 1>}> : (i32, index) -> index
    approx.yield
  }
  func.return
}

// -----

// (The custom syntax gives the thresholds the state's type; the generic form can differ.)
// CHECK: k.c:10:1: error: 'approx.decision_tree' in knob 'j': threshold operands must have the state's type i32
func.func @f(%s: i32, %t: i64, %d: index) {
  approx.knob "j" id 0 [task_skipping] (%s, %t, %d) params {dynamic} loc "k.c:10:1" : (i32, i64, index) -> () {
  ^bb0(%a: i32, %b: i64, %c: index):
    %v = "approx.decision_tree"(%a, %b, %c, %c) <{transform_type = "task_skipping", operandSegmentSizes = array<i32: 1, 1, 2>}> : (i32, i64, index, index) -> index
    approx.yield
  }
  func.return
}

// -----

// CHECK: k.c:11:1: error: 'approx.decision_tree' in knob 'k': thresholds must be an array of i64 or f64 numbers
func.func @f(%s: i32) {
  approx.knob "k" id 0 [task_skipping] (%s) params {dynamic} loc "k.c:11:1" : (i32) -> () {
  ^bb0(%a: i32):
    %v = "approx.decision_tree"(%a) <{thresholds = [1 : i32], decisions = [0, 1], transform_type = "task_skipping", operandSegmentSizes = array<i32: 1, 0, 0>}> : (i32) -> index
    approx.yield
  }
  func.return
}

// -----

// The custom syntax takes numbers or operands, not both.
// CHECK: approx-ops.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: thresholds and decisions must be all numbers or all operands
func.func @f(%s: i32, %d: index) {
  approx.knob "l" id 0 [task_skipping] (%s, %d) params {dynamic} : (i32, index) -> () {
  ^bb0(%a: i32, %c: index):
    %v = approx.decision_tree %a [5] -> [%c, 1] "task_skipping" : i32
    approx.yield
  }
  func.return
}
