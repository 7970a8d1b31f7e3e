// RUN: %approxcc build %s -S --emit=approx -o - | FileCheck %s
// The knob wraps exactly the annotated loop (not the store before nor the loop after), with
// its name, values and the annotation's location; the loop is a normalised scf.for.

void scale(float *out, const float *in, int n) {
  out[0] = 0.0f;
  #pragma approx loop_perforate knob(scale_loop) values(1:3)
  for (int i = n - 1; i >= 2; i -= 2)
    out[i] = 2.0f * in[i];
  for (int j = 0; j < n; j++)
    out[j] += 1.0f;
}

// CHECK-LABEL: func.func @scale(
// CHECK:         memref.store
// CHECK-NOT:     scf.for
// CHECK:         approx.knob "scale_loop" id 0 [loop_perforate]
// CHECK-SAME:      params {values = [1 : i64, 2 : i64, 3 : i64], target = "loop"}
// CHECK-SAME:      loc "{{.*}}knob-wraps-loop.c:7:18"
// CHECK-NEXT:    ^bb{{[0-9]+}}(
// CHECK:           arith.cmpi sle
// CHECK:           arith.divui
// CHECK:           arith.select
// CHECK:           %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:           %[[TRIP:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           %[[ONE:.*]] = arith.constant 1 : index
// CHECK:           scf.for %[[K:.*]] = %[[ZERO]] to %[[TRIP]] step %[[ONE]] {
// CHECK:             %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK:             %[[STEP:.*]] = arith.constant -2 : i64
// CHECK:             arith.muli %[[K64]], %[[STEP]] : i64
// CHECK:             arith.mulf
// CHECK:           }
// CHECK-NEXT:      approx.yield
// CHECK-NEXT:    }
// CHECK:         scf.for
// CHECK-NOT:     approx.knob
// CHECK:         func.return
