// Errors of approx-lower-try, approx-bind-runtime and the transform patterns, each at the
// knob's annotation.
// RUN: not %approxcc opt %s --split-input-file --pass-pipeline=approx-lower-try,approx-bind-runtime,approx-transform 2>&1 | FileCheck %s
// The transform checks the variants' types itself too.
// RUN: not %approxcc opt %s --split-input-file --pass-pipeline=approx-transform 2>&1 | FileCheck %s --check-prefix=TRANSFORM

// CHECK-NOT: Traceback
// CHECK: k.c:1:1: error: knob 'v': func_substitute: variant 'f_wide' has type (f64) -> f32, the exact function 'f' has type (f32) -> f32
// TRANSFORM: k.c:1:1: error: knob 'v': func_substitute: variant 'f_wide' has type (f64) -> f32, the exact function 'f' has type (f32) -> f32
func.func private @f(f32) -> f32
func.func private @f_wide(f64) -> f32
func.func @k(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "v", transform_types = ["func_substitute"], params = {target = "call", callee = @f, variants = [@f_wide], value = 1}, loc = "k.c:1:1"}> ({
  ^bb0(%a: f32):
    "approx.transform"() <{transform_type = "func_substitute", transform_value = 1 : i64}> : () -> ()
    %y = func.call @f(%a) : (f32) -> f32
    "approx.yield"(%y) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}

// -----

// CHECK: k.c:2:1: error: knob 'w': func_substitute: variant 'g_fast' is not declared in the module
func.func @g(%p: !llvm.ptr) -> i32 {
  %r = "approx.knob"(%p) <{id = 0 : i64, name = "w", transform_types = ["func_substitute"], params = {target = "function", variants = [@g_fast]}, loc = "k.c:2:1"}> ({
  ^bb0(%q: !llvm.ptr):
    "approx.transform"() <{transform_type = "func_substitute", transform_value = 1 : i64}> : () -> ()
    %c = arith.constant 1 : i32
    "approx.yield"(%c) : (i32) -> ()
  }) : (!llvm.ptr) -> i32
  func.return %r : i32
}

// -----

// CHECK: k.c:3:1: error: knob 'x': func_substitute: value 2 has no variant (values are 0 to 1)
func.func private @f(f32) -> f32
func.func private @f_fast(f32) -> f32
func.func @k(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "x", transform_types = ["func_substitute"], params = {target = "call", callee = @f, variants = [@f_fast]}, loc = "k.c:3:1"}> ({
  ^bb0(%a: f32):
    "approx.transform"() <{transform_type = "func_substitute", transform_value = 2 : i64}> : () -> ()
    %y = func.call @f(%a) : (f32) -> f32
    "approx.yield"(%y) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}

// -----

// CHECK: k.c:4:1: error: knob 'y': func_substitute: expected one call of 'f' in the target, found 2
func.func private @f(f32) -> f32
func.func private @f_fast(f32) -> f32
func.func @k(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "y", transform_types = ["func_substitute"], params = {target = "call", callee = @f, variants = [@f_fast]}, loc = "k.c:4:1"}> ({
  ^bb0(%a: f32):
    "approx.transform"() <{transform_type = "func_substitute", transform_value = 1 : i64}> : () -> ()
    %y = func.call @f(%a) : (f32) -> f32
    %z = func.call @f(%y) : (f32) -> f32
    "approx.yield"(%z) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}

// -----

// CHECK: k.c:5:1: error: knob 'z': func_substitute: no exact function to substitute (a knob with target "function" directly in a func.func, or target "call" and params.callee)
func.func private @f_fast(f32) -> f32
func.func @k(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "z", transform_types = ["func_substitute"], params = {target = "statement", variants = [@f_fast]}, loc = "k.c:5:1"}> ({
  ^bb0(%a: f32):
    "approx.transform"() <{transform_type = "func_substitute", transform_value = 1 : i64}> : () -> ()
    "approx.yield"(%a) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}

// -----

// CHECK: k.c:6:1: error: knob 't': task_skipping: a target that yields values cannot be skipped
func.func @k(%x: f32, %v: index) -> f32 {
  %r = "approx.knob"(%x, %v) <{id = 0 : i64, name = "t", transform_types = ["task_skipping"], params = {target = "statement"}, loc = "k.c:6:1"}> ({
  ^bb0(%a: f32, %w: index):
    "approx.transform"(%w) <{transform_type = "task_skipping"}> : (index) -> ()
    %y = arith.addf %a, %a : f32
    "approx.yield"(%y) : (f32) -> ()
  }) : (f32, index) -> f32
  func.return %r : f32
}

// -----

// CHECK: k.c:7:1: error: knob 'u': task_skipping: value 2 must be 0 or 1
func.func @k() {
  "approx.knob"() <{id = 0 : i64, name = "u", transform_types = ["task_skipping"], params = {target = "statement"}, loc = "k.c:7:1"}> ({
    "approx.transform"() <{transform_type = "task_skipping", transform_value = 2 : i64}> : () -> ()
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// CHECK: k.c:8:1: error: knob 'm': memoize: the target must compute one integer or float result, got (index)
func.func private @pick(i32) -> index
func.func @k(%x: i32) -> index {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "m", transform_types = ["memoize"], params = {target = "call", callee = @pick}, loc = "k.c:8:1"}> ({
  ^bb0(%a: i32):
    "approx.transform"() <{transform_type = "memoize", transform_value = 2 : i64}> : () -> ()
    %y = func.call @pick(%a) : (i32) -> index
    "approx.yield"(%y) : (index) -> ()
  }) : (i32) -> index
  func.return %r : index
}

// -----

// CHECK: k.c:9:1: error: knob 'n': memoize: value 0 must be at least 1
func.func @k(%x: i32) -> i32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "n", transform_types = ["memoize"], params = {target = "function"}, loc = "k.c:9:1"}> ({
  ^bb0(%a: i32):
    "approx.transform"() <{transform_type = "memoize", transform_value = 0 : i64}> : () -> ()
    "approx.yield"(%a) : (i32) -> ()
  }) : (i32) -> i32
  func.return %r : i32
}

// -----

// CHECK: k.c:10:1: error: knob 'o': memoize: params.target must be "call" or "function"
func.func @k(%x: i32) -> i32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "o", transform_types = ["memoize"], params = {target = "statement"}, loc = "k.c:10:1"}> ({
  ^bb0(%a: i32):
    "approx.transform"() <{transform_type = "memoize", transform_value = 2 : i64}> : () -> ()
    "approx.yield"(%a) : (i32) -> ()
  }) : (i32) -> i32
  func.return %r : i32
}

// -----

// CHECK: k.c:11:1: error: knob 'c': check is not supported on knobs with results
func.func @k(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "c", transform_types = ["task_skipping"], params = {target = "statement"}, loc = "k.c:11:1"}> ({
  ^bb0(%a: f32):
    %y = arith.addf %a, %a : f32
    "approx.try"() <{recover = "exact"}> ({
      %t = arith.constant true
      "approx.yield"(%t) : (i1) -> ()
    }, {
    }) : () -> ()
    "approx.yield"(%y) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}

// -----

// CHECK: k.c:12:1: error: knob 'd': check is not supported on "function" targets
func.func @k(%p: !llvm.ptr) {
  "approx.knob"(%p) <{id = 0 : i64, name = "d", transform_types = ["task_skipping"], params = {target = "function"}, loc = "k.c:12:1"}> ({
  ^bb0(%q: !llvm.ptr):
    "approx.try"() <{recover = "exact"}> ({
      %t = arith.constant true
      "approx.yield"(%t) : (i1) -> ()
    }, {
    }) : () -> ()
    "approx.yield"() : () -> ()
  }) : (!llvm.ptr) -> ()
  func.return
}

// -----

// CHECK: k.c:13:1: error: knob 'e': approx-lower-try must run before approx-emit-management
func.func @k() {
  "approx.knob"() <{id = 0 : i64, name = "e", transform_types = ["task_skipping"], params = {target = "statement"}, loc = "k.c:13:1"}> ({
    "approx.transform"() <{transform_type = "task_skipping", transform_value = 0 : i64}> : () -> ()
    "approx.try"() <{recover = "exact"}> ({
      %t = arith.constant true
      "approx.yield"(%t) : (i1) -> ()
    }, {
    }) : () -> ()
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// A state function called with the wrong type (llvm.call types are not checked on parsing).
// CHECK: k.c:14:1: error: knob 'b': the call of 'confidence' uses (!llvm.ptr) -> f32, but 'confidence' has type (!llvm.ptr, ...) -> i32
llvm.func @confidence(!llvm.ptr, ...) -> i32
func.func @k(%p: !llvm.ptr) {
  %s = "llvm.call"(%p) <{callee = @confidence, var_callee_type = !llvm.func<i32 (ptr, ...)>, operandSegmentSizes = array<i32: 1, 0>, op_bundle_sizes = array<i32>}> : (!llvm.ptr) -> f32
  "approx.knob"(%s) <{id = 0 : i64, name = "b", transform_types = ["task_skipping"], params = {target = "statement", dynamic}, loc = "k.c:14:1"}> ({
  ^bb0(%st: f32):
    "approx.yield"() : () -> ()
  }) : (f32) -> ()
  func.return
}

// -----

// A check calling a function with the wrong type, reported before the check leaves the knob.
// CHECK: k.c:15:1: error: knob 'q': the call of 'valid' uses (i32) -> i1, but 'valid' has type (i64) -> i1
llvm.func @valid(i64) -> i1
func.func @k(%x: i32) {
  "approx.knob"(%x) <{id = 0 : i64, name = "q", transform_types = ["task_skipping"], params = {target = "statement"}, loc = "k.c:15:1"}> ({
  ^bb0(%a: i32):
    "approx.try"() <{recover = "exact"}> ({
      %ok = "llvm.call"(%a) <{callee = @valid, operandSegmentSizes = array<i32: 1, 0>, op_bundle_sizes = array<i32>}> : (i32) -> i1
      "approx.yield"(%ok) : (i1) -> ()
    }, {
    }) : () -> ()
    "approx.yield"() : () -> ()
  }) : (i32) -> ()
  func.return
}
