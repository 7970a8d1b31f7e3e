// The release pipeline end to end; the result is core MLIR that upstream mlir-opt accepts.
// RUN: printf '{"knobs": {"score_loop": {"value": 2}}}' > %t.json
// RUN: %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.json},approx-emit-management,approx-transform,approx-finalize' > %t.out.mlir
// RUN: FileCheck %s < %t.out.mlir
// RUN: mlir-opt %t.out.mlir --convert-scf-to-cf | FileCheck %s --check-prefix=UPSTREAM
// RUN: %approxcc opt %s --print-ir-after-all --pass-pipeline='approx-emit-management,approx-transform,approx-finalize' 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP

// CHECK-LABEL: func.func @kernel
// CHECK-NOT:     approx.
// CHECK:         %[[V:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.muli %{{.*}}, %[[V]] : index
// CHECK-NEXT:    scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[STEP]] {

// UPSTREAM-LABEL: func.func @kernel
// UPSTREAM:         cf.cond_br

// DUMP: // -----// IR Dump After approx-emit-management //----- //
// DUMP:   approx.transform "loop_perforate" 1
// DUMP: // -----// IR Dump After approx-transform //----- //
// DUMP: // -----// IR Dump After approx-finalize //----- //
// DUMP-NOT: approx.
func.func @kernel(%arg0: !llvm.ptr, %arg1: i32) {
  %n = arith.index_cast %arg1 : i32 to index
  %out = memref.alloc(%n) : memref<?xf32>
  "approx.knob"(%out, %n) <{id = 0 : i64, name = "score_loop", transform_types = ["loop_perforate"], params = {values = [1, 2, 3, 4]}, loc = "k.c:5:11"}> ({
  ^bb0(%o: memref<?xf32>, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %f = arith.constant 1.0 : f32
      memref.store %f, %o[%k] : memref<?xf32>
    }
    "approx.yield"() : () -> ()
  }) : (memref<?xf32>, index) -> ()
  memref.dealloc %out : memref<?xf32>
  func.return
}
