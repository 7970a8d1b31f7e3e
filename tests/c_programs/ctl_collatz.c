/* Collatz sequences with `while`, `do ... while`, `break` and `continue`. */
#include <stdio.h>

int steps(long n) {
  int count = 0;
  do {
    if (n == 1)
      break;
    n = n % 2 ? 3 * n + 1 : n / 2;
    count++;
  } while (1);
  return count;
}

long peak(long n) {
  long top = n;
  while (n != 1) {
    n = n % 2 ? 3 * n + 1 : n / 2;
    if (n <= top)
      continue;
    top = n;
  }
  return top;
}

int digits(unsigned long x) {
  int d = 0;
  do {
    d++;
    x /= 10;
  } while (x != 0);
  return d;
}

int main(void) {
  int best = 0;
  long arg = 0, highest = 0;
  // @approx loop_perforate knob(scan) values(1:4)
  for (long n = 1; n <= 3000; n++) {
    int s = steps(n);
    if (s > best) {
      best = s;
      arg = n;
    }
    long p = peak(n);
    if (p > highest)
      highest = p;
  }
  printf("longest %ld (%d steps), highest peak %ld (%d digits)\n", arg, best, highest,
         digits((unsigned long)highest));
  int odd = 0;
  long n = 27;
  do {
    if (n % 2 == 0) {
      n /= 2;
      continue;
    }
    odd++;
    n = 3 * n + 1;
  } while (n != 1);
  printf("27 takes %d odd steps, %d digits in 0\n", odd, digits(0));
  return 0;
}
