/* Parameters declared as arrays (`char s[]`, `const BYTE data[]`, `int m[][3]`): C adjusts
 * them to pointers, so they are passed on, indexed and advanced as pointers. */
#include <stdio.h>
#include <string.h>

typedef unsigned char BYTE;
struct ctx { BYTE data[8]; int n; };

static unsigned long length(char s[]) { return strlen(s); }

static int sum(const struct ctx *c, const BYTE data[]) {
  int s = 0;
  for (int i = 0; i < c->n; i++) s += data[i];
  return s;
}

static int trace(int n, int m[][3]) {
  int t = 0;
  for (int i = 0; i < n; i++) t += m[i][i % 3];
  return t;
}

static int skip_first(char s[]) {
  s++;
  return s[0];
}

int main(void) {
  struct ctx c = {{1, 2, 3, 4, 5, 6, 7, 8}, 8};
  char word[] = "approximate";
  int m[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  int total = 0;
  #pragma approx loop_perforate values(1:2)
  for (int k = 0; k < 3; k++) total += sum(&c, c.data) + trace(3, m);
  printf("%lu %d %d\n", length(word), total, skip_first(word));
  return 0;
}
