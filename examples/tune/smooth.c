/* Edge-preserving smoothing of a noisy 1-D signal (a bilateral filter), repeated a few
 * passes. The input file holds the generator's parameters (seed, length, noise level), so
 * every input is a different signal while the files stay one line long.
 *
 * Knobs:
 *   taps    (dynamic) sample every v-th tap of the filter window; the decision tree picks
 *           v per sample from the local roughness of the signal (state.c): flat regions
 *           tolerate coarse sampling, edges do not.
 *   range_w func_substitute of the range weight: exp() or a rational approximation.
 *   passes  loop perforation of the smoothing passes. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "approxrt.h"

/* User runtime library (state.c): the dynamic knob's state, and input parsing. */
int roughness(const float *x, int i, int n);
int read_input(const char *path, unsigned *seed, int *n, double *noise);

double range_weight_fast(double d) {
  double t = d * d * 8.0;
  return 1.0 / (1.0 + t + 0.5 * t * t);
}

// @approx func_substitute knob(range_w) variants(range_weight_fast)
double range_weight(double d) { return exp(-d * d * 8.0); }

void smooth(const float *x, float *y, int n, int radius) {
  for (int i = 0; i < n; i++) {
    double acc = 0.0;
    double norm = 0.0;
    #pragma approx loop_perforate knob(taps) values(1:6) state(roughness(x, i, n)) \
            thresholds(2) range(0:100)
    for (int k = -radius; k <= radius; k++) {
      int j = i + k;
      if (j < 0) j = 0;
      if (j >= n) j = n - 1;
      double dk = (double)k / radius;
      double w = exp(-dk * dk * 2.0) * range_weight(x[j] - x[i]);
      acc += w * x[j];
      norm += w;
    }
    y[i] = (float)(acc / norm);
  }
}

int main(int argc, char **argv) {
  if (argc < 2) {
    printf("usage: smooth INPUT\n");
    exit(1);
  }
  unsigned seed = 1u;
  int n = 0;
  double noise = 0.0;
  if (!read_input(argv[1], &seed, &n, &noise)) {
    printf("smooth: cannot read %s\n", argv[1]);
    exit(1);
  }
  float *x = (float *)malloc(n * sizeof(float));
  float *y = (float *)malloc(n * sizeof(float));
  double level = 0.0;
  for (int i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    if ((seed >> 24) < 3) level = (double)((seed >> 8) % 1000) / 250.0;  /* a step edge */
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(level + noise * ((double)(seed >> 8) / 16777216.0 - 0.5));
  }
  approx_roi_begin();
  #pragma approx loop_perforate knob(passes) values(1:3)
  for (int p = 0; p < 3; p++) {
    smooth(x, y, n, 24);
    for (int i = 0; i < n; i++) x[i] = y[i];
  }
  approx_roi_end();
  for (int i = 0; i < n; i += 16)
    printf("%.5f\n", x[i]);
  free(x);
  free(y);
  return 0;
}
