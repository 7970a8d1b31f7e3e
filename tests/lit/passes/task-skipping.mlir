// RUN: %approxcc opt %s --pass-pipeline=approx-transform --split-input-file | FileCheck %s

// Static 1 skips the target: its ops are erased.
// CHECK-LABEL: func.func @skipped
// CHECK-NOT:     memref.store
// CHECK-NOT:     approx.transform
// CHECK:         func.return
func.func @skipped(%p: memref<?xi32>) {
  "approx.knob"(%p) <{id = 0 : i64, name = "sk", transform_types = ["task_skipping"], params = {target = "statement"}}> ({
  ^bb0(%q: memref<?xi32>):
    "approx.transform"() <{transform_type = "task_skipping", transform_value = 1 : i64}> : () -> ()
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : i32
    memref.store %c7, %q[%c0] : memref<?xi32>
    "approx.yield"() : () -> ()
  }) : (memref<?xi32>) -> ()
  func.return
}

// -----

// Static 0 runs the target as it is.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     approx.transform
// CHECK-NOT:     scf.if
// CHECK:         memref.store
func.func @kept(%p: memref<?xi32>) {
  "approx.knob"(%p) <{id = 0 : i64, name = "sk", transform_types = ["task_skipping"], params = {target = "statement"}}> ({
  ^bb0(%q: memref<?xi32>):
    "approx.transform"() <{transform_type = "task_skipping", transform_value = 0 : i64}> : () -> ()
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : i32
    memref.store %c7, %q[%c0] : memref<?xi32>
    "approx.yield"() : () -> ()
  }) : (memref<?xi32>) -> ()
  func.return
}

// -----

// A dynamic value guards the target: it runs when the value is 0.
// CHECK-LABEL: func.func @dynamic
// CHECK:         ^{{.*}}(%[[Q:.*]]: memref<?xi32>, %[[V:.*]]: index):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[GO:.*]] = arith.cmpi eq, %[[V]], %[[ZERO]] : index
// CHECK-NEXT:      scf.if %[[GO]] {
// CHECK:             memref.store %{{.*}}, %[[Q]]
// CHECK-NEXT:      }
// CHECK-NEXT:      approx.yield
func.func @dynamic(%p: memref<?xi32>, %v: index) {
  "approx.knob"(%p, %v) <{id = 2 : i64, name = "sk", transform_types = ["task_skipping"], params = {target = "statement"}}> ({
  ^bb0(%q: memref<?xi32>, %w: index):
    "approx.transform"(%w) <{transform_type = "task_skipping"}> : (index) -> ()
    %c0 = arith.constant 0 : index
    %c7 = arith.constant 7 : i32
    memref.store %c7, %q[%c0] : memref<?xi32>
    "approx.yield"() : () -> ()
  }) : (memref<?xi32>, index) -> ()
  func.return
}
