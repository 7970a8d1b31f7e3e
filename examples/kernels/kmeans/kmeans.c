/* k-means clustering (Lloyd's algorithm) of points drawn around hidden centres.
 *
 * Every iteration assigns each point to its nearest centroid, then moves each centroid to
 * the mean of its points, until no centroid moves more than TOLERANCE or MAX_ITERATIONS
 * pass. Output: the final centroids, one per line.
 *
 * Knobs:
 *   assign      (dynamic) reassign every v-th point per iteration (the others keep their
 *               cluster); the start rotates every iteration so all points get their turn.
 *               The decision tree picks v from how far the centroids moved in the last
 *               iteration (state.c): while they still move a lot, a sample of the points
 *               is enough to say where they go; near convergence it is not.
 *   distance    func_substitute of the squared distance: accumulated in float instead of
 *               double, or over the first half of the dimensions only (the leading
 *               dimensions carry most of the variance).
 *   iterations  loop perforation of the iteration loop: every v-th iteration runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "approxrt.h"

#define MAX_ITERATIONS 40
#define TOLERANCE 1e-4

/* User runtime library (state.c). */
int movement_level(double movement);
int read_kmeans_input(const char *path, unsigned *seed, int *n, int *d, int *k);
double centroid_movement(const float *old_c, const float *new_c, int k, int d);

double dist2_float(const float *a, const float *b, int d) {
  float s = 0.0f;
  for (int j = 0; j < d; j++) {
    float t = a[j] - b[j];
    s += t * t;
  }
  return (double)s;
}

double dist2_part(const float *a, const float *b, int d) {
  int used = d > 1 ? d / 2 : 1;
  float s = 0.0f;
  for (int j = 0; j < used; j++) {
    float t = a[j] - b[j];
    s += t * t;
  }
  return (double)s * d / used; /* on the full distance's scale */
}

// @approx func_substitute knob(distance) variants(dist2_float, dist2_part)
double dist2(const float *a, const float *b, int d) {
  double s = 0.0;
  for (int j = 0; j < d; j++) {
    double t = (double)a[j] - (double)b[j];
    s += t * t;
  }
  return s;
}

/* Lloyd iterations from the centroids in `c` (k x d, updated in place); `member` holds
 * each point's cluster (-1: not assigned yet). */
void kmeans(const float *x, int n, int d, int k, float *c, float *old_c, int *member,
            double *sums, int *counts) {
  double movement = 1e30;
  #pragma approx loop_perforate knob(iterations) values(1:4)
  for (int it = 0; it < MAX_ITERATIONS; it++) {
    /* Converged: the remaining iterations do nothing (a perforated loop cannot `break`). */
    if (movement >= TOLERANCE) {
      int offset = (int)(((long)it * 7919) % n);
      #pragma approx loop_perforate knob(assign) values(1:8) state(movement_level(movement)) \
              thresholds(2) range(0:100)
      for (int s = 0; s < n; s++) {
        int i = s + offset;
        if (i >= n) i -= n;
        int best = 0;
        double best_d = dist2(x + i * d, c, d);
        for (int m = 1; m < k; m++) {
          double dm = dist2(x + i * d, c + m * d, d);
          if (dm < best_d) {
            best_d = dm;
            best = m;
          }
        }
        member[i] = best;
      }
      for (int m = 0; m < k * d; m++) {
        sums[m] = 0.0;
        old_c[m] = c[m];
      }
      for (int m = 0; m < k; m++) counts[m] = 0;
      for (int i = 0; i < n; i++) {
        int m = member[i];
        if (m >= 0) {
          counts[m]++;
          for (int j = 0; j < d; j++) sums[m * d + j] += (double)x[i * d + j];
        }
      }
      for (int m = 0; m < k; m++) {
        if (counts[m] > 0) {
          for (int j = 0; j < d; j++) c[m * d + j] = (float)(sums[m * d + j] / counts[m]);
        }
      }
      movement = centroid_movement(old_c, c, k, d);
    }
  }
}

static unsigned next_random(unsigned *seed) {
  *seed = *seed * 1664525u + 1013904223u;
  return *seed >> 8;
}

static double uniform(unsigned *seed) { return (double)next_random(seed) / 16777216.0; }

#ifndef APPROX_NO_MAIN  /* a library holding several kernels leaves their mains out */
int main(int argc, char **argv) {
  if (argc < 2) {
    printf("usage: kmeans INPUT\n");
    exit(1);
  }
  unsigned seed = 1u;
  int n = 0;
  int d = 0;
  int k = 0;
  if (!read_kmeans_input(argv[1], &seed, &n, &d, &k)) {
    printf("kmeans: cannot read %s\n", argv[1]);
    exit(1);
  }
  float *x = (float *)malloc((long)n * d * sizeof(float));
  float *centres = (float *)malloc(k * d * sizeof(float));
  float *c = (float *)malloc(k * d * sizeof(float));
  float *old_c = (float *)malloc(k * d * sizeof(float));
  double *sums = (double *)malloc(k * d * sizeof(double));
  int *counts = (int *)malloc(k * sizeof(int));
  int *member = (int *)malloc(n * sizeof(int));
  /* Hidden centres in [-4, 4]^d, their spread shrinking along the dimensions as in
   * features sorted by variance (after a PCA); points around them with a noise that makes
   * neighbouring clusters overlap (a sum of uniforms as a cheap Gaussian). */
  for (int m = 0; m < k * d; m++)
    centres[m] = (float)((8.0 * uniform(&seed) - 4.0) * exp(-(m % d) / 4.0));
  for (int i = 0; i < n; i++) {
    int m = (int)(next_random(&seed) % (unsigned)k);
    for (int j = 0; j < d; j++) {
      double g = uniform(&seed) + uniform(&seed) + uniform(&seed) - 1.5;
      x[i * d + j] = (float)(centres[m * d + j] + 2.0 * g);
    }
    member[i] = -1;
  }
  /* Initial centroids: k points picked at random. */
  for (int m = 0; m < k; m++) {
    int i = (int)(next_random(&seed) % (unsigned)n);
    for (int j = 0; j < d; j++) c[m * d + j] = x[i * d + j];
  }
  approx_roi_begin();
  kmeans(x, n, d, k, c, old_c, member, sums, counts);
  approx_roi_end();
  for (int m = 0; m < k; m++) {
    for (int j = 0; j < d; j++) printf(j ? " %.5f" : "%.5f", c[m * d + j]);
    printf("\n");
  }
  return 0;
}
#endif
