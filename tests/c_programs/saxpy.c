/* saxpy / daxpy with an in-place update and a scaled norm. */
#include <stdio.h>
#include <math.h>

void saxpy(int n, float a, const float *x, float *y) {
  // @approx loop_perforate knob(saxpy) values(1, 2, 4)
  for (int i = 0; i < n; i += 1)
    y[i] = a * x[i] + y[i];
}

double norm2(const float *v, int n) {
  double acc = 0;
  for (int i = n - 1; i >= 0; i--)
    acc += (double)v[i] * v[i];
  return sqrt(acc);
}

int main(void) {
  float x[100], y[100];
  for (int i = 0; i < 100; i++) {
    x[i] = (float)i / 7.0f;
    y[i] = 100.0f - i;
  }
  saxpy(100, 2.5f, x, y);
  saxpy(50, -0.125f, y, x);
  for (int i = 0; i < 100; i += 11)
    printf("%d: %.6f %.6f\n", i, x[i], y[i]);
  printf("norm y = %.10f\n", norm2(y, 100));
  printf("norm x = %.10e\n", norm2(x, 100));
  return 0;
}
