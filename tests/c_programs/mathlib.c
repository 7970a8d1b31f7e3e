/* math.h calls over a flattened 2-D grid (1-D arrays, nested loops). */
#include <stdio.h>
#include <math.h>

#define W 8
#define H 6

double energy(const double *g, int w, int h) {
  double e = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      e += fabs(g[y * w + x]) + sqrt(fabs(g[y * w + x]));
  return e;
}

int main(void) {
  double grid[W * H];
  // @approx loop_perforate knob(rows)
  for (int y = 0; y < H; y++) {
    for (int x = 0; x < W; x++) {
      double fx = (double)x / W, fy = (double)y / H;
      grid[y * W + x] = sin(6.28318 * fx) * cos(3.14159 * fy) + exp(-fx) - pow(fy, 1.5);
    }
  }
  printf("energy = %.12f\n", energy(grid, W, H));
  printf("floor/ceil = %g %g %g\n", floor(-2.5), ceil(-2.5), fmod(7.5, 2.0));
  float hyp = sqrtf(3.0f * 3.0f + 4.0f * 4.0f);
  printf("hyp = %f log = %.10f atan2 = %.10f\n", hyp, log(10.0), atan2(1.0, -1.0));
  printf("M_PI-ish = %.15f\n", 4.0 * atan(1.0));
  return 0;
}
