// Bit manipulation on unsigned types: wrap-around, shifts, rotations, popcount by hand.
#include <stdio.h>
#include <stdint.h>

static unsigned popcount(uint64_t x) {
  unsigned n = 0;
  while (x != 0) {
    x &= x - 1;
    n++;
  }
  return n;
}

static uint32_t rotl(uint32_t x, unsigned k) { return (x << k) | (x >> (32 - k)); }

int main(void) {
  uint32_t h = 2166136261u;
  unsigned char bytes[16];
  #pragma approx loop_perforate
  for (int i = 0; i < 16; i++) {
    bytes[i] = (unsigned char)(i * 37 + 11);
    h ^= bytes[i];
    h *= 16777619u;
  }
  unsigned short s = 65535;
  s += 3;
  unsigned long long big = ~0ull;
  big >>= 7;
  int neg = -17;
  long mixed = neg / 4 + neg % 4 + (neg >> 2);
  unsigned wrap = 0u - 1u;
  uint8_t u8 = 200;
  u8 <<= 1;
  printf("%u %u %llu %ld %u %u\n", h, s, big, mixed, wrap, u8);
  printf("%u %u %u\n", popcount(0xF0F0F0F0F0F0F0F0ull), rotl(h, 13), (unsigned)(-5) % 7u);
  return 0;
}
