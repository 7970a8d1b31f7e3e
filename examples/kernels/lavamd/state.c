/* User runtime library of lavamd.c: the state its dynamic knob decides on, input parsing,
 * and the sort of a box's particles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Distance from particle i to the nearest point of box `box` (a unit cube of a dim^3
 * grid), in hundredths of a box side: 0 inside it, at most 174 (sqrt(3)) for a corner
 * neighbour. Beyond 100 (the cutoff) none of the box's particles interacts with i. */
static double gap(double p, int lo) {
  if (p < lo) return lo - p;
  if (p > lo + 1) return p - (lo + 1);
  return 0.0;
}

int box_distance(const float *px, const float *py, const float *pz, int i, int box,
                 int dim) {
  double dx = gap(px[i], box % dim);
  double dy = gap(py[i], (box / dim) % dim);
  double dz = gap(pz[i], box / (dim * dim));
  return (int)(sqrt(dx * dx + dy * dy + dz * dz) * 100.0);
}

/* One input file: "SEED DIM MEAN_COUNT" (grid side in boxes, mean particles per box).
 * Returns 1 when all three were read and make sense. */
int read_lavamd_input(const char *path, unsigned *seed, int *dim, int *mean_count) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int ok = fscanf(f, "%u %d %d", seed, dim, mean_count) == 3 && *dim > 0 && *mean_count > 0;
  fclose(f);
  return ok;
}

/* Sort the n particles of one box along a Z-order curve over 8x8x8 sub-cells, as cell-list
 * codes do for locality; a strided sample of the sorted list then covers the box evenly. */
struct keyed {
  unsigned key;
  float x, y, z, q;
};

static unsigned spread3(unsigned v) {
  unsigned out = 0;
  for (int bit = 0; bit < 3; bit++) out |= ((v >> bit) & 1u) << (3 * bit);
  return out;
}

static int by_key(const void *a, const void *b) {
  unsigned ka = ((const struct keyed *)a)->key;
  unsigned kb = ((const struct keyed *)b)->key;
  return (ka > kb) - (ka < kb);
}

void sort_box(float *px, float *py, float *pz, float *q, int n) {
  struct keyed *items = malloc(n * sizeof *items);
  for (int i = 0; i < n; i++) {
    unsigned cx = (unsigned)((px[i] - floorf(px[i])) * 8.0f) & 7u;
    unsigned cy = (unsigned)((py[i] - floorf(py[i])) * 8.0f) & 7u;
    unsigned cz = (unsigned)((pz[i] - floorf(pz[i])) * 8.0f) & 7u;
    items[i] = (struct keyed){spread3(cx) | spread3(cy) << 1 | spread3(cz) << 2,
                              px[i], py[i], pz[i], q[i]};
  }
  qsort(items, n, sizeof *items, by_key);
  for (int i = 0; i < n; i++) {
    px[i] = items[i].x;
    py[i] = items[i].y;
    pz[i] = items[i].z;
    q[i] = items[i].q;
  }
  free(items);
}
