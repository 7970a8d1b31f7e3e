/* A corrupt manifest (a toolchain bug): reported when a configuration is applied. */
#include <stdio.h>

#include "approxrt.h"

static int64_t table[1] = {1};
__attribute__((used, section("approx_knobs"))) static const struct approx_knob_entry entry = {
    "loop 0 sometimes 1,2\n", table};

int main(void) {
  printf("loaded=%d table=%d\n", approx_config_loaded(), (int)table[0]);
  return 0;
}
