/* User runtime library of pagerank.c: the states its dynamic knobs decide on, input
 * parsing, and the top-k selection of the output. The states run once per vertex and
 * iteration, so they are a few instructions each (ilogb, not log10). */
#include <math.h>
#include <stdio.h>

/* A vertex's in-degree on a log scale, 0..16: floor(log2(degree)), 0 for 0 or 1. */
int degree_level(int degree) {
  if (degree < 2) return 0;
  int level = ilogb((double)degree);
  return level > 16 ? 16 : level;
}

/* How much vertex v's rank changed the last time it was updated, against the mean change
 * per vertex in the last iteration (residual / n), on a log scale, 0..40: 20 + the binary
 * exponent of the ratio, clamped. A vertex that stopped moving while the others still move
 * scores low; as the iteration converges the same change scores higher again. */
int vertex_change(const double *delta, int v, int n, double residual) {
  if (!(residual > 0.0)) return 0; /* nothing moves any more */
  double ratio = delta[v] * n / residual;
  if (!(ratio > 0x1p-20)) return 0;
  if (ratio >= 0x1p20) return 40;
  return ilogb(ratio) + 20;
}

/* One input file: "SEED N DEGREE" (vertices, mean out-degree). Returns 1 when all three
 * were read and make sense. */
int read_pagerank_input(const char *path, unsigned *seed, int *n, int *degree) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fscanf(f, "%u %d %d", seed, n, degree) == 3 && *n > 0 && *degree > 0;
  fclose(f);
  return ok;
}

/* The k best-ranked vertices, best first (ties: smaller id first), by insertion into a
 * sorted list of k: linear in n while few vertices beat the k-th. */
void top_ranked(const double *rank, int n, int *ids, int k) {
  int held = 0;
  for (int v = 0; v < n; v++) {
    if (held == k && rank[v] <= rank[ids[k - 1]]) continue;
    int at = held < k ? held++ : k - 1;
    while (at > 0 && rank[ids[at - 1]] < rank[v]) {
      ids[at] = ids[at - 1];
      at--;
    }
    ids[at] = v;
  }
}
