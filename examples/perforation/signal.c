/* Windowed signal energy: for each window of a long synthetic signal, the mean energy of
 * its samples. The inner loop is annotated for loop perforation: sampling every v-th
 * element of a window changes each mean only a little, and skips (v-1)/v of the work. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "approxrt.h"

void window_energy(const float *x, double *energy, int windows, int width) {
  for (int w = 0; w < windows; w++) {
    double acc = 0.0;
    int count = 0;
    #pragma approx loop_perforate knob(window_samples) values(1:8)
    for (int j = 0; j < width; j++) {
      float v = x[w * width + j];
      acc += sqrt(v * v + 1.0) * (1.0 + 0.5 * sin(v));
      count++;
    }
    energy[w] = acc / count;
  }
}

int main(int argc, char **argv) {
  int windows = argc > 1 ? atoi(argv[1]) : 512;
  int width = argc > 2 ? atoi(argv[2]) : 16384;
  long n = (long)windows * width;
  float *x = (float *)malloc(n * sizeof(float));
  double *energy = (double *)malloc(windows * sizeof(double));
  unsigned seed = 12345u;
  for (long i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(seed >> 8) * (1.0f / 16777216.0f) - 0.5f + (float)(i / width % 7);
  }
  approx_roi_begin();
  window_energy(x, energy, windows, width);
  approx_roi_end();
  for (int w = 0; w < windows; w++)
    printf("%.6f\n", energy[w]);
  free(x);
  free(energy);
  return 0;
}
