/* A global histogram filled by an annotated loop over a generated signal; bin edges in a
   const double table; the totals kept in file-scope scalars. */
#include <stdio.h>

#define BINS 8
int histogram[BINS];
long samples_seen;
double total_energy = 0.0;
const double edges[BINS + 1] = {-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0001};

static int bin_of(double x) {
  int b = 0;
  while (b < BINS - 1 && x >= edges[b + 1])
    b++;
  return b;
}

void accumulate(int n) {
  unsigned int state = 12345u;
  // @approx loop_perforate knob(hist_samples) values(1:4)
  for (int i = 0; i < n; i++) {
    state = state * 1103515245u + 12345u;
    double x = ((state >> 8) & 0xFFFF) / 32768.0 - 1.0;
    histogram[bin_of(x)]++;
    samples_seen++;
    total_energy += x * x;
  }
}

int main(void) {
  accumulate(5000);
  for (int b = 0; b < BINS; b++)
    printf("[%+.2f, %+.2f) %d\n", edges[b], edges[b + 1], histogram[b]);
  printf("samples %ld energy %.6f\n", samples_seen, total_energy);
  return 0;
}
