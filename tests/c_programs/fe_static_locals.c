// static locals: counters, lazily filled tables, a static array with an initialiser.
#include <stdio.h>

static int next_id(void) {
  static int id = 100;
  return id++;
}

static int fib(int n) {
  static int memo[40];
  static int ready = 0;
  if (!ready) { memo[0] = 0; memo[1] = 1; ready = 1; }
  if (n < 2) return memo[n];
  if (memo[n]) return memo[n];
  return memo[n] = fib(n - 1) + fib(n - 2);
}

static const char *weekday(int d) {
  static const char *names[7] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  return names[d % 7];
}

int main(void) {
  int s = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 30; i++) s += fib(i) % 1000;
  int a = next_id(), b = next_id(), c = next_id();
  printf("%d %d %d %d %s %s\n", s, a, b, c, weekday(3), weekday(13));
  return 0;
}
