/* A program without tunable knobs: no `approx_knobs` section at all. */
#include <stdio.h>

#include "approxrt.h"

int main(void) {
  approx_roi_begin();
  approx_roi_end();
  printf("loaded=%d roi=%d\n", approx_config_loaded(), approx_roi_seconds() >= 0.0);
  return 0;
}
