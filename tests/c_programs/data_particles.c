// Struct-of-arrays particles moved through a struct pointer; nested struct for the box.
#include <stdio.h>

#define COUNT 16

struct box { float lo, hi; };
struct particles {
  int n;
  float x[COUNT], v[COUNT];
  long bounces;
  struct box box;
};

static void step(struct particles *p, float dt) {
  int n = p->n;
  #pragma approx loop_perforate
  for (int i = 0; i < n; i++) {
    p->x[i] += p->v[i] * dt;
    if (p->x[i] < p->box.lo || p->x[i] > p->box.hi) {
      p->v[i] = -p->v[i];
      p->bounces++;
    }
  }
}

int main(void) {
  struct particles ps;
  ps.n = COUNT;
  ps.bounces = 0;
  ps.box.lo = 0.0f;
  ps.box.hi = 10.0f;
  for (int i = 0; i < COUNT; i++) {
    ps.x[i] = (float)(i % 10);
    ps.v[i] = (float)((i * 3) % 7) - 3.0f;
  }
  for (int t = 0; t < 50; t++)
    step(&ps, 0.25f);
  float sum = 0.0f;
  for (int i = 0; i < COUNT; i++)
    sum += ps.x[i];
  printf("bounces %ld sum %.3f first %.3f last %.3f size %d\n", ps.bounces, sum, ps.x[0],
         ps.x[COUNT - 1], (int)sizeof ps);
  return 0;
}
