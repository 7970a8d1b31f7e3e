// Function pointers: variables, struct fields, arrays, parameters, calls through them.
#include <stdio.h>
#include <stdlib.h>

typedef int (*binop)(int, int);

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }

struct op { const char *name; binop fn; };

static int fold(binop f, const int *xs, int n, int init) {
  int acc = init;
  for (int i = 0; i < n; i++) acc = f(acc, xs[i]);
  return acc;
}

static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(void) {
  int xs[10];
  binop table[3] = {add, sub, mul};
  struct op ops[2] = {{"add", add}, {"mul", &mul}};
  int acc = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 10; i++) {
    xs[i] = (i * 7) % 11 - 3;
    acc += table[i % 3](i, 2);
  }
  binop f = sub;
  int (*g)(int, int) = f == sub ? &add : mul;
  printf("%d %d %d\n", acc, (*g)(3, 4), f(10, 4));
  printf("%s=%d %s=%d\n", ops[0].name, fold(ops[0].fn, xs, 10, 0), ops[1].name,
         fold(ops[1].fn, xs, 3, 1));
  qsort(xs, 10, sizeof xs[0], cmp);
  printf("%d %d %d\n", xs[0], xs[5], xs[9]);
  return 0;
}
