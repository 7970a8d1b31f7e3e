// RUN: %approxcc opt %s --pass-pipeline=approx-emit-management,approx-tunable | FileCheck %s
// RUN: %approxcc opt %s --pass-pipeline=approx-emit-management,approx-tunable,approx-lower-decision-tree,approx-transform,approx-finalize | FileCheck %s --check-prefix=LOWERED

// Slots in walk order: "l" (static) 0; "d" (dynamic, 2 i thresholds) 1-2 thresholds, 3-5
// decisions; "f" (dynamic, 1 f threshold) 6, 7-8; nested "inner" (static) 9.
// CHECK-LABEL: func.func @kernel
// CHECK:         approx.knob "l"
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index):
// CHECK-NEXT:      %[[TAB:.*]] = llvm.mlir.addressof @__approx_table : !llvm.ptr
// CHECK-NEXT:      %[[P:.*]] = llvm.getelementptr %[[TAB]][0] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:      %[[X:.*]] = llvm.load %[[P]] {alignment = 8 : i64} : !llvm.ptr -> i64
// CHECK-NEXT:      %[[V:.*]] = arith.index_cast %[[X]] : i64 to index
// CHECK-NEXT:      approx.transform "loop_perforate" %[[V]]
// CHECK:         approx.knob "d"
// CHECK-NEXT:    ^{{.*}}(%[[S:.*]]: i32, %{{.*}}: index):
// CHECK-NEXT:      %[[TAB:.*]] = llvm.mlir.addressof @__approx_table : !llvm.ptr
// CHECK-NEXT:      %[[P:.*]] = llvm.getelementptr %[[TAB]][1] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:      %[[X:.*]] = llvm.load %[[P]] {alignment = 8 : i64} : !llvm.ptr -> i64
// CHECK-NEXT:      %[[T0:.*]] = arith.trunci %[[X]] : i64 to i32
// CHECK:           llvm.getelementptr %[[TAB]][2]
// CHECK:           %[[T1:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK:           llvm.getelementptr %[[TAB]][3]
// CHECK:           %[[D0:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           llvm.getelementptr %[[TAB]][4]
// CHECK:           %[[D1:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           llvm.getelementptr %[[TAB]][5]
// CHECK:           %[[D2:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT:      %[[V:.*]] = approx.decision_tree %[[S]] [%[[T0]], %[[T1]]] -> [%[[D0]], %[[D1]], %[[D2]]] "loop_perforate" : i32
// CHECK-NEXT:      approx.transform "loop_perforate" %[[V]]
// Float thresholds are f64 bits: bitcast, then converted to the state's type.
// CHECK:         approx.knob "f"
// CHECK:           llvm.getelementptr %{{.*}}[6]
// CHECK-NEXT:      %[[X:.*]] = llvm.load
// CHECK-NEXT:      %[[B:.*]] = llvm.bitcast %[[X]] : i64 to f64
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[B]] : f64 to f32
// CHECK:           approx.decision_tree %{{.*}} [%[[T]]] -> [%{{.*}}, %{{.*}}] "task_skipping" : f32
// Nested knobs load the table themselves (knobs are isolated from above).
// CHECK:           approx.knob "inner"
// CHECK-NEXT:        llvm.mlir.addressof @__approx_table
// CHECK-NEXT:        llvm.getelementptr %{{.*}}[9]

// The table holds the exact configuration (50.0 = 0x4049000000000000 = 4632233691727265792);
// the manifest describes the slots; the entry registers both in section approx_knobs.
// CHECK: llvm.mlir.global internal @__approx_table(dense<[1, 33, 67, 1, 1, 1, 4632233691727265792, 0, 0, 0]> : tensor<10xi64>) {addr_space = 0 : i32, alignment = 8 : i64} : !llvm.array<10 x i64>
// CHECK: llvm.mlir.global internal constant @__approx_manifest("l 0 static 1,2,4\0Ad 1 dynamic 2 i 1,2,4\0Af 6 dynamic 1 f 0,1\0Ainner 9 static 0,1\0A\00")
// CHECK-SAME: !llvm.array<79 x i8>
// CHECK: llvm.mlir.global external constant @__approx_entry_{{[0-9a-f]+}}() {addr_space = 0 : i32, section = "approx_knobs"} : !llvm.struct<(!llvm.ptr, !llvm.ptr)> {
// CHECK-NEXT:  %[[E:.*]] = llvm.mlir.undef : !llvm.struct<(!llvm.ptr, !llvm.ptr)>
// CHECK-NEXT:  %[[M:.*]] = llvm.mlir.addressof @__approx_manifest : !llvm.ptr
// CHECK-NEXT:  %[[E1:.*]] = llvm.insertvalue %[[M]], %[[E]][0]
// CHECK-NEXT:  %[[T:.*]] = llvm.mlir.addressof @__approx_table : !llvm.ptr
// CHECK-NEXT:  %[[E2:.*]] = llvm.insertvalue %[[T]], %[[E1]][1]
// CHECK-NEXT:  llvm.return %[[E2]]

// After lowering, the loaded values drive the code directly.
// LOWERED-LABEL: func.func @kernel
// LOWERED-NOT:     approx.
// LOWERED:         arith.cmpi sge
// LOWERED:         arith.muli
// LOWERED:         llvm.mlir.global internal @__approx_table
func.func @kernel(%n: index, %s: i32, %e: f32) {
  approx.knob "l" id 0 [loop_perforate] (%n) params {values = [1, 2, 4]} : (index) -> () {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    approx.yield
  }
  approx.knob "d" id 1 [loop_perforate] (%s, %n) params {values = [1, 2, 4], dynamic, thresholds = 2} : (i32, index) -> () {
  ^bb0(%state: i32, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    approx.yield
  }
  approx.knob "f" id 2 [task_skipping] (%e) params {values = [0, 1], dynamic} : (f32) -> () {
  ^bb0(%state: f32):
    approx.knob "inner" id 3 [task_skipping] () params {values = [0, 1]} : () -> () {
      approx.yield
    }
    approx.yield
  }
  func.return
}
