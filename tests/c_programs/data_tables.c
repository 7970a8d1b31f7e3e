// const lookup tables: a CRC-style table, a 2-D table and a table of strings.
#include <stdio.h>

int main(void) {
  const unsigned char nibble_bits[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
  const int weights[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
  const char *names[] = {"zero", "one", "two", "three"};
  int bits = 0;
  #pragma approx loop_perforate
  for (int v = 0; v < 256; v++)
    bits += nibble_bits[v & 15] + nibble_bits[v >> 4];
  int dot = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      dot += weights[i][j] * (i - j);
  const int *row = weights[1];
  printf("bits %d dot %d row %d %d\n", bits, dot, row[0], *(row + 3));
  for (int i = 0; i < 4; i++)
    printf("%s%c", names[i], i == 3 ? '\n' : ' ');
  return 0;
}
