/* Integer hashing: unsigned wrap-around, shifts, xor, rotations, 32 and 64 bits. */
#include <stdio.h>
#include <stdint.h>

uint32_t fnv1a(const unsigned char *p, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; i++) {
    h ^= p[i];
    h *= 16777619u;
  }
  return h;
}

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

unsigned rotl(unsigned x, int r) { return (x << r) | (x >> (32 - r)); }

int main(void) {
  unsigned char buf[16] = "approxcc hash!";
  printf("fnv = %u (0x%08x)\n", fnv1a(buf, 14), fnv1a(buf, 14));
  uint64_t acc = 0;
  #pragma approx loop_perforate knob(mix_loop) values(1:2)
  for (unsigned long i = 0; i < 20; i++)
    acc += mix64(i);
  printf("acc = %llu\n", (unsigned long long)acc);
  unsigned u = 7;
  for (int r = 1; r < 32; r += 5)
    u = rotl(u, r) + 0x9e3779b9u;
  printf("u = %u\n", u);
  unsigned small = 3;
  small -= 5;  /* wraps */
  printf("wrap = %u %d\n", small, (int)(small >> 28));
  int neg = -1000;
  printf("shr = %d %u\n", neg >> 3, (unsigned)neg >> 3);
  unsigned short us = 65535;
  us += 2;
  signed char sc = 127;
  sc += 1;
  printf("%d %d\n", us, sc);
  return 0;
}
