/* approxrt, the runtime every program approxcc builds is linked with (see approxrt.h), as
 * one translation unit: its parts under src/ are #included here rather than compiled
 * apart, so that every helper stays `static` (nothing but approxrt.h's functions can clash
 * with a name of the program it is linked into) and `cc prog.c approxrt.c` builds a
 * program without approxcc.
 *
 *   src/roi.c       region-of-interest timers (APPROX_ROI_FILE)
 *   src/errors.c    the one-line configuration errors
 *   src/json.c      a small JSON parser
 *   src/manifest.c  the knob manifests registered in the section `approx_knobs`
 *   src/config.c    the constructor that applies APPROX_CONFIG to the knob tables */
#define _POSIX_C_SOURCE 199309L /* clock_gettime, before any system header */
#include "approxrt.h"

#include "src/roi.c"
#include "src/errors.c"
#include "src/json.c"
#include "src/manifest.c"
#include "src/config.c"
