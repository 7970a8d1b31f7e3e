/* A knob in another translation unit: the energy may be estimated from a subsample. */
#include "common.h"
#include "score.h"

double energy(const double *y, int n) {
  double e = 0.0;
  // @approx loop_perforate knob(energy_stride) values(1, 2, 4)
  for (int i = 0; i < n; i++)
    e += y[i] * y[i];
  return e / n;
}
