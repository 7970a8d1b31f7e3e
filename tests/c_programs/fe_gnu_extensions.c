// What system headers and C code bases write: assert (a GNU statement expression behind
// __extension__), __func__, `?:` of type void, statement expressions, argv walked with ++.
#include <assert.h>
#include <stdio.h>

#define MAX(a, b) ({ __typeof__(a) _a = (a), _b = (b); _a > _b ? _a : _b; })

static int clipped(int v, int hi) {
  assert(v >= 0 && "negative input");
  return MAX(v, hi) == v ? hi : v;
}

static void note(int *count, int v) { v > 5 ? (void)(*count += v) : (void)0; }

int main(int argc, char *argv[]) {
  int s = 0, count = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 10; i++) {
    s += clipped(i * 3, 12);
    note(&count, i);
  }
  int args = 0;
  for (argc--, argv++; argc > 0; argc--, argv++) args++;
  printf("%s %d %d %d %s\n", __func__, s, count, args, *argv == 0 ? "end" : "more");
  return 0;
}
