// restrict, inline, const/volatile and harmless __attribute__s on functions and variables;
// the builtins such code uses: branch hints and bit counts.
#include <stdio.h>

#define likely(x) __builtin_expect(!!(x), 1)

static inline int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

__attribute__((noinline)) static void saxpy(int n, float a, const float *restrict x,
                                            float *restrict y) {
  for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}

static __attribute__((unused)) int unused_helper(int x) { return x; }

__attribute__((const)) static int square(int x) { return x * x; }

int main(void) {
  float x[16] __attribute__((aligned(16)));
  float y[16];
  volatile int guard = 3;
  const int limit = 40;
  int s = 0;
  #pragma approx loop_perforate values(1:2)
  for (int i = 0; i < 16; i++) {
    x[i] = (float)i;
    y[i] = 1.0f;
    s += clamp(square(i), 0, limit);
    if (likely(i > 2)) s += __builtin_popcount(i * 37u) + __builtin_ctzll(i + 1ull);
  }
  saxpy(16, 0.5f, x, y);
  printf("%d %.2f %.2f %d\n", s, y[3], y[15], guard);
  return 0;
}
