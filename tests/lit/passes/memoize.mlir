// RUN: %approxcc opt %s --pass-pipeline=approx-transform --split-input-file | FileCheck %s

// A call site, static 4: recompute on one call in 4 (count % 4 == 0), else reuse the last
// result; two internal globals per knob.
// CHECK-LABEL: func.func @call_static
// CHECK:         ^{{.*}}(%[[A:.*]]: i32):
// CHECK-NEXT:      %[[CP:.*]] = llvm.mlir.addressof @__approx_memoize_mc_count : !llvm.ptr
// CHECK-NEXT:      %[[LP:.*]] = llvm.mlir.addressof @__approx_memoize_mc_last : !llvm.ptr
// CHECK-NEXT:      %[[N:.*]] = llvm.load %[[CP]] : !llvm.ptr -> i64
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[N1:.*]] = arith.addi %[[N]], %[[ONE]] : i64
// CHECK-NEXT:      llvm.store %[[N1]], %[[CP]] : i64, !llvm.ptr
// CHECK-NEXT:      %[[V:.*]] = arith.constant 4 : i64
// CHECK-NEXT:      %[[PHASE:.*]] = arith.remui %[[N]], %[[V]] : i64
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[FRESH:.*]] = arith.cmpi eq, %[[PHASE]], %[[ZERO]] : i64
// CHECK-NEXT:      %[[Y:.*]] = scf.if %[[FRESH]] -> (f32) {
// CHECK-NEXT:        %[[NEW:.*]] = func.call @score(%[[A]]) : (i32) -> f32
// CHECK-NEXT:        llvm.store %[[NEW]], %[[LP]] : f32, !llvm.ptr
// CHECK-NEXT:        scf.yield %[[NEW]] : f32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[OLD:.*]] = llvm.load %[[LP]] : !llvm.ptr -> f32
// CHECK-NEXT:        scf.yield %[[OLD]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      arith.addf %[[Y]], %[[Y]] : f32
// CHECK:       llvm.mlir.global internal @__approx_memoize_mc_count(0 : i64)
// CHECK-SAME:    : i64
// CHECK:       llvm.mlir.global internal @__approx_memoize_mc_last(0.000000e+00 : f32)
// CHECK-SAME:    : f32
func.func private @score(i32) -> f32
func.func @call_static(%x: i32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "mc", transform_types = ["memoize"], params = {target = "call", callee = @score}}> ({
  ^bb0(%a: i32):
    "approx.transform"() <{transform_type = "memoize", transform_value = 4 : i64}> : () -> ()
    %y = func.call @score(%a) : (i32) -> f32
    %z = arith.addf %y, %y : f32
    "approx.yield"(%z) : (f32) -> ()
  }) : (i32) -> f32
  func.return %r : f32
}

// -----

// Value 1 is exact: only the transform goes away.
// CHECK-LABEL: func.func @exact
// CHECK-NOT:     llvm.
// CHECK-NOT:     approx.transform
// CHECK:         func.call @score
// CHECK-NOT:     llvm.mlir.global
func.func private @score(i32) -> f32
func.func @exact(%x: i32) -> f32 {
  %r = "approx.knob"(%x) <{id = 0 : i64, name = "mc", transform_types = ["memoize"], params = {target = "call", callee = @score}}> ({
  ^bb0(%a: i32):
    "approx.transform"() <{transform_type = "memoize", transform_value = 1 : i64}> : () -> ()
    %y = func.call @score(%a) : (i32) -> f32
    "approx.yield"(%y) : (f32) -> ()
  }) : (i32) -> f32
  func.return %r : f32
}

// -----

// A function definition with a dynamic value: the whole body is recomputed under the
// scf.if; a value below 1 counts as 1.
// CHECK-LABEL: func.func @square
// CHECK:         ^{{.*}}(%[[A:.*]]: i32, %[[W:.*]]: index):
// CHECK:           %[[N:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK:           %[[W64:.*]] = arith.index_cast %[[W]] : index to i64
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[V:.*]] = arith.maxui %[[W64]], %[[ONE]] : i64
// CHECK-NEXT:      %[[PHASE:.*]] = arith.remui %[[N]], %[[V]] : i64
// CHECK:           %[[R:.*]] = scf.if %{{.*}} -> (i32) {
// CHECK-NEXT:        %[[T:.*]] = arith.muli %[[A]], %[[A]] : i32
// CHECK-NEXT:        llvm.store %[[T]], %{{.*}} : i32, !llvm.ptr
// CHECK-NEXT:        scf.yield %[[T]] : i32
// CHECK-NEXT:      } else {
// CHECK-NEXT:        %[[OLD:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK-NEXT:        scf.yield %[[OLD]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      approx.yield %[[R]]
// CHECK:       llvm.mlir.global internal @__approx_memoize_mf_count(0 : i64)
// CHECK:       llvm.mlir.global internal @__approx_memoize_mf_last(0 : i32)
func.func @square(%x: i32, %v: index) -> i32 {
  %r = "approx.knob"(%x, %v) <{id = 1 : i64, name = "mf", transform_types = ["memoize"], params = {target = "function"}}> ({
  ^bb0(%a: i32, %w: index):
    "approx.transform"(%w) <{transform_type = "memoize"}> : (index) -> ()
    %t = arith.muli %a, %a : i32
    "approx.yield"(%t) : (i32) -> ()
  }) : (i32, index) -> i32
  func.return %r : i32
}
