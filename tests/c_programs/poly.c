/* Horner evaluation and derivatives with decreasing loops. */
#include <stdio.h>

double horner(const double *c, int degree, double x) {
  double r = 0.0;
  for (int i = degree; i >= 0; i--)
    r = r * x + c[i];
  return r;
}

double deriv_at(const double *c, int degree, double x) {
  double r = 0.0;
  int i;
  for (i = degree; i > 0; --i)
    r = r * x + i * c[i];
  /* i keeps its exit value after the loop */
  return r + i;
}

int main(void) {
  double c[6] = {1.0, -2.0, 0.5, 3.0, -0.25, 0.125};
  double table[21];
#pragma approx loop_perforate knob(poly_table)
  for (int k = 0; k <= 20; k++)
    table[k] = horner(c, 5, -1.0 + 0.1 * k);
  for (int k = 20; k >= 0; k -= 4)
    printf("p(%.1f) = %.12f  p'(%.1f) = %.12f\n", -1.0 + 0.1 * k, table[k],
           -1.0 + 0.1 * k, deriv_at(c, 5, -1.0 + 0.1 * k));
  return 0;
}
