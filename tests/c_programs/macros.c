/* Code written through macros, array and string initialisers, math.h constants. */
#include <stdio.h>
#include <math.h>

#define ABS(x) ((x) < 0 ? -(x) : (x))
#define BUMP(v) ((v)++)
#define NOT(x) (!(x))
#define ROW "%3d | %-8s | %6.2f\n"
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

int main(void) {
  int deltas[8] = {3, -7, 12, -1};
  double weights[] = {0.5, -1.25, 2};
  char name[12] = "ap\tx\"cc";
  char tag[] = "\x41\102C";
  int total = 0, visits = 0;
  #pragma approx loop_perforate knob(abs_sum) values(1:2)
  for (int i = 0; i < COUNT(deltas); i++) {
    total += ABS(deltas[i]);
    BUMP(visits);
  }
  printf(ROW, total, name, weights[1]);
  printf(ROW, visits, tag, ABS(weights[1]) + NOT(total) + NOT(0));
  printf("tail %d %d %d [%s] %d\n", deltas[4], deltas[7], COUNT(weights), name, name[11]);
  printf("%g %g %d\n", INFINITY, -HUGE_VAL, (int)(ABS(-2.5) * 2));
  return 0;
}
