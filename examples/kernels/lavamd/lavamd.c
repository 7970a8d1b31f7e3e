/* lavaMD: pairwise particle interactions inside a 3-D grid of boxes.
 *
 * Space is cut into DIM^3 unit boxes; every box holds a variable number of charged
 * particles (dense clusters and sparse voids), sorted along a Z-order curve inside the box
 * as cell-list codes do. A particle feels every particle within the cutoff radius (one box
 * side), so it only looks at the 27 boxes around its own. The interaction is a screened
 * (Gaussian) potential: q_j (exp(-ALPHA r^2) - SHIFT), its force 2 ALPHA q_j exp(-ALPHA r^2)
 * (r_i - r_j). Output: potential and force of every STRIDE-th particle.
 *
 * Knobs:
 *   partners    (dynamic) sample every v-th particle of a neighbour box and scale the sums
 *               up; the decision tree picks v per (particle, neighbour box) from the
 *               distance between them (state.c): beyond the cutoff nothing interacts and
 *               any v is free, a near box needs every partner (forces are sums of terms of
 *               both signs, which a sample estimates badly).
 *   pair_weight func_substitute of exp(): a rational (Pade) approximation, or the limit
 *               (1 - ALPHA r^2 / 16)^16 computed with four squarings.
 *   corners     task_skipping of the 8 corner neighbours: the cutoff sphere only grazes
 *               them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "approxrt.h"

#define ALPHA 2.0
#define CUTOFF2 1.0
#define NEIGHBOURS 27
#define STRIDE 7
/* exp(-ALPHA * CUTOFF2): the potential is shifted to vanish at the cutoff. */
#define SHIFT 0.1353352832366127

/* User runtime library (state.c). */
int box_distance(const float *px, const float *py, const float *pz, int i, int box,
                 int dim);
int read_lavamd_input(const char *path, unsigned *seed, int *dim, int *mean_count);
void sort_box(float *px, float *py, float *pz, float *q, int n);

double pair_weight_pade(double r2) {
  /* [2/2] Pade approximant of exp(x) at 0, x = -ALPHA r2 in [-2, 0]. */
  double x = -ALPHA * r2;
  return (12.0 + 6.0 * x + x * x) / (12.0 - 6.0 * x + x * x);
}

double pair_weight_pow(double r2) {
  double y = 1.0 - ALPHA * r2 / 16.0;
  y = y * y;
  y = y * y;
  y = y * y;
  return y * y;
}

// @approx func_substitute knob(pair_weight) variants(pair_weight_pade, pair_weight_pow)
double pair_weight(double r2) { return exp(-ALPHA * r2); }

/* Potential and force on every particle of box `home` from the particles of box `nb`. */
void interact(int home, int nb, int dim, const int *start, const int *count, const float *px,
              const float *py, const float *pz, const float *q, double *fv, double *fx,
              double *fy, double *fz) {
  int first = start[nb];
  int last = first + count[nb];
  for (int i = start[home]; i < start[home] + count[home]; i++) {
    double v = 0.0;
    double ax = 0.0;
    double ay = 0.0;
    double az = 0.0;
    int used = 0;
    #pragma approx loop_perforate knob(partners) values(1:8) \
            state(box_distance(px, py, pz, i, nb, dim)) thresholds(2) range(0:174)
    for (int j = first; j < last; j++) {
      double dx = (double)px[i] - (double)px[j];
      double dy = (double)py[i] - (double)py[j];
      double dz = (double)pz[i] - (double)pz[j];
      double r2 = dx * dx + dy * dy + dz * dz;
      used++;
      if (r2 < CUTOFF2 && r2 > 0.0) {
        double w = (double)q[j] * pair_weight(r2);
        v += w - (double)q[j] * SHIFT;
        ax += 2.0 * ALPHA * w * dx;
        ay += 2.0 * ALPHA * w * dy;
        az += 2.0 * ALPHA * w * dz;
      }
    }
    if (used > 0) {
      /* A perforated loop saw `used` of the box's particles: extrapolate to all of them
       * (exactly 1 when none was skipped). */
      double scale = (double)count[nb] / (double)used;
      fv[i] += v * scale;
      fx[i] += ax * scale;
      fy[i] += ay * scale;
      fz[i] += az * scale;
    }
  }
}

/* Every home box against its neighbours; neighbour slot k of box b is nei[b * 27 + k]
 * (-1 outside the grid), slots 19..26 being the corners. */
void lavamd(int nbox, int dim, const int *nei, const int *start, const int *count, const float *px,
            const float *py, const float *pz, const float *q, double *fv, double *fx,
            double *fy, double *fz) {
  for (int b = 0; b < nbox; b++) {
    for (int k = 0; k < 19; k++) {
      int nb = nei[b * NEIGHBOURS + k];
      if (nb >= 0)
        interact(b, nb, dim, start, count, px, py, pz, q, fv, fx, fy, fz);
    }
    #pragma approx task_skipping knob(corners)
    {
      for (int k = 19; k < NEIGHBOURS; k++) {
        int nb = nei[b * NEIGHBOURS + k];
        if (nb >= 0)
          interact(b, nb, dim, start, count, px, py, pz, q, fv, fx, fy, fz);
      }
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
    printf("usage: lavamd INPUT\n");
    exit(1);
  }
  unsigned seed = 1u;
  int dim = 0;
  int mean_count = 0;
  if (!read_lavamd_input(argv[1], &seed, &dim, &mean_count)) {
    printf("lavamd: cannot read %s\n", argv[1]);
    exit(1);
  }
  int nbox = dim * dim * dim;
  int *start = (int *)malloc(nbox * sizeof(int));
  int *count = (int *)malloc(nbox * sizeof(int));
  int *nei = (int *)malloc(nbox * NEIGHBOURS * sizeof(int));
  /* Density: a few Gaussian clusters over a thin background, so boxes hold from a handful
   * to several times the mean number of particles. */
  double cx[4];
  double cy[4];
  double cz[4];
  for (int c = 0; c < 4; c++) {
    cx[c] = uniform(&seed) * dim;
    cy[c] = uniform(&seed) * dim;
    cz[c] = uniform(&seed) * dim;
  }
  int total = 0;
  for (int b = 0; b < nbox; b++) {
    double x = b % dim + 0.5;
    double y = (b / dim) % dim + 0.5;
    double z = b / (dim * dim) + 0.5;
    double density = 0.25;
    for (int c = 0; c < 4; c++) {
      double d2 = (x - cx[c]) * (x - cx[c]) + (y - cy[c]) * (y - cy[c]) +
                  (z - cz[c]) * (z - cz[c]);
      density += 2.5 * exp(-d2 / (0.08 * dim * dim));
    }
    start[b] = total;
    count[b] = 1 + (int)(mean_count * density * (0.75 + 0.5 * uniform(&seed)));
    total += count[b];
  }
  float *px = (float *)malloc(total * sizeof(float));
  float *py = (float *)malloc(total * sizeof(float));
  float *pz = (float *)malloc(total * sizeof(float));
  float *q = (float *)malloc(total * sizeof(float));
  double *fv = (double *)calloc(total, sizeof(double));
  double *fx = (double *)calloc(total, sizeof(double));
  double *fy = (double *)calloc(total, sizeof(double));
  double *fz = (double *)calloc(total, sizeof(double));
  for (int b = 0; b < nbox; b++) {
    int bx = b % dim;
    int by = (b / dim) % dim;
    int bz = b / (dim * dim);
    for (int i = start[b]; i < start[b] + count[b]; i++) {
      px[i] = (float)(bx + uniform(&seed));
      py[i] = (float)(by + uniform(&seed));
      pz[i] = (float)(bz + uniform(&seed));
      q[i] = (float)(0.5 + uniform(&seed));
    }
    sort_box(px + start[b], py + start[b], pz + start[b], q + start[b], count[b]);
    /* Neighbour slots by distance: self, 6 faces, 12 edges, 8 corners. */
    int slot = 0;
    for (int shell = 0; shell <= 3; shell++) {
      for (int dz = -1; dz <= 1; dz++) {
        for (int dy = -1; dy <= 1; dy++) {
          for (int dx = -1; dx <= 1; dx++) {
            if (dx * dx + dy * dy + dz * dz != shell) continue;
            int nx = bx + dx;
            int ny = by + dy;
            int nz = bz + dz;
            int inside = nx >= 0 && nx < dim && ny >= 0 && ny < dim && nz >= 0 && nz < dim;
            nei[b * NEIGHBOURS + slot] = inside ? nx + dim * (ny + dim * nz) : -1;
            slot++;
          }
        }
      }
    }
  }
  approx_roi_begin();
  lavamd(nbox, dim, nei, start, count, px, py, pz, q, fv, fx, fy, fz);
  approx_roi_end();
  for (int i = 0; i < total; i += STRIDE)
    printf("%.6e %.6e %.6e %.6e\n", fv[i], fx[i], fy[i], fz[i]);
  return 0;
}
#endif
