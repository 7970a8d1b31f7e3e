/* Multi-dimensional const tables (with elided inner braces and a short row), a typedef'd
   row type and a global result matrix. */
#include <stdio.h>

typedef short row_t[4];
static const row_t kernel[3] = {{1, 2, 1, 0}, {2, 4, 2}, 1, 2, 1};
const float gains[2][3] = {{0.5f, 1.0f, 1.5f}, {2.0f}};
double out[3][4];

void convolve(void) {
  for (int r = 0; r < 3; r++) {
    #pragma approx loop_perforate knob(kernel_cols) values(1:2)
    for (int c = 0; c < 4; c++)
      out[r][c] = kernel[r][c] * gains[r % 2][c % 3] + kernel[(r + 1) % 3][c];
  }
}

int main(void) {
  convolve();
  for (int r = 0; r < 3; r++)
    printf("%6.2f %6.2f %6.2f %6.2f\n", out[r][0], out[r][1], out[r][2], out[r][3]);
  return 0;
}
