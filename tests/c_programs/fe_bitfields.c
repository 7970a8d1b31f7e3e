// Bit-fields: packed flags, signed fields, fields straddling bytes, a zero-width field.
#include <stdio.h>

struct flags {
  unsigned ready : 1;
  unsigned mode : 3;
  signed level : 5;
  unsigned : 0;
  unsigned wide : 12;
  unsigned char tail;
};

int main(void) {
  struct flags f[8];
  int total = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 8; i++) {
    f[i].ready = i & 1;
    f[i].mode = i * 3;
    f[i].level = i - 5;
    f[i].wide = i * 700;
    f[i].tail = (unsigned char)(i + 100);
    total += f[i].ready + f[i].mode + f[i].level + f[i].wide + f[i].tail;
  }
  struct flags g = {1, 5, -3, 4000, 7};
  g.mode++;
  g.level -= 20;
  g.wide += 100;
  printf("%d %u %u %d %u %u %zu\n", total, g.ready, g.mode, g.level, g.wide, g.tail,
         sizeof g);
  return 0;
}
