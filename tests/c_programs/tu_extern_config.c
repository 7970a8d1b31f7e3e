/* extern declarations before the definitions, a tentative definition, a pointer global
   initialised with the address of another global, and a char array from a string. */
#include <stdio.h>

extern int scale;
extern const int offsets[];
int scale = 3;
const int offsets[5] = {4, -2, 9, 0, 7};
int accumulator;
int *target = &accumulator;
char label[16] = "sum";

int apply(int n) {
  #pragma approx loop_perforate knob(offsets_used) values(1:2)
  for (int i = 0; i < n; i++)
    *target += offsets[i] * scale;
  return *target;
}

int main(void) {
  printf("%s = %d\n", label, apply(5));
  scale = 2;
  int again = apply(3);
  printf("%s = %d (accumulator %d)\n", label, again, accumulator);
  return 0;
}
