/* First of two translation units, each with its own table and entry. */
#include <inttypes.h>
#include <stdio.h>

#include "approxrt.h"

static int64_t table[2] = {1, 0};
__attribute__((used, section("approx_knobs"))) static const struct approx_knob_entry entry = {
    "a_loop 0 static 1,2,3\nshared 1 static 0,1\n", table};

void print_other(void);

int main(void) {
  printf("loaded=%d\n", approx_config_loaded());
  printf("main: %" PRId64 " %" PRId64 "\n", table[0], table[1]);
  print_other();
  return 0;
}
