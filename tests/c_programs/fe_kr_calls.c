// Calls through declarations without a prototype (K&R style), as benchmark harnesses write them.
#include <stdio.h>

extern void timer_start();
extern double timer_stop();
void flush_cache();
int scale();

static int calls;

void timer_start() { calls++; }
double timer_stop() { calls++; return 0.25; }
void flush_cache() { calls += 10; }
int scale(x, k) int x; int k; { return x * k; }

int main(void) {
  long s = 0;
  timer_start();
  flush_cache();
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 100; i++) s += scale(i, 3);
  double t = timer_stop();
  printf("%ld %.2f %d\n", s, t, calls);
  return 0;
}
