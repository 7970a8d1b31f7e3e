/* The annotated kernel: a FIR filter whose taps loop may be perforated. */
#include "common.h"
#include "filter.h"

void fir(const double *x, double *y, int n, int taps) {
  for (int i = 0; i < n; i++) {
    double acc = 0.0;
    #pragma approx loop_perforate knob(fir_taps) values(1:4)
    for (int k = 0; k < taps; k++) {
      if (i >= k)
        acc += x[i - k] / (k + 1);
    }
    y[i] = acc;
  }
}
