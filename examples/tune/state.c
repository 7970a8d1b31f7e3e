/* User runtime library of smooth.c: the state its dynamic knob decides on, input parsing. */
#include <math.h>
#include <stdio.h>

/* Local roughness of the signal around sample i, scaled to 0..100: the largest jump
 * between neighbours within 4 samples. */
int roughness(const float *x, int i, int n) {
  double worst = 0.0;
  for (int k = i - 4; k < i + 4; k++) {
    if (k < 0 || k + 1 >= n) continue;
    double d = fabs((double)x[k + 1] - (double)x[k]);
    if (d > worst) worst = d;
  }
  int r = (int)(worst * 100.0);
  return r > 100 ? 100 : r;
}

/* One input file: "SEED LENGTH NOISE". Returns 1 when all three were read. */
int read_input(const char *path, unsigned *seed, int *n, double *noise) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fscanf(f, "%u %d %lf", seed, n, noise) == 3 && *n > 0;
  fclose(f);
  return ok;
}
