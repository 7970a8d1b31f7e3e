// Compound literals: arrays and structs as temporaries, addresses of them, in a loop.
#include <stdio.h>

struct point { int x, y; };

static int manhattan(const struct point *p) { return (p->x < 0 ? -p->x : p->x) + (p->y < 0 ? -p->y : p->y); }
static int sum(const int *xs, int n) { int s = 0; for (int i = 0; i < n; i++) s += xs[i]; return s; }

int main(void) {
  int total = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 10; i++) {
    total += manhattan(&(struct point){i - 5, 2 * i});
    total += sum((int[]){i, i + 1, i * i}, 3);
  }
  struct point p = (struct point){.y = 7};
  int *w = (int[4]){[2] = 9};
  printf("%d %d %d %d %d\n", total, p.x, p.y, w[2], w[3]);
  return 0;
}
