/* User runtime library of kmeans.c: the state its dynamic knob decides on, input parsing. */
#include <math.h>
#include <stdio.h>

/* Mean distance the k centroids (d coordinates each) moved in one iteration. */
double centroid_movement(const float *old_c, const float *new_c, int k, int d) {
  double total = 0.0;
  for (int m = 0; m < k; m++) {
    double s = 0.0;
    for (int j = 0; j < d; j++) {
      double t = (double)new_c[m * d + j] - (double)old_c[m * d + j];
      s += t * t;
    }
    total += sqrt(s);
  }
  return total / k;
}

/* The last iteration's movement on a log scale, 0..100: 0 for 1e-4 (converged) and below,
 * 100 for 1 (a tenth of the data's extent) and above. */
int movement_level(double movement) {
  if (movement <= 1e-4) return 0;
  int level = (int)(25.0 * (log10(movement) + 4.0));
  return level > 100 ? 100 : level;
}

/* One input file: "SEED N D K" (points, dimensions, clusters). Returns 1 when all four
 * were read and make sense. */
int read_kmeans_input(const char *path, unsigned *seed, int *n, int *d, int *k) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fscanf(f, "%u %d %d %d", seed, n, d, k) == 4 && *n > 0 && *d > 0 && *k > 0 &&
           *k <= *n;
  fclose(f);
  return ok;
}
