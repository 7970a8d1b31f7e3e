/* Insertion sort and binary search: while loops whose && must short-circuit. */
#include <stdio.h>

void insertion_sort(int *a, int n) {
  for (int i = 1; i < n; i++) {
    int key = a[i];
    int j = i - 1;
    while (j >= 0 && a[j] > key) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = key;
  }
}

int search(const int *a, int n, int key) {
  int lo = 0, hi = n - 1, found = -1;
  while (lo <= hi && found < 0) {
    int mid = lo + (hi - lo) / 2;
    if (a[mid] == key)
      found = mid;
    else if (a[mid] < key)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return found;
}

int main(void) {
  int v[25];
  unsigned seed = 12345u;
  #pragma approx loop_perforate knob(fill) values(1:2)
  for (int i = 0; i < 25; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (int)((seed >> 16) % 100u) - 50;
  }
  insertion_sort(v, 25);
  for (int i = 0; i < 25; i++)
    printf("%d%c", v[i], i == 24 ? '\n' : ' ');
  printf("%d %d %d\n", search(v, 25, v[7]), search(v, 25, 1000), search(v, 25, v[0]));
  return 0;
}
