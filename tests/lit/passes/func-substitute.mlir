// RUN: %approxcc opt %s --pass-pipeline=approx-transform --split-input-file | FileCheck %s

// A call site, static value 2: the call now calls the second variant.
// CHECK-LABEL: func.func @call_static
// CHECK-NOT:     approx.transform
// CHECK:         %[[Y:.*]] = func.call @f_coarse(%{{.*}}) : (f32) -> f32
// CHECK-NEXT:    arith.addf %[[Y]]
func.func private @f(f32) -> f32
func.func private @f_fast(f32) -> f32
func.func private @f_coarse(f32) -> f32
func.func @call_static(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "s", transform_types = ["func_substitute"], params = {target = "call", callee = @f, values = [0, 1, 2], variants = [@f_fast, @f_coarse]}}> ({
  ^bb0(%a: f32):
    "approx.transform"() <{transform_type = "func_substitute", transform_value = 2 : i64}> : () -> ()
    %y = func.call @f(%a) : (f32) -> f32
    %z = arith.addf %y, %a : f32
    "approx.yield"(%z) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}

// -----

// Value 0 is the exact function: only the transform goes away.
// CHECK-LABEL: func.func @call_exact
// CHECK-NOT:     approx.transform
// CHECK:         func.call @f(%{{.*}}) : (f32) -> f32
func.func private @f(f32) -> f32
func.func private @f_fast(f32) -> f32
func.func @call_exact(%x: f32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "s", transform_types = ["func_substitute"], params = {target = "call", callee = @f, variants = [@f_fast]}}> ({
  ^bb0(%a: f32):
    "approx.transform"() <{transform_type = "func_substitute", transform_value = 0 : i64}> : () -> ()
    %y = func.call @f(%a) : (f32) -> f32
    "approx.yield"(%y) : (f32) -> ()
  }) : (f32) -> f32
  func.return %r : f32
}

// -----

// A dynamic call site switches over the value: case k calls variant k, the default (value
// 0) is the original call. Other calls in the target are left alone.
// CHECK-LABEL: func.func @call_dynamic
// CHECK:         ^{{.*}}(%[[A:.*]]: f32, %[[V:.*]]: index):
// CHECK:         %[[Y:.*]] = scf.index_switch %[[V]] -> f32
// CHECK-NEXT:    case 1 {
// CHECK-NEXT:      %[[F:.*]] = func.call @f_fast(%[[A]]) : (f32) -> f32
// CHECK-NEXT:      scf.yield %[[F]] : f32
// CHECK:         case 2 {
// CHECK-NEXT:      %[[C:.*]] = func.call @f_coarse(%[[A]]) : (f32) -> f32
// CHECK-NEXT:      scf.yield %[[C]] : f32
// CHECK:         default {
// CHECK-NEXT:      %[[E:.*]] = func.call @f(%[[A]]) : (f32) -> f32
// CHECK-NEXT:      scf.yield %[[E]] : f32
// CHECK:         func.call @g(%[[Y]]) : (f32) -> f32
func.func private @f(f32) -> f32
func.func private @g(f32) -> f32
func.func private @f_fast(f32) -> f32
func.func private @f_coarse(f32) -> f32
func.func @call_dynamic(%x: f32, %v: index) -> f32 {
  %r = "approx.knob"(%x, %v) <{id = 1 : i64, name = "d", transform_types = ["func_substitute"], params = {target = "call", callee = @f, variants = [@f_fast, @f_coarse]}}> ({
  ^bb0(%a: f32, %w: index):
    "approx.transform"(%w) <{transform_type = "func_substitute"}> : (index) -> ()
    %y = func.call @f(%a) : (f32) -> f32
    %z = func.call @g(%y) : (f32) -> f32
    "approx.yield"(%z) : (f32) -> ()
  }) : (f32, index) -> f32
  func.return %r : f32
}

// -----

// A function definition, static: the body becomes a call of the variant on the function's
// arguments, in order (an argument the body does not use is captured for the call).
// CHECK-LABEL: func.func @g(
// CHECK:         ^{{.*}}(%[[M:.*]]: i32, %[[Q:.*]]: !llvm.ptr):
// CHECK-NEXT:      %[[R:.*]] = func.call @g_fast(%[[Q]], %[[M]]) : (!llvm.ptr, i32) -> i32
// CHECK-NEXT:      approx.yield %[[R]]
// CHECK-NOT:     arith.addi
func.func private @g_fast(!llvm.ptr, i32) -> i32
func.func @g(%p: !llvm.ptr, %n: i32) -> i32 {
  %r = "approx.knob"(%n) <{id = 2 : i64, name = "g", transform_types = ["func_substitute"], params = {target = "function", variants = [@g_fast]}}> ({
  ^bb0(%m: i32):
    "approx.transform"() <{transform_type = "func_substitute", transform_value = 1 : i64}> : () -> ()
    %t = arith.addi %m, %m : i32
    "approx.yield"(%t) : (i32) -> ()
  }) : (i32) -> i32
  func.return %r : i32
}

// -----

// A function definition, dynamic: the original body moves into the default case.
// CHECK-LABEL: func.func @h
// CHECK:         ^{{.*}}(%[[M:.*]]: i32, %[[W:.*]]: i32, %[[V:.*]]: index, %[[Q:.*]]: !llvm.ptr):
// CHECK-NEXT:      %[[R:.*]] = scf.index_switch %[[V]] -> i32
// CHECK-NEXT:      case 1 {
// CHECK-NEXT:        %[[F:.*]] = func.call @h_fast(%[[Q]], %[[M]], %[[W]]) : (!llvm.ptr, i32, i32) -> i32
// CHECK-NEXT:        scf.yield %[[F]] : i32
// CHECK:           default {
// CHECK-NEXT:        %[[T:.*]] = arith.addi %[[M]], %[[W]] : i32
// CHECK-NEXT:        scf.yield %[[T]] : i32
// CHECK:           approx.yield %[[R]]
func.func private @h_fast(!llvm.ptr, i32, i32) -> i32
func.func @h(%p: !llvm.ptr, %n: i32, %s: i32) -> i32 {
  %c = arith.index_cast %s : i32 to index
  %r = "approx.knob"(%n, %s, %c, %p) <{id = 3 : i64, name = "h", transform_types = ["func_substitute"], params = {target = "function", variants = [@h_fast]}}> ({
  ^bb0(%m: i32, %w: i32, %v: index, %q: !llvm.ptr):
    "approx.transform"(%v) <{transform_type = "func_substitute"}> : (index) -> ()
    %t = arith.addi %m, %w : i32
    "approx.yield"(%t) : (i32) -> ()
  }) : (i32, i32, index, !llvm.ptr) -> i32
  func.return %r : i32
}
