// RUN: %approxcc opt %s --pass-pipeline=approx-lower-try --split-input-file | FileCheck %s
// RUN: %approxcc opt %s --pass-pipeline=approx-lower-try,approx-emit-management,approx-transform --split-input-file | FileCheck %s --check-prefix=FLAG
// RUN: %approxcc opt %s --pass-pipeline=approx-lower-try --split-input-file 2>%t.err >/dev/null; FileCheck %s --check-prefix=WARN --input-file=%t.err

// recover(exact): the check moves after the knob (block arguments → knob operands: the check
// uses the function's arguments), and a clone of the exact target runs when it fails. A knob
// nested in the target is inlined in the clone (it stays exact) and kept in the knob. Only an
// approximate run is checked: the knob yields whether it approximated, `false` until
// approx-transform knows.
// CHECK-LABEL: func.func @exact
// CHECK-SAME:    (%[[OUT:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK:         %[[FALSE:.*]] = arith.constant false
// CHECK:         %[[APPROXIMATED:.*]] = {{.*}}approx.knob{{.*}}%[[FALSE]]
// CHECK:           scf.for
// CHECK:             approx.knob
// CHECK:               func.call @f(
// CHECK-NOT:     approx.try
// CHECK:         scf.if %[[APPROXIMATED]] {
// CHECK-NEXT:    %[[OK:.*]] = func.call @ok(%[[OUT]]) : (memref<?xf32>) -> i1
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[BAD:.*]] = arith.xori %[[OK]], %[[TRUE]] : i1
// CHECK-NEXT:    scf.if %[[BAD]] {
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:      scf.for %[[K:.*]] = %[[C0]] to %[[N]] step %[[C1]] {
// CHECK-NEXT:        %[[F:.*]] = func.call @f(%[[K]]) : (index) -> f32
// CHECK-NEXT:        memref.store %[[F]], %[[OUT]][%[[K]]] : memref<?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// The configured value 2 approximates: approx-transform yields `true` as the flag.
// FLAG-LABEL: func.func @exact
// FLAG:         %[[APPROXIMATED:.*]] = {{.*}}approx.knob
// FLAG:           ^{{.*}}(
// FLAG-NEXT:        %[[TRUE:.*]] = arith.constant true
// FLAG:           approx.yield{{.*}}%[[TRUE]]
// FLAG:         scf.if %[[APPROXIMATED]] {
func.func private @ok(memref<?xf32>) -> i1
func.func private @f(index) -> f32
func.func private @f_fast(index) -> f32
func.func @exact(%out: memref<?xf32>, %n: index) {
  "approx.knob"(%out, %n) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"], params = {target = "loop", values = [1, 2], value = 2}}> ({
  ^bb0(%o: memref<?xf32>, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %y = "approx.knob"(%k) <{id = 1 : i64, name = "s", transform_types = ["func_substitute"], params = {target = "call", callee = @f, variants = [@f_fast]}}> ({
      ^bb1(%i: index):
        %v = func.call @f(%i) : (index) -> f32
        "approx.yield"(%v) : (f32) -> ()
      }) : (index) -> f32
      memref.store %y, %o[%k] : memref<?xf32>
    }
    "approx.try"() <{recover = "exact"}> ({
      %good = func.call @ok(%o) : (memref<?xf32>) -> i1
      "approx.yield"(%good) : (i1) -> ()
    }, {
    }) : () -> ()
    "approx.yield"() : () -> ()
  }) : (memref<?xf32>, index) -> ()
  func.return
}

// -----

// recover(CALL): the recover region's ops run when the check fails.
// CHECK-LABEL: func.func @call
// CHECK-SAME:    (%[[OUT:.*]]: memref<?xf32>, %[[N:.*]]: index)
// CHECK:         %[[APPROXIMATED:.*]] = {{.*}}approx.knob
// CHECK-NOT:     approx.try
// CHECK:         scf.if %[[APPROXIMATED]] {
// CHECK-NEXT:    %[[OK:.*]] = func.call @ok(%[[OUT]]) : (memref<?xf32>) -> i1
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    %[[BAD:.*]] = arith.xori %[[OK]], %[[TRUE]] : i1
// CHECK-NEXT:    scf.if %[[BAD]] {
// CHECK-NEXT:      func.call @fallback(%[[OUT]], %[[N]]) : (memref<?xf32>, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// Exact (value 1, the default): the flag is `false`, the check never runs.
// FLAG-LABEL: func.func @call
// FLAG:           ^{{.*}}(
// FLAG-NEXT:        %[[FALSE:.*]] = arith.constant false
// FLAG:           approx.yield{{.*}}%[[FALSE]]
func.func private @ok(memref<?xf32>) -> i1
func.func private @fallback(memref<?xf32>, index)
func.func @call(%out: memref<?xf32>, %n: index) {
  "approx.knob"(%out, %n) <{id = 0 : i64, name = "m", transform_types = ["loop_perforate"], params = {target = "loop", values = [1, 2]}}> ({
  ^bb0(%o: memref<?xf32>, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
      %f = arith.constant 1.0 : f32
      memref.store %f, %o[%k] : memref<?xf32>
    }
    "approx.try"() <{recover = @fallback}> ({
      %good = func.call @ok(%o) : (memref<?xf32>) -> i1
      "approx.yield"(%good) : (i1) -> ()
    }, {
      func.call @fallback(%o, %t) : (memref<?xf32>, index) -> ()
      "approx.yield"() : () -> ()
    }) : () -> ()
    "approx.yield"() : () -> ()
  }) : (memref<?xf32>, index) -> ()
  func.return
}

// -----

// recover(exact) restores what the target wrote before the exact re-run: a scalar slot as an
// SSA value, a local array through a shadow slot at function entry, a local struct and a
// global (bounded `llvm` objects) with llvm.memcpy from a shadow slot / shadow global. A
// store through a pointer argument cannot be bounded: a warning at the knob names it.
// CHECK-LABEL: func.func @state
// CHECK-SAME:    (%[[OUT:.*]]: memref<?xi32>, %[[N:.*]]: index)
// CHECK:         %[[SHADOW_ACC:.*]] = llvm.alloca {{.*}} x !llvm.struct<(i32, f64)>
// CHECK:         %[[SHADOW_HIST:.*]] = memref.alloca() : memref<4xi32>
// CHECK:         %[[COUNT:.*]] = memref.alloca() : memref<i32>
// CHECK:         %[[HIST:.*]] = memref.alloca() : memref<4xi32>
// CHECK:         %[[ACC:.*]] = llvm.alloca
// CHECK:         %[[TOTAL:.*]] = llvm.mlir.addressof @total
// CHECK:         %[[SAVED:.*]] = memref.load %[[COUNT]][] : memref<i32>
// CHECK:         "memref.copy"(%[[HIST]], %[[SHADOW_HIST]])
// CHECK:         llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%[[SHADOW_ACC]], %[[ACC]],
// CHECK:         %[[SHADOW_TOTAL:.*]] = llvm.mlir.addressof @__approx_checkpoint_bump_3
// CHECK:         llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%[[SHADOW_TOTAL]], %[[TOTAL]],
// CHECK:         approx.knob "bump"
// CHECK:         scf.if
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %[[SAVED]], %[[COUNT]][] : memref<i32>
// CHECK-NEXT:        "memref.copy"(%[[SHADOW_HIST]], %[[HIST]])
// CHECK:             llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%[[ACC]], %[[SHADOW_ACC]],
// CHECK:             llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%[[TOTAL]], %[[SHADOW_TOTAL]],
// CHECK:             scf.for
// CHECK:         llvm.mlir.global internal @__approx_checkpoint_bump_3() {{.*}} : i32
// WARN: k.c:7:18: warning: knob 'bump': recover(exact) cannot restore memory written through argument 1 of 'state' (memref.store); the exact re-run starts from what the approximate run left there [-Wapprox-recover]
// WARN-NOT: warning
llvm.mlir.global external @total(0 : i32) {addr_space = 0 : i32} : i32
func.func private @reject() -> i1
func.func @state(%out: memref<?xi32>, %n: index) {
  %count = memref.alloca() : memref<i32>
  %hist = memref.alloca() : memref<4xi32>
  %one = llvm.mlir.constant(1 : i64) : i64
  %acc = llvm.alloca %one x !llvm.struct<(i32, f64)> {alignment = 8 : i64} : (i64) -> !llvm.ptr
  "approx.knob"(%count, %hist, %acc, %out, %n) <{id = 0 : i64, name = "bump", transform_types = ["loop_perforate"], params = {target = "loop", values = [1, 2]}}> ({
  ^bb0(%c: memref<i32>, %h: memref<4xi32>, %a: !llvm.ptr, %o: memref<?xi32>, %t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %v = arith.constant 1 : i32
    scf.for %k = %c0 to %t step %c1 {
      memref.store %v, %c[] : memref<i32>
      memref.store %v, %h[%c0] : memref<4xi32>
      llvm.store %v, %a : i32, !llvm.ptr
      %g = llvm.mlir.addressof @total : !llvm.ptr
      llvm.store %v, %g : i32, !llvm.ptr
      memref.store %v, %o[%k] : memref<?xi32>
    }
    "approx.try"() <{recover = "exact"}> ({
      %ok = func.call @reject() : () -> i1
      "approx.yield"(%ok) : (i1) -> ()
    }, {
    }) : () -> ()
    "approx.yield"() : () -> ()
  }) {loc = "k.c:7:18"} : (memref<i32>, memref<4xi32>, !llvm.ptr, memref<?xi32>, index) -> ()
  func.return
}
