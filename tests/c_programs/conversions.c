/* C's usual arithmetic conversions across char/short/int/long/float/double. */
#include <stdio.h>

long mixed(int i, long l, float f, double d) {
  long r = i + l;
  r += (long)(f * 2);
  r -= (long)d;
  double q = i / 2 + l / 3.0 + f;
  return r + (long)q;
}

int main(void) {
  char c = 'A';
  short sh = -300;
  unsigned char uc = 250;
  c += 3;
  c *= 2;           /* 136 does not fit in signed char */
  sh *= 7;
  sh /= -4;
  uc += 10;         /* wraps to 4 */
  uc <<= 3;
  printf("c=%d sh=%d uc=%d\n", c, sh, uc);
  printf("div: %d %d %d %d\n", -7 / 2, -7 % 2, 7 / -2, 7 % -2);
  printf("ldiv: %ld %ld\n", -100000000000L / 7, -100000000000L % 7);
  printf("udiv: %u %u\n", 4000000000u / 3u, 4000000000u % 7u);
  int big = 2147483647;
  long widened = big + 1L;
  unsigned cmp = (-1 < 0u);  /* -1 converts to UINT_MAX */
  printf("widened=%ld cmp=%u\n", widened, cmp);
  float f = 1.0f / 3.0f;
  double d = f;
  int trunc = (int)-2.75;
  unsigned long ul = (unsigned long)3.9e9;
  printf("f=%.9g d=%.17g trunc=%d ul=%lu\n", f, d, trunc, ul);
  printf("mixed=%ld\n", mixed(-5, 1234567890123L, 2.75f, -8.5));
  double acc = 0;
  // @approx loop_perforate knob(conv_loop) values(1:3)
  for (short s = 10; s > 0; s -= 3)
    acc += s / 4 + s / 4.0;
  printf("acc=%g\n", acc);
  int x = 17;
  x %= 5;
  x |= 8;
  x ^= 3;
  x &= ~1;
  x >>= 1;
  printf("x=%d\n", x);
  return 0;
}
