// Designated initialisers: struct fields, array indices, nested, mixed with positional ones,
// in locals, in file-scope tables and in static locals.
#include <stdio.h>

struct config { int width, height; double scale; int flags[4]; const char *name; };
struct line { struct { int x, y; } from, to; };

static const struct config defaults = {.width = 320, .name = "qvga", .scale = 1.5};
int lut[8] = {[1] = 10, [4] = 40, 50, [2] = 20};
static const char greeting[8] = {"hi"};
static struct line lines[3] = {[1].to = {7, 8}, [2] = {.from.y = 3}};

static int scaled(int i) {
  static const int weights[5] = {[4] = 9, [0] = 1, 2};
  return weights[i % 5] * lut[i % 8];
}

int main(void) {
  struct config c = {.height = 480, .name = "vga", .flags = {[2] = 1, 5}, .width = 640};
  int primes[10] = {[0] = 2, 3, 5, [5] = 13, 17};
  struct line l = {.to.y = 9, .from = {1, 2}, .to.x = 4};
  struct config d = {1, 2, .flags[1] = 7, 8, .scale = 0.5};
  char word[6] = {'a', [3] = 'd', 'e'};
  int s = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 10; i++) s += primes[i] * (i + 1) + scaled(i);
  printf("%d %d %.1f %d %d %d %s\n", c.width, c.height, c.scale, c.flags[2], c.flags[3],
         c.flags[0], c.name);
  printf("%d %d %d %d %d %d\n", s, l.from.x, l.from.y, l.to.x, l.to.y, primes[6]);
  printf("%d %d %.1f %d %d %d\n", d.width, d.height, d.scale, d.flags[1], d.flags[2],
         d.name == 0);
  printf("%d %s %.1f %s %d %d %d\n", defaults.width, defaults.name, defaults.scale, greeting,
         lines[1].to.y, lines[2].from.y, word[4] - word[0]);
  return 0;
}
