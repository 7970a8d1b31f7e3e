/* CRC-32 with a 256-entry lookup table built once into a global, then used by an annotated
   loop; a const table of test messages (pointers to string literals). */
#include <stdio.h>
#include <string.h>

static unsigned int crc_table[256];
static const char *const messages[] = {"approxcc", "The quick brown fox", "", "123456789"};

static void build_table(void) {
  for (unsigned int n = 0; n < 256; n++) {
    unsigned int c = n;
    for (int k = 0; k < 8; k++)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[n] = c;
  }
}

unsigned int crc32(const unsigned char *buf, int len) {
  unsigned int c = 0xFFFFFFFFu;
  #pragma approx loop_perforate knob(crc_bytes) values(1:2)
  for (int i = 0; i < len; i++)
    c = crc_table[(c ^ buf[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

int main(void) {
  build_table();
  for (int m = 0; m < 4; m++) {
    const char *s = messages[m];
    printf("%-20s %08x\n", s, crc32((const unsigned char *)s, (int)strlen(s)));
  }
  return 0;
}
