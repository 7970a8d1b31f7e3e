/* ?:, && and || with side effects, nested and decreasing loops. */
#include <stdio.h>

int bump(int *counter, int value) {
  *counter = *counter + 1;
  return value;
}

int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

int main(void) {
  int calls = 0;
  int hits = 0;
  for (int i = 0; i < 10; i++) {
    if (bump(&calls, i % 2) && bump(&calls, i % 3))
      hits++;
    if (bump(&calls, i > 6) || bump(&calls, i < 2))
      hits += 10;
  }
  printf("calls=%d hits=%d\n", calls, hits);
  int total = 0;
#pragma approx loop_perforate knob(outer) values(1:2)
  for (int i = 9; i >= 1; i -= 2) {
    // @approx loop_perforate knob(inner) values(1:2)
    for (int j = 0; j <= i; j++)
      total += (i + j) % 3 == 0 ? i * j : -j;
  }
  printf("total=%d\n", total);
  int n = 0;
  for (int k = 20; k != 0; k--)
    n += clamp(k * 7 - 60, -10, 50);
  printf("clamped=%d\n", n);
  int a = 5, b = 0;
  int r = (b != 0 && a / b > 1) || (a > 3 && !(b < 0));
  printf("r=%d not=%d %d\n", r, !a, !b);
  double t = a > 2 ? 1.5 : 2;
  printf("t=%g\n", t);
  return 0;
}
