/* The tools of llm_tools that take a question's inputs, in the system's shared library
 * (ctypes). Each calls a kernel of examples/kernels, linked in with its knobs:
 *
 *   lt_pagerank(n, m, src, dst)          the most central of n articles linked by m edges
 *                                        (pagerank.c: in_edges, settled, iterations)
 *   lt_box(seed, dim, per_box, px..q)    the particle box of a seed (positions, charges)
 *   lt_energy(seed, dim, per_box)        its potential energy (lavamd.c: partners,
 *                                        pair_weight, corners)
 *
 * The k-means tool is a second library (kmeans.c's knob `iterations` has the name of
 * pagerank.c's; see pipeline.py). Retrieval is ../rag_bm25/rag.c and ../rag_kb/retrieve.c.
 */
#include <math.h>
#include <stdlib.h>
#include "approxrt.h"

#define NEIGHBOURS 27

/* examples/kernels/pagerank: pagerank.c's power iteration, state.c's top-k. */
void pagerank(int n, const int *in_start, const int *in_src, const int *outdeg, double *rank,
              double *next, double *contrib, double *delta);
void top_ranked(const double *rank, int n, int *ids, int k);
/* examples/kernels/lavamd: lavamd.c's interactions, state.c's in-box sort. */
void lavamd(int nbox, int dim, const int *nei, const int *start, const int *count,
            const float *px, const float *py, const float *pz, const float *q, double *fv,
            double *fx, double *fy, double *fz);
void sort_box(float *px, float *py, float *pz, float *q, int n);

/* The vertex of highest PageRank in the graph of edges src[e] -> dst[e]; -1 on no memory. */
int lt_pagerank(int n, int m, const int *src, const int *dst) {
  int *in_start = calloc(n + 1, sizeof(int));
  int *in_src = malloc(sizeof(int) * (m > 0 ? m : 1));
  int *outdeg = calloc(n, sizeof(int));
  int *fill = calloc(n, sizeof(int));
  double *work = malloc(sizeof(double) * 4 * n);
  int best = -1;
  if (in_start && in_src && outdeg && fill && work) {
    for (int e = 0; e < m; e++) {
      outdeg[src[e]]++;
      in_start[dst[e] + 1]++;
    }
    for (int v = 0; v < n; v++) in_start[v + 1] += in_start[v];
    for (int e = 0; e < m; e++) in_src[in_start[dst[e]] + fill[dst[e]]++] = src[e];
    double *rank = work, *delta = work + 3 * n;
    for (int v = 0; v < n; v++) {
      rank[v] = 1.0 / n;
      delta[v] = 1.0;
    }
    pagerank(n, in_start, in_src, outdeg, rank, work + n, work + 2 * n, delta);
    top_ranked(rank, n, &best, 1);
  }
  free(in_start);
  free(in_src);
  free(outdeg);
  free(fill);
  free(work);
  return best;
}

static unsigned draw(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

static float unit(unsigned *state) { return (float)draw(state) / 16777216.0f; }

/* The particles of the box of `seed`: dim^3 unit boxes of per_box particles each, uniform
 * in their box (in lavamd's Z-order), charges in [0.5, 1.5). Returns how many. */
int lt_box(unsigned seed, int dim, int per_box, float *px, float *py, float *pz, float *q) {
  unsigned state = seed * 2654435761u + 1u;
  int nbox = dim * dim * dim;
  for (int b = 0; b < nbox; b++) {
    int first = b * per_box;
    for (int i = first; i < first + per_box; i++) {
      px[i] = (float)(b % dim) + unit(&state);
      py[i] = (float)((b / dim) % dim) + unit(&state);
      pz[i] = (float)(b / (dim * dim)) + unit(&state);
      q[i] = 0.5f + unit(&state);
    }
    sort_box(px + first, py + first, pz + first, q + first, per_box);
  }
  return nbox * per_box;
}

/* Box b's neighbour slots in lavamd's order (self, 6 faces, 12 edges, 8 corners: the corner
 * knob skips the last 8), -1 outside the grid. */
static void neighbours(int b, int dim, int *slots) {
  int x = b % dim, y = (b / dim) % dim, z = b / (dim * dim);
  int k = 0;
  for (int shell = 0; shell <= 3; shell++)
    for (int d = 0; d < NEIGHBOURS; d++) {
      int dx = d % 3 - 1, dy = (d / 3) % 3 - 1, dz = d / 9 - 1;
      if (dx * dx + dy * dy + dz * dz != shell) continue;
      int nx = x + dx, ny = y + dy, nz = z + dz;
      int inside = nx >= 0 && nx < dim && ny >= 0 && ny < dim && nz >= 0 && nz < dim;
      slots[k++] = inside ? nx + dim * (ny + dim * nz) : -1;
    }
}

/* Potential energy of the box of `seed`: half the sum over particles of charge times the
 * potential the others put on it (lavamd's screened potential). NaN on no memory. */
double lt_energy(unsigned seed, int dim, int per_box) {
  int nbox = dim * dim * dim, n = nbox * per_box;
  float *pos = malloc(sizeof(float) * 4 * n);
  double *field = calloc(4 * (size_t)n, sizeof(double));
  int *index = malloc(sizeof(int) * (NEIGHBOURS + 2) * nbox);
  double energy = NAN;
  if (pos && field && index) {
    float *px = pos, *py = pos + n, *pz = pos + 2 * n, *q = pos + 3 * n;
    int *start = index + NEIGHBOURS * nbox, *count = start + nbox;
    lt_box(seed, dim, per_box, px, py, pz, q);
    for (int b = 0; b < nbox; b++) {
      neighbours(b, dim, index + NEIGHBOURS * b);
      start[b] = b * per_box;
      count[b] = per_box;
    }
    lavamd(nbox, dim, index, start, count, px, py, pz, q, field, field + n, field + 2 * n,
           field + 3 * n);
    energy = 0.0;
    for (int i = 0; i < n; i++) energy += 0.5 * (double)q[i] * field[i];
  }
  free(pos);
  free(field);
  free(index);
  return energy;
}
