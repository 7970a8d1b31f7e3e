/* Collatz lengths, gcd (recursive) and integer square roots: integer control flow. */
#include <stdio.h>

enum { LIMIT = 30 };

int collatz(long n) {
  int steps = 0;
  while (n != 1) {
    n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    ++steps;
  }
  return steps;
}

static unsigned gcd(unsigned a, unsigned b) {
  unsigned r = a;
  if (b != 0)
    r = gcd(b, a % b);
  return r;
}

long isqrt(long x) {
  long r = 0;
  while ((r + 1) * (r + 1) <= x)
    r++;
  return r;
}

int main(void) {
  int best = 0, arg = 0;
  // @approx loop_perforate knob(collatz_scan) values(1:4)
  for (int n = LIMIT; n >= 1; n--) {
    int len = collatz(n);
    if (len > best) {
      best = len;
      arg = n;
    }
  }
  printf("longest below %d: %d (%d steps)\n", LIMIT, arg, best);
  printf("gcd %u %u %u\n", gcd(1071u, 462u), gcd(17u, 5u), gcd(0u, 9u));
  unsigned sum = 0;
  for (unsigned k = 100; k > 3; k -= 7)
    sum += (unsigned)isqrt(k * 1000L);
  printf("isqrt sum %u\n", sum);
  return 0;
}
