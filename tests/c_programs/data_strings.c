// String functions that walk pointers: length, in-place reverse, character count.
#include <stdio.h>

static long length(const char *s) {
  const char *p = s;
  while (*p)
    p++;
  return p - s;
}

static void reverse(char *s) {
  char *lo = s, *hi = s + length(s) - 1;
  while (lo < hi) {
    char t = *lo;
    *lo++ = *hi;
    *hi-- = t;
  }
}

static int count(const char *s, char c) {
  int n = 0;
  for (; *s != '\0'; ++s)
    n += *s == c;
  return n;
}

int main(void) {
  char text[64] = "approximate computing with pointers";
  const char *words = "a bb ccc dddd";
  printf("%ld %ld\n", length(text), length(words));
  reverse(text);
  printf("%s\n", text);
  printf("%d %d\n", count(text, 'p'), count(words + 2, 'c'));
  int upper = 0;
  // @approx loop_perforate
  for (int i = 0; i < 64; i++)
    upper += text[i] >= 'a' && text[i] <= 'z';
  char *end = &text[length(text)];
  printf("lower letters %d, tail %c, gap %ld\n", upper, *(end - 1), (long)(end - text));
  return 0;
}
