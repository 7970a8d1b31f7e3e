// Variadic definitions: va_list, va_arg of ints, doubles and pointers, va_copy, a va_list
// passed on to vprintf.
#include <stdarg.h>
#include <stdio.h>

static int sum_ints(int n, ...) {
  va_list ap;
  va_start(ap, n);
  int s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, int);
  va_end(ap);
  return s;
}

static double mean(int n, ...) {
  va_list ap, again;
  va_start(ap, n);
  va_copy(again, ap);
  double s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, double);
  double first = va_arg(again, double);
  va_end(again);
  va_end(ap);
  return s / n + first;
}

static int count_chars(const char *label, ...) {
  va_list ap;
  va_start(ap, label);
  int total = 0;
  const char *s;
  while ((s = va_arg(ap, const char *)) != 0)
    for (; *s; s++) total++;
  va_end(ap);
  return total + (label[0] == 'x');
}

static int log_line(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vprintf(fmt, ap);
  va_end(ap);
  return n;
}

int main(void) {
  long acc = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 10; i++) acc += sum_ints(4, i, i * 2, -i, 7) + sum_ints(12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, i);
  printf("%ld %.3f %d\n", acc, mean(3, 1.0, 2.5, 4.0), count_chars("x", "ab", "cde", "", "f", (char *)0));
  return log_line("%s %d %.1f\n", "done", 7, 2.5) != 13;
}
