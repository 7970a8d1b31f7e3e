/* Dot products in float and double through pointer parameters. */
#include <stdio.h>

#define N 64

static double dot(const double *x, const double *y, int n) {
  double s = 0.0;
#pragma approx loop_perforate knob(dot_loop) values(1:4)
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}

float dotf(const float *x, const float *y, long n) {
  float s = 0.0f;
  for (long i = 0; i < n; ++i) {
    s = s + x[i] * y[i];
  }
  return s;
}

int main(void) {
  double x[N], y[N];
  float xf[N], yf[N];
  for (int i = 0; i < N; i++) {
    x[i] = 0.5 * i - 3.0;
    y[i] = 1.0 / (i + 1);
    xf[i] = (float)x[i];
    yf[i] = (float)y[i];
  }
  printf("dot = %.17g\n", dot(x, y, N));
  printf("dotf = %.9g\n", (double)dotf(xf, yf, N));
  printf("partial = %.17g\n", dot(x, y, 7));
  printf("empty = %g\n", dot(x, y, 0));
  return 0;
}
