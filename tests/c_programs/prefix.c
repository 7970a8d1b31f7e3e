/* Inclusive and exclusive prefix sums, in long, with while loops. */
#include <stdio.h>

void inclusive(const int *in, long *out, int n) {
  long run = 0;
  // @approx loop_perforate knob(scan)
  for (int i = 0; i < n; i++) {
    run += in[i];
    out[i] = run;
  }
}

long exclusive_total(const int *in, int n) {
  long total = 0;
  int i = 0;
  while (i < n) {
    total = total + in[i] * (long)i;
    i++;
  }
  return total;
}

int main(void) {
  int data[30];
  long sums[30];
  int k = 0;
  while (k < 30) {
    data[k] = (k * 37 + 11) % 23 - 11;
    k += 1;
  }
  inclusive(data, sums, 30);
  for (int i = 0; i < 30; i += 3)
    printf("%ld ", sums[i]);
  printf("\nweighted = %ld\n", exclusive_total(data, 30));
  int count = 0;
  long s = 0;
  while (s < 1000000000L) {
    s = s * 3 + 7;
    count++;
  }
  printf("count = %d s = %ld\n", count, s);
  return 0;
}
