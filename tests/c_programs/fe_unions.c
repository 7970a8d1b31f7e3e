// Unions: type punning, tagged unions, anonymous unions inside structs, arrays of unions.
#include <stdio.h>
#include <stdint.h>

union bits { float f; uint32_t u; unsigned char b[4]; };

struct value {
  int tag;
  union { long i; double d; const char *s; };
};

static double as_double(struct value v) { return v.tag == 0 ? (double)v.i : v.tag == 1 ? v.d : -1.0; }

int main(void) {
  union bits x;
  x.f = 1.5f;
  printf("%08x %u %u\n", (unsigned)x.u, x.b[0], x.b[3]);
  struct value vals[6];
  double sum = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 6; i++) {
    vals[i].tag = i % 3;
    if (vals[i].tag == 0) vals[i].i = i * 10;
    else if (vals[i].tag == 1) vals[i].d = i / 4.0;
    else vals[i].s = "str";
    sum += as_double(vals[i]);
  }
  union bits y = {2.0f};
  union bits z = x;
  z.u ^= 0x80000000u;
  printf("%.3f %s %.1f %.1f %zu\n", sum, vals[2].s, y.f, z.f, sizeof(struct value));
  return 0;
}
