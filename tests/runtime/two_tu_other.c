/* Second translation unit: its own table, with a dynamic knob in the middle. */
#include <inttypes.h>
#include <stdio.h>

#include "approxrt.h"

static int64_t table[5] = {7, 10, 0, 0, 7};
__attribute__((used, section("approx_knobs"))) static const struct approx_knob_entry entry = {
    "b_tree 1 dynamic 1 i 0,1\nshared 4 static 0,1\n", table};

void print_other(void) {
  printf("other:");
  for (int i = 0; i < 5; i++) printf(" %" PRId64, table[i]);
  printf("\n");
}
