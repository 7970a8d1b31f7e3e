// enum and typedef everywhere: parameters, results, fields, arrays, casts, switch, sizeof.
#include <stdio.h>

typedef enum { RED, GREEN = 5, BLUE } color;
typedef unsigned long ulong_t;
typedef struct node { color c; ulong_t weight; } node_t;
typedef node_t row_t[3];
typedef double (*metric_t)(const node_t *);
enum shape { CIRCLE = -1, SQUARE = 1 << 4 };

static double weight_of(const node_t *n) { return (double)n->weight; }
static color next(color c) { return c == BLUE ? RED : (color)(c + 1); }
static const char *name(enum shape s) {
  switch (s) {
  case CIRCLE: return "circle";
  case SQUARE: return "square";
  }
  return "?";
}

int main(void) {
  row_t rows[4];
  metric_t m = weight_of;
  ulong_t total = 0;
  color c = RED;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 12; i++) {
    node_t *n = &rows[i / 3][i % 3];
    n->c = c;
    n->weight = (ulong_t)(i * 11) + (ulong_t)c;
    total += (ulong_t)m(n);
    c = next(c);
  }
  enum shape s = SQUARE;
  printf("%lu %d %s %s %zu %d\n", total, (int)rows[3][2].c, name(s), name(CIRCLE),
         sizeof(row_t), BLUE);
  return 0;
}
