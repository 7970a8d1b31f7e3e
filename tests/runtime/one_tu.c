/* One translation unit registering three knobs the way a tunable build does. */
#include <inttypes.h>
#include <stdio.h>

#include "approxrt.h"

/* loop: static (slot 0); tree: dynamic, 2 integer thresholds (slots 1-2) and 3 decisions
 * (3-5); ftree: dynamic, 2 float thresholds (6-7) and 3 decisions (8-10). */
static int64_t table[11] = {1, 33, 66, 1, 1, 1, 0, 0, 0, 0, 0};
__attribute__((used, section("approx_knobs"))) static const struct approx_knob_entry entry = {
    "loop 0 static 1,2,3,4\n"
    "tree 1 dynamic 2 i 1,2,4\n"
    "ftree 6 dynamic 2 f 0,1,-3\n",
    table};

static int64_t seen_by_constructor = -1;

/* An ordinary constructor already sees the configured tables. */
__attribute__((constructor)) static void user_constructor(void) {
  seen_by_constructor = table[0];
}

int main(void) {
  printf("loaded=%d ctor=%" PRId64 "\n", approx_config_loaded(), seen_by_constructor);
  for (int i = 0; i < 11; i++) printf("%s%" PRId64, i ? " " : "", table[i]);
  printf("\n");
  return 0;
}
