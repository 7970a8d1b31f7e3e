// RUN: %approxcc build %s -S --emit=approx -o - | FileCheck %s
// Two annotations stacked on one loop give two nested knobs, the first one outermost; both
// spellings stack.

int sum(const int *a, int n) {
  int s = 0;
  #pragma approx loop_perforate knob(outer_knob) values(1:2)
  // @approx loop_perforate knob(inner_knob) values(1, 4)
  for (int i = 0; i < n; i++)
    s += a[i];
  return s;
}

// CHECK-LABEL: func.func @sum(
// CHECK:         approx.knob "outer_knob" id 0
// CHECK-SAME:      values = [1 : i64, 2 : i64]
// CHECK-SAME:      loc "{{.*}}stacked-knobs.c:7:18"
// CHECK-NEXT:    ^bb{{[0-9]+}}(
// CHECK-NEXT:      approx.knob "inner_knob" id 1
// CHECK-SAME:        values = [1 : i64, 4 : i64]
// CHECK-SAME:        loc "{{.*}}stacked-knobs.c:8:14"
// CHECK-NEXT:      ^bb{{[0-9]+}}(
// CHECK:             scf.for
// CHECK:             approx.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      approx.yield
// CHECK-NEXT:    }
// CHECK:         func.return
