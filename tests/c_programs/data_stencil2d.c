// A 5-point stencil on a local two-dimensional array, with the halo kept at zero.
#include <stdio.h>

#define N 12

int main(void) {
  double grid[N][N] = {{0}};
  double next[N][N] = {{0}};
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      grid[i][j] = (i * j) % 5;
  for (int step = 0; step < 4; step++) {
    for (int i = 1; i < N - 1; i++) {
      // @approx loop_perforate
      for (int j = 1; j < N - 1; j++)
        next[i][j] = 0.2 * (grid[i][j] + grid[i - 1][j] + grid[i + 1][j] + grid[i][j - 1] +
                            grid[i][j + 1]);
    }
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        grid[i][j] = next[i][j];
  }
  double total = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      total += grid[i][j];
  printf("center %.6f corner %.6f total %.6f\n", grid[N / 2][N / 2], grid[1][1], total);
  return 0;
}
