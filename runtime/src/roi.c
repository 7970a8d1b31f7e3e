/* Part of approxrt.c (#included there, not compiled alone): region-of-interest timers.
 * At exit, the ROI total is appended to the file named by APPROX_ROI_FILE (one line,
 * seconds), where the tuner and `make demo` read it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double roi_total, roi_start;
static int roi_reported;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void report_roi(void) {
  const char *path = getenv("APPROX_ROI_FILE");
  if (!path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "%.9f\n", roi_total);
  fclose(f);
}

void approx_roi_begin(void) {
  if (!roi_reported) {
    roi_reported = 1;
    atexit(report_roi);
  }
  roi_start = now();
}

void approx_roi_end(void) { roi_total += now() - roi_start; }

double approx_roi_seconds(void) { return roi_total; }
