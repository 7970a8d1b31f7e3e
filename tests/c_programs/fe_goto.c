// goto: error exits and a retry loop written with labels, as C code bases write them.
#include <stdio.h>

static int parse_digits(const char *s, int *out) {
  int v = 0;
  if (!s) goto fail;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') goto fail;
    v = v * 10 + (*s - '0');
  }
  *out = v;
  return 0;
fail:
  *out = -1;
  return 1;
}

static int collatz_steps(long n) {
  int steps = 0;
again:
  if (n == 1) goto done;
  n = n % 2 ? 3 * n + 1 : n / 2;
  steps++;
  goto again;
done:
  return steps;
}

int main(void) {
  const char *inputs[4] = {"123", "4x5", "9000", 0};
  int errors = 0, sum = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 4; i++) {
    int v;
    errors += parse_digits(inputs[i], &v);
    sum += v;
  }
  int steps = 0;
  for (long n = 1; n < 30; n++) steps += collatz_steps(n);
  printf("%d %d %d\n", errors, sum, steps);
  return 0;
}
