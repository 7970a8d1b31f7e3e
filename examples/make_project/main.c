#include <stdio.h>
#include "common.h"
#include "filter.h"
#include "score.h"

static double x[N_SAMPLES], y[N_SAMPLES];

int main(void) {
  unsigned seed = 1u;
  for (int i = 0; i < N_SAMPLES; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (double)((seed >> 16) % 1000u) / 1000.0;
  }
  fir(x, y, N_SAMPLES, N_TAPS);
  printf("energy %.6f checksum %.6f\n", energy(y, N_SAMPLES), checksum(y, N_SAMPLES));
  return 0;
}
