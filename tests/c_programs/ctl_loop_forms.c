/* `for` in every form (parts missing, comma expressions), loops written outside-in, and
   `break`/`continue` nested in `if`s and blocks. */
#include <stdio.h>

int main(void) {
  int i = 0, j, s = 0;
  for (; i < 5; i++)
    s += i;
  for (j = 10; j > 0;)
    j -= 3;
  for (i = 0, j = 9; i < j; i++, j--)
    s += i * j;
  int k = 0;
  for (;;) {
    if (++k > 7)
      break;
  }
  int evens = 0;
  for (int a = 0, b = 20; a < b; a += 2, b--) {
    {
      if (a % 4 == 0) {
        continue;
      }
    }
    evens += a + b;
  }
  printf("s %d j %d k %d evens %d i %d\n", s, j, k, evens, i);
  int grid = 0;
  for (int r = 0; r < 6; r++) {
    if (r == 1)
      continue;
    for (int c = 0; c < 6; c++) {
      if (c > r)
        break;
      if ((r + c) % 3 == 0)
        continue;
      grid += r * 10 + c;
    }
    if (grid > 150)
      break;
  }
  int w = 0, count = 0;
  while (w < 100) {
    w += 7;
    if (w % 2)
      continue;
    count++;
  }
  double acc = 0.0;
  // @approx loop_perforate knob(acc) values(1:3)
  for (int t = 0; t < 100; t++) {
    if (t % 10 == 3)
      continue;
    acc += t * 0.5;
  }
  printf("grid %d w %d count %d acc %.1f\n", grid, w, count, acc);
  return 0;
}
