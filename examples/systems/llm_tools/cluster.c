/* The k-means tool of llm_tools, a library of its own (kmeans.c's knob `iterations` has the
 * name of pagerank.c's, and the knobs of one library must differ; pipeline.py names it
 * `kmeans_iterations`). Points and centres are 2-D.
 *
 *   lt_nearest(centres, k, point)               the centre nearest to a point (kmeans.c's
 *                                               dist2: knob distance)
 *   lt_kmeans(points, n, centres, k, point)     Lloyd's iterations from the given centres
 *                                               (kmeans.c: assign, iterations, distance),
 *                                               then the cluster of the point
 */
#include <stdlib.h>
#include "approxrt.h"

#define D 2

/* examples/kernels/kmeans/kmeans.c */
double dist2(const float *a, const float *b, int d);
void kmeans(const float *x, int n, int d, int k, float *c, float *old_c, int *member,
            double *sums, int *counts);

int lt_nearest(const float *centres, int k, const float *point) {
  int best = 0;
  double best_d = dist2(point, centres, D);
  for (int m = 1; m < k; m++) {
    double d = dist2(point, centres + m * D, D);
    if (d < best_d) {
      best_d = d;
      best = m;
    }
  }
  return best;
}

/* `centres` (k x 2) are moved in place to the final centroids. -1 on no memory. */
int lt_kmeans(const float *points, int n, float *centres, int k, const float *point) {
  float *old_c = malloc(sizeof(float) * D * k);
  double *sums = malloc(sizeof(double) * D * k);
  int *counts = malloc(sizeof(int) * k);
  int *member = malloc(sizeof(int) * n);
  int best = -1;
  if (old_c && sums && counts && member) {
    for (int i = 0; i < n; i++) member[i] = -1;
    kmeans(points, n, D, k, centres, old_c, member, sums, counts);
    best = lt_nearest(centres, k, point);
  }
  free(old_c);
  free(sums);
  free(counts);
  free(member);
  return best;
}
