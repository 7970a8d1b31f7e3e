// Matrix multiply through variable-length array parameters: the row length of A, B and C
// comes from the parameters at run time.
#include <stdio.h>

static void init(int n, int m, double M[n][m], int seed) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      M[i][j] = ((i * 7 + j * 3 + seed) % 11) - 5.0;
}

static void matmul(int n, int k, int m, double A[n][k], double B[k][m], double C[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      double s = 0.0;
      #pragma approx loop_perforate
      for (int p = 0; p < k; p++)
        s += A[i][p] * B[p][j];
      C[i][j] = s;
    }
}

int main(void) {
  double A[6][5], B[5][4], C[6][4];
  init(6, 5, A, 1);
  init(5, 4, B, 2);
  matmul(6, 5, 4, A, B, C);
  double trace = 0.0;
  for (int i = 0; i < 4; i++)
    trace += C[i][i];
  for (int i = 0; i < 6; i++)
    printf("%6.1f %6.1f %6.1f %6.1f\n", C[i][0], C[i][1], C[i][2], C[i][3]);
  printf("trace %.1f\n", trace);
  return 0;
}
