// Structs passed and returned by value: small (in registers), mixed, large (in memory).
#include <stdio.h>

struct vec2 { double x, y; };
struct pair { int a; int b; };
struct mixed { int id; float w; double v; };
struct big { int data[12]; char tag; };

static struct vec2 vadd(struct vec2 p, struct vec2 q) { struct vec2 r = {p.x + q.x, p.y + q.y}; return r; }
static struct pair swap(struct pair p) { struct pair r = {p.b, p.a}; return r; }
static struct mixed bump(struct mixed m, int k) { m.id += k; m.w *= 2; m.v -= k; return m; }
static struct big fill(int seed) {
  struct big b;
  for (int i = 0; i < 12; i++) b.data[i] = seed * i;
  b.tag = (char)('a' + seed);
  return b;
}
static long total(struct big b) { long s = b.tag; for (int i = 0; i < 12; i++) s += b.data[i]; return s; }

int main(void) {
  struct vec2 acc = {0, 0};
  long t = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 8; i++) {
    struct vec2 d = {i * 0.5, -i * 0.25};
    acc = vadd(acc, d);
    t += total(fill(i));
  }
  struct pair p = swap((struct pair){3, 9});
  struct mixed m = bump((struct mixed){1, 1.5f, 10.0}, 4);
  printf("%.2f %.2f %ld %d %d %d %.1f %.1f\n", acc.x, acc.y, t, p.a, p.b, m.id, m.w, m.v);
  return 0;
}
