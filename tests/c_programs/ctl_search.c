/* Searching with early exits: linear search with `break`, binary search with early
   `return`, a sentinel scan with `for (;;)`, and the first duplicate with a nested break. */
#include <stdio.h>

enum { N = 64 };

int linear_find(const int *a, int n, int key) {
  int i;
  for (i = 0; i < n; i++)
    if (a[i] == key)
      break;
  return i < n ? i : -1;
}

int binary_find(const int *a, int n, int key) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (a[mid] == key)
      return mid;
    if (a[mid] < key)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

int scan_until(const int *a, int limit) {
  int i = 0, sum = 0;
  for (;;) {
    sum += a[i];
    if (sum > limit)
      break;
    i++;
  }
  return i;
}

int first_duplicate(const int *a, int n) {
  int found = -1;
  for (int i = 0; i < n && found < 0; i++) {
    for (int j = 0; j < i; j++) {
      if (a[j] == a[i]) {
        found = i;
        break;
      }
    }
  }
  return found;
}

int main(void) {
  int sorted[N], mixed[N];
  unsigned seed = 12345u;
  // @approx loop_perforate knob(fill) values(1:2)
  for (int i = 0; i < N; i++) {
    sorted[i] = 3 * i + 1;
    seed = seed * 1103515245u + 12345u;
    mixed[i] = (int)((seed >> 16) % 97u);
  }
  int hits = 0, misses = 0;
  for (int key = 0; key < 3 * N; key += 5) {
    int a = linear_find(sorted, N, key), b = binary_find(sorted, N, key);
    if (a != b)
      printf("mismatch at %d: %d vs %d\n", key, a, b);
    if (a >= 0)
      hits++;
    else
      misses++;
  }
  printf("hits %d misses %d\n", hits, misses);
  printf("scan %d %d %d\n", scan_until(sorted, 10), scan_until(sorted, 500),
         scan_until(mixed, 1000));
  printf("first duplicate at %d (value %d)\n", first_duplicate(mixed, N),
         mixed[first_duplicate(mixed, N)]);
  return 0;
}
