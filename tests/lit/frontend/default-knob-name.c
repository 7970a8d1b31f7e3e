// RUN: %approxcc build %s -S --emit=approx -o - | FileCheck %s
// Without knob(NAME) a knob is named FUNCTION_LINE after its target, and gets the default
// values 1:8. A knob inside another loop sits in that loop's body.

double smooth(double *v, int n) {
  double total = 0;
  for (int r = 0; r < 3; r++) {
    // @approx loop_perforate
    for (int i = 1; i < n; i++)
      total += v[i] - v[i - 1];
  }
  return total;
}

// CHECK-LABEL: func.func @smooth(
// CHECK:         scf.for
// CHECK:           approx.knob "smooth_9"
// CHECK-SAME:        values = [1 : i64, 2 : i64, 3 : i64, 4 : i64, 5 : i64, 6 : i64, 7 : i64, 8 : i64]
// CHECK-SAME:        loc "{{.*}}default-knob-name.c:8:16"
// CHECK:             scf.for
// CHECK:             approx.yield
// CHECK:         func.return
