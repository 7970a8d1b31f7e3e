/* 1-D three-point stencil, Jacobi style, with strided and != loops. */
#include <stdio.h>

#define LEN 40

void step(const double *in, double *out, int n) {
  out[0] = in[0];
  out[n - 1] = in[n - 1];
  #pragma approx loop_perforate knob(stencil_inner) values(1:3)
  for (int i = 1; i != n - 1; i++)
    out[i] = 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1];
}

int main(void) {
  double a[LEN], b[LEN];
  for (int i = 0; i < LEN; i++)
    a[i] = (i % 7 == 0) ? 10.0 : (double)(i % 3);
  for (int t = 0; t < 10; t++) {
    step(a, b, LEN);
    step(b, a, LEN);
  }
  double checksum = 0;
  for (int i = LEN - 1; i >= 0; i -= 2)
    checksum += a[i];
  for (int i = 0; i < LEN; i += 5)
    printf("a[%d] = %.10f\n", i, a[i]);
  printf("checksum(odd) = %.10f\n", checksum);
  return 0;
}
