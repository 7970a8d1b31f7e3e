// RUN: %approxcc opt %s --pass-pipeline=approx-transform --split-input-file | FileCheck %s

// Static perforation by 3 multiplies the normalized loop's step.
// CHECK-LABEL: func.func @static
// CHECK-NOT:     approx.transform
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[V:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.muli %[[C1]], %[[V]] : index
// CHECK-NEXT:    scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[STEP]] {
func.func @static(%out: memref<?xf32>, %n: index) {
  "approx.knob"(%out, %n) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"], params = {values = [1, 3]}}> ({
  ^bb0(%o: memref<?xf32>, %t: index):
    "approx.transform"() <{transform_type = "loop_perforate", transform_value = 3 : i64}> : () -> ()
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %f = arith.constant 1.0 : f32
      memref.store %f, %o[%k] : memref<?xf32>
    }
    "approx.yield"() : () -> ()
  }) : (memref<?xf32>, index) -> ()
  func.return
}

// -----

// Value 1 is exact: only the transform op goes away.
// CHECK-LABEL: func.func @exact
// CHECK-NOT:     approx.transform
// CHECK-NOT:     arith.muli
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
func.func @exact(%n: index) {
  "approx.knob"(%n) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"], params = {}}> ({
  ^bb0(%t: index):
    "approx.transform"() <{transform_type = "loop_perforate", transform_value = 1 : i64}> : () -> ()
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (index) -> ()
  func.return
}

// -----

// A dynamic transform value (an index operand) multiplies the step the same way.
// CHECK-LABEL: func.func @dynamic
// CHECK:         ^{{.*}}(%[[T:.*]]: index, %[[V:.*]]: index):
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.muli %[[C1]], %[[V]] : index
// CHECK-NEXT:    scf.for %{{.*}} = %{{.*}} to %[[T]] step %[[STEP]] {
func.func @dynamic(%n: index, %v: index) {
  "approx.knob"(%n, %v) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"], params = {}}> ({
  ^bb0(%t: index, %d: index):
    "approx.transform"(%d) <{transform_type = "loop_perforate"}> : (index) -> ()
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (index, index) -> ()
  func.return
}

// -----

// An integer-typed loop gets the dynamic (index) value cast to its step type.
// CHECK-LABEL: func.func @dynamic_i32
// CHECK:         ^{{.*}}(%[[T:.*]]: i32, %[[V:.*]]: index):
// CHECK:         %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[VI:.*]] = arith.index_cast %[[V]] : index to i32
// CHECK-NEXT:    %[[STEP:.*]] = arith.muli %[[C1]], %[[VI]] : i32
// CHECK-NEXT:    scf.for %{{.*}} = %{{.*}} to %[[T]] step %[[STEP]] : i32 {
func.func @dynamic_i32(%n: i32, %v: index) {
  "approx.knob"(%n, %v) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"], params = {}}> ({
  ^bb0(%t: i32, %d: index):
    "approx.transform"(%d) <{transform_type = "loop_perforate"}> : (index) -> ()
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %k = %c0 to %t step %c1 : i32 {
    }
    "approx.yield"() : () -> ()
  }) : (i32, index) -> ()
  func.return
}
