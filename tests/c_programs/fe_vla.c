// Local variable-length arrays, one- and two-dimensional, sized at run time, in a loop.
#include <stdio.h>

static double row_means(int rows, int cols) {
  double m[rows][cols];
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) m[i][j] = i * 0.5 + j;
  double s = 0;
  for (int i = 0; i < rows; i++) {
    double r = 0;
    for (int j = 0; j < cols; j++) r += m[i][j];
    s += r / cols;
  }
  return s + (double)sizeof m;
}

int main(void) {
  long total = 0;
  #pragma approx loop_perforate values(1:2)
  for (int n = 1; n <= 20; n++) {
    int a[n];
    for (int i = 0; i < n; i++) a[i] = i * n;
    for (int i = 0; i < n; i++) total += a[i];
  }
  printf("%ld %.2f %.2f\n", total, row_means(3, 4), row_means(5, 2));
  return 0;
}
