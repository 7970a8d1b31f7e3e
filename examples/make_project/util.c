/* Plain C, no annotation. */
#include "common.h"

double checksum(const double *x, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * (i % 7 + 1);
  return s;
}
