// Designated initialisers: struct fields, array indices, nested, mixed with positional ones.
#include <stdio.h>

struct config { int width, height; double scale; int flags[4]; const char *name; };
struct line { struct { int x, y; } from, to; };

int main(void) {
  struct config c = {.height = 480, .name = "vga", .flags = {[2] = 1, 5}, .width = 640};
  int primes[10] = {[0] = 2, 3, 5, [5] = 13, 17};
  struct line l = {.to.y = 9, .from = {1, 2}, .to.x = 4};
  struct config d = {1, 2, .flags[1] = 7, 8, .scale = 0.5};
  int s = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 10; i++) s += primes[i] * (i + 1);
  printf("%d %d %.1f %d %d %d %s\n", c.width, c.height, c.scale, c.flags[2], c.flags[3],
         c.flags[0], c.name);
  printf("%d %d %d %d %d %d\n", s, l.from.x, l.from.y, l.to.x, l.to.y, primes[6]);
  printf("%d %d %.1f %d %d %d\n", d.width, d.height, d.scale, d.flags[1], d.flags[2],
         d.name == 0);
  return 0;
}
