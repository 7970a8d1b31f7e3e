// A histogram of unsigned char samples, with _Bool flags (conversion to _Bool is != 0).
#include <stdio.h>
#include <stdbool.h>

int main(void) {
  unsigned char samples[200];
  unsigned hist[8] = {0};
  _Bool seen[8] = {false};
  for (int i = 0; i < 200; i++)
    samples[i] = (unsigned char)(i * 91 + (i >> 3));
  // @approx loop_perforate
  for (int i = 0; i < 200; i++) {
    unsigned char bucket = samples[i] >> 5;
    hist[bucket]++;
    seen[bucket] = hist[bucket];
  }
  bool any_odd = 0.5;
  bool flipped = 2;
  flipped--;
  int seen_count = 0;
  for (int b = 0; b < 8; b++) {
    printf("%u ", hist[b]);
    seen_count += seen[b];
  }
  printf("\nseen %d any_odd %d flipped %d size %d\n", seen_count, any_odd, flipped,
         (int)sizeof(seen));
  return 0;
}
