/* PageRank by power iteration on a synthetic power-law graph (pull form, CSR of in-edges).
 *
 * rank'(v) = (1 - DAMPING) / n + DAMPING * (dangling / n + sum over in-edges u->v of
 * rank(u) / outdeg(u)), ITERATIONS times.
 * Output: the TOP vertex ids, best first.
 *
 * Knobs:
 *   in_edges    (dynamic) read every v-th in-edge of a vertex and scale the sum up; the
 *               decision tree picks v per vertex from its in-degree (state.c): a long
 *               in-edge list is estimated from a sample, a short one is not.
 *   settled     (dynamic) task_skipping of a vertex's update, decided per vertex from how
 *               much its rank changed the last time it was updated, against the mean
 *               change (the residual) of the last iteration (state.c): vertices that
 *               stopped moving while the others still do keep their rank.
 *   iterations  loop perforation of the power iterations: every v-th one runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "approxrt.h"

#define DAMPING 0.85
#define ITERATIONS 30
#define TOP 100
#define SITE 1000
#define LOCAL 0.9

/* User runtime library (state.c). */
int degree_level(int degree);
int vertex_change(const double *delta, int v, int n, double residual);
int read_pagerank_input(const char *path, unsigned *seed, int *n, int *degree);
void top_ranked(const double *rank, int n, int *ids, int k);

void pagerank(int n, const int *in_start, const int *in_src, const int *outdeg, double *rank,
              double *next, double *contrib, double *delta) {
  double residual = 1.0;
  #pragma approx loop_perforate knob(iterations) values(1:10)
  for (int it = 0; it < ITERATIONS; it++) {
    double dangling = 0.0;
    for (int u = 0; u < n; u++) {
      if (outdeg[u] > 0) {
        contrib[u] = rank[u] / outdeg[u];
      } else {
        contrib[u] = 0.0;
        dangling += rank[u];
      }
    }
    double base = (1.0 - DAMPING) / n + DAMPING * dangling / n;
    for (int v = 0; v < n; v++) {
      next[v] = rank[v];
      #pragma approx task_skipping knob(settled) state(vertex_change(delta, v, n, residual)) \
              thresholds(1) range(0:40)
      {
        int first = in_start[v];
        int degree = in_start[v + 1] - first;
        /* The list is read from a start that moves every iteration, so a perforated loop
         * samples other edges each time and the errors average out over the iterations
         * instead of piling up in the fixed point. */
        int rotate = degree > 0 ? it % degree : 0;
        double sum = 0.0;
        int used = 0;
        #pragma approx loop_perforate knob(in_edges) values(1:3) \
                state(degree_level(degree)) thresholds(2) range(0:16)
        for (int k = 0; k < degree; k++) {
          int e = first + k + rotate;
          if (e >= first + degree) e -= degree;
          sum += contrib[in_src[e]];
          used++;
        }
        /* A perforated loop saw `used` of the in-edges: extrapolate to all of them
         * (exactly 1 when none was skipped). */
        if (used > 0) sum = sum * ((double)degree / (double)used);
        next[v] = base + DAMPING * sum;
        delta[v] = fabs(next[v] - rank[v]);
      }
    }
    residual = 0.0;
    for (int v = 0; v < n; v++) {
      residual += fabs(next[v] - rank[v]);
      rank[v] = next[v];
    }
  }
}

static unsigned next_random(unsigned *seed) {
  *seed = *seed * 1664525u + 1013904223u;
  return *seed >> 8;
}

static double uniform(unsigned *seed) { return (double)next_random(seed) / 16777216.0; }

static int gcd(int a, int b) {
  while (b != 0) {
    int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

#ifndef APPROX_NO_MAIN  /* a library holding several kernels leaves their mains out */
int main(int argc, char **argv) {
  if (argc < 2) {
    printf("usage: pagerank INPUT\n");
    exit(1);
  }
  unsigned seed = 1u;
  int n = 0;
  int degree = 0;
  if (!read_pagerank_input(argv[1], &seed, &n, &degree)) {
    printf("pagerank: cannot read %s\n", argv[1]);
    exit(1);
  }
  int m = n * degree;
  int *src = (int *)malloc(m * sizeof(int));
  int *dst = (int *)malloc(m * sizeof(int));
  int *in_start = (int *)calloc(n + 1, sizeof(int));
  int *in_src = (int *)malloc(m * sizeof(int));
  int *outdeg = (int *)calloc(n, sizeof(int));
  int *fill = (int *)calloc(n, sizeof(int));
  double *rank = (double *)malloc(n * sizeof(double));
  double *next = (double *)malloc(n * sizeof(double));
  double *contrib = (double *)malloc(n * sizeof(double));
  double *delta = (double *)malloc(n * sizeof(double));
  int *ids = (int *)malloc(TOP * sizeof(int));
  /* Web-like: vertices live in sites of SITE consecutive ids, and most links stay inside
   * their site. Degrees follow power laws: an endpoint drawn as x = N u^p is dense near 0
   * (in-degree ~ rank^(1/p - 1)), within the site for local links, over the whole graph
   * (scattered by a multiplicative permutation) for the others. Rank then has to flow
   * between sites over few links, so the ranking takes many iterations to settle. */
  int scatter = (int)(2654435761u % (unsigned)n);
  while (gcd(scatter, n) != 1) scatter++;
  int sites = n / SITE > 0 ? n / SITE : 1;
  for (int e = 0; e < m; e++) {
    double us = uniform(&seed);
    double ut = uniform(&seed);
    src[e] = (int)(((long)(n * us * us) * scatter + 12345) % n);
    int site = src[e] / SITE < sites ? src[e] / SITE : sites - 1;
    if (uniform(&seed) < LOCAL) {
      int t = site * SITE + (int)(SITE * ut * ut * ut);
      dst[e] = t < n ? t : n - 1;
    } else {
      dst[e] = (int)(((long)(n * ut * ut * ut) * scatter + 777) % n);
    }
    outdeg[src[e]]++;
    in_start[dst[e] + 1]++;
  }
  for (int v = 0; v < n; v++) in_start[v + 1] += in_start[v];
  for (int e = 0; e < m; e++) {
    int t = dst[e];
    in_src[in_start[t] + fill[t]] = src[e];
    fill[t]++;
  }
  for (int v = 0; v < n; v++) {
    rank[v] = 1.0 / n;
    delta[v] = 1.0;
  }
  approx_roi_begin();
  pagerank(n, in_start, in_src, outdeg, rank, next, contrib, delta);
  approx_roi_end();
  int k = n < TOP ? n : TOP;
  top_ranked(rank, n, ids, k);
  for (int i = 0; i < k; i++) printf("%d\n", ids[i]);
  return 0;
}
#endif
