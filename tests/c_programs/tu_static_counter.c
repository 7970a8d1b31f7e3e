/* static locals as call counters and a memo of the last result; a static global seed. */
#include <stdio.h>

static unsigned int seed = 7u;

static unsigned int next_random(void) {
  static unsigned int calls;
  calls++;
  seed = seed * 1664525u + 1013904223u;
  return (seed >> 16) ^ calls;
}

int running_max(int x) {
  static int best = -1;
  static int updates = 0;
  if (x > best) {
    best = x;
    updates++;
  }
  return best * 100 + updates;
}

int main(void) {
  int last = 0;
  #pragma approx loop_perforate knob(draws) values(1:3)
  for (int i = 0; i < 40; i++)
    last = running_max((int)(next_random() % 1000));
  printf("best*100+updates = %d, seed = %u\n", last, seed);
  return 0;
}
