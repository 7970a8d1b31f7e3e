/* printf of many types: exercises variadic calls and default argument promotions. */
#include <stdio.h>

int main(void) {
  char c = 'z';
  signed char sc = -5;
  unsigned char uc = 200;
  short s = -12345;
  unsigned short us = 54321;
  int i = -2147483647 - 1;
  unsigned u = 4294967295u;
  long l = -9000000000000L;
  unsigned long ul = 18000000000000000000UL;
  long long ll = -1234567890123456789LL;
  float f = 3.14159265f;
  double d = -2.718281828459045;
  char word[] = "string";
  int sq[5];
  #pragma approx loop_perforate knob(squares) values(1:5)
  for (int k = 0; k < 5; k++)
    sq[k] = k * k;
  printf("%c %hhd %hhu %hd %hu\n", c, sc, uc, s, us);
  printf("%d %u %x %X %o\n", i, u, u, 48879u, 511);
  printf("%ld %lu %lld\n", l, ul, ll);
  printf("%f %.3e %g %a\n", f, d, d * 1e10, 0.1);
  printf("[%8.3f] [%-6d] [%+d] [%05d]\n", d, 42, 42, 42);
  printf("%s %.3s %c%c\n", word, word, word[0], word[5]);
  printf("%d %d %d %d %d %%\n", sq[0], sq[1], sq[2], sq[3], sq[4]);
  printf("sizes %d %d %d\n", (int)sizeof(long), (int)sizeof sq, (int)sizeof(short));
  return 0;
}
