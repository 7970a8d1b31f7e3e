/* approxrt: the runtime library approxcc links into every program it builds.
 *
 * Region-of-interest timers: a program brackets the work worth measuring with
 * approx_roi_begin()/approx_roi_end(); the total is what the tuner optimises (instead of
 * the whole process's wall time, which includes start-up and input parsing). */
#ifndef APPROXRT_H
#define APPROXRT_H

#ifdef __cplusplus
extern "C" {
#endif

void approx_roi_begin(void);
void approx_roi_end(void);
/* Seconds spent inside the region of interest so far. */
double approx_roi_seconds(void);

#ifdef __cplusplus
}
#endif

#endif
