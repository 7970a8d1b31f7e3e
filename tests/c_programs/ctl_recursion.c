/* Recursive functions with early returns, early `return` from nested loops, a `void`
   function that returns early, and a function-level knob whose body returns early. */
#include <stdio.h>

long ackermann(long m, long n) {
  if (m == 0)
    return n + 1;
  if (n == 0)
    return ackermann(m - 1, 1);
  return ackermann(m - 1, ackermann(m, n - 1));
}

int is_prime(int n) {
  if (n < 2)
    return 0;
  for (int d = 2; d * d <= n; d++)
    if (n % d == 0)
      return 0;
  return 1;
}

int pair_sum(const int *a, int n, int target) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (a[i] + a[j] == target)
        return i * 100 + j;
  return -1;
}

void clamp_first(int *a, int limit) {
  if (a[0] <= limit)
    return;
  a[0] = limit;
}

double power(double x, int k) {
  if (k == 0)
    return 1.0;
  double half = power(x, k / 2);
  if (k % 2 == 0)
    return half * half;
  else
    return half * half * x;
}

int sign_coarse(int x) { return x > 0 ? 1 : 0; }

// @approx func_substitute variants(sign_coarse)
int sign(int x) {
  if (x > 0)
    return 1;
  else if (x < 0)
    return -1;
  return 0;
}

int main(void) {
  int primes = 0, last = 0;
  // @approx loop_perforate knob(sieve) values(1:3)
  for (int n = 0; n < 2000; n++) {
    if (is_prime(n)) {
      primes++;
      last = n;
    }
  }
  printf("%d primes below 2000, the last %d\n", primes, last);
  printf("ackermann(2, 3) = %ld, ackermann(3, 3) = %ld\n", ackermann(2, 3), ackermann(3, 3));
  int a[6] = {8, 3, 11, 5, 2, 9};
  printf("pairs %d %d %d\n", pair_sum(a, 6, 13), pair_sum(a, 6, 20), pair_sum(a, 6, 100));
  clamp_first(a, 10);
  int before = a[0];
  clamp_first(a, 4);
  printf("clamped %d %d\n", before, a[0]);
  printf("power %.4f %.4f %.1f\n", power(1.5, 7), power(0.5, 10), power(3.0, 0));
  printf("signs %d %d %d\n", sign(-7), sign(0), sign(12));
  if (primes != 303)
    return 1;
  return 0;
}
