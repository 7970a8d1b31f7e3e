/* Pointers to arrays declared without an initialiser, then allocated (PolyBench's array
 * declarations): the bounds in the declarator are not an initialiser. */
#include <stdio.h>
#include <stdlib.h>

#define N 4
#define M 3

static void fill(int n, int m, double (*a)[N + 0][M + 0]) {
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      (*a)[i][j] = i * 10 + j;
}

int main(void) {
  double (*a)[N + 0][M + 0];
  a = malloc(sizeof *a);
  int rows[2 * N];
  fill(N, M, a);
  for (int i = 0; i < 2 * N; i++) rows[i] = i;
  double total = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) total += (*a)[i][j] * rows[i];
  printf("%.1f %.1f\n", (*a)[N - 1][M - 1], total);
  free(a);
  return 0;
}
