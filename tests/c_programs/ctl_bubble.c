/* Sorting with early exits: bubble sort that stops when a pass swaps nothing, insertion
   sort whose inner `while` breaks, and a sortedness check that returns early. */
#include <stdio.h>

enum { N = 40 };

int bubble_sort(int *a, int n) {
  int passes = 0;
  for (int pass = 0; pass < n - 1; pass++) {
    int swapped = 0;
    passes++;
    for (int i = 0; i + 1 < n - pass; i++) {
      if (a[i] <= a[i + 1])
        continue;
      int t = a[i];
      a[i] = a[i + 1];
      a[i + 1] = t;
      swapped = 1;
    }
    if (!swapped)
      break;
  }
  return passes;
}

void insertion_sort(double *a, int n) {
  for (int i = 1; i < n; i++) {
    double x = a[i];
    int j = i - 1;
    while (j >= 0) {
      if (a[j] <= x)
        break;
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = x;
  }
}

int is_sorted(const int *a, int n) {
  for (int i = 1; i < n; i++)
    if (a[i - 1] > a[i])
      return 0;
  return 1;
}

int main(void) {
  int a[N], nearly[N];
  double d[N];
  unsigned seed = 7u;
  // @approx loop_perforate knob(init) values(1:3)
  for (int i = 0; i < N; i++) {
    seed = seed * 1664525u + 1013904223u;
    a[i] = (int)(seed >> 20) % 1000;
    d[i] = (double)((seed >> 8) % 10000u) / 7.0;
    nearly[i] = i;
  }
  nearly[3] = 5;
  nearly[5] = 3;
  printf("sorted before: %d %d\n", is_sorted(a, N), is_sorted(nearly, N));
  int p1 = bubble_sort(a, N), p2 = bubble_sort(nearly, N);
  printf("passes %d %d, sorted after: %d %d\n", p1, p2, is_sorted(a, N), is_sorted(nearly, N));
  printf("a: %d %d %d ... %d\n", a[0], a[1], a[2], a[N - 1]);
  insertion_sort(d, N);
  int ok = 1;
  for (int i = 1; i < N; i++)
    if (d[i - 1] > d[i])
      ok = 0;
  printf("d sorted %d: %.3f %.3f ... %.3f\n", ok, d[0], d[1], d[N - 1]);
  return 0;
}
