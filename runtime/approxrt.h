/* approxrt: the runtime library approxcc links into every program it builds.
 *
 * Region-of-interest timers: a program brackets the work worth measuring with
 * approx_roi_begin()/approx_roi_end(); the total is what the tuner optimises (instead of
 * the whole process's wall time, which includes start-up and input parsing).
 *
 * Tunable knobs (docs/approx-ir.md section 3): a tunable build turns every knob constant into a
 * load from a per-translation-unit table of int64_t, and registers that table together
 * with a manifest by placing one `struct approx_knob_entry` in the ELF section
 * `approx_knobs`:
 *
 *     static int64_t table[6] = {1, 50, 1, 1, 0, 0};   (the exact configuration)
 *     __attribute__((used, section("approx_knobs")))
 *     static const struct approx_knob_entry entry = {
 *         "loop 0 static 1,2,3,4\ntree 1 dynamic 2 i 1,2,4\n", table};
 *
 * The manifest is a NUL-terminated string, one line per knob:
 *     NAME SLOT static VALUES
 *     NAME SLOT dynamic N STATE_KIND VALUES
 * SLOT is the knob's first table index, VALUES its comma-separated integer domain, N the
 * number of thresholds and STATE_KIND `i` (integer state) or `f` (floating state). A
 * static knob uses table[SLOT] (its value); a dynamic knob uses N thresholds at
 * table[SLOT .. SLOT+N-1] (for `f`, the IEEE-754 bits of a double) followed by N+1
 * decisions at table[SLOT+N .. SLOT+2N].
 *
 * Before main (a constructor of priority 101, so before ordinary constructors), when the
 * environment variable APPROX_CONFIG names a file (unset or empty: nothing happens, the
 * tables keep the exact configuration they were compiled with), the runtime reads that
 * JSON configuration (docs/config.md) and writes it into the
 * tables of every registered entry:
 *     {"value": v}                                  static knob: table[SLOT] = v;
 *                                                   dynamic knob: every decision = v,
 *                                                   thresholds unchanged
 *     {"thresholds": [t...], "decisions": [d...]}   dynamic knob only: N thresholds
 *                                                   (strictly increasing; integral for
 *                                                   `i`), N+1 decisions
 * Every value and decision must be in the knob's VALUES. Knobs the configuration does not
 * mention keep their table contents. A knob name registered by several entries (e.g. a
 * static inline function in a header) is configured in all of them. Top-level keys other
 * than "knobs" are ignored; "knobs" itself is required.
 *
 * Any error (unreadable file, malformed JSON, unknown knob, value outside the domain,
 * wrong number of thresholds/decisions, unsorted thresholds, thresholds for a static knob,
 * an unknown key inside a knob entry, a malformed manifest) prints one line
 *     approxrt: error: <config path>: knob 'NAME': <what>
 * (without the knob part for file-level errors) to stderr and exits with status 2 before
 * main runs; the tuner records such a run as a failed configuration.
 *
 * User state/check/recover functions (`state(EXPR)`, `check(EXPR)`, `recover(CALL)`)
 * are ordinary C functions of the user's own runtime libraries, compiled and linked with
 * the program like any other code; approxrt neither calls nor registers them. */
#ifndef APPROXRT_H
#define APPROXRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void approx_roi_begin(void);
void approx_roi_end(void);
/* Seconds spent inside the region of interest so far. */
double approx_roi_seconds(void);

/* One registration in the ELF section `approx_knobs` (see above); the layout is fixed:
 * two pointers, no padding, as the compiler emits `!llvm.struct<(ptr, ptr)>`. */
struct approx_knob_entry {
  const char *manifest; /* NUL-terminated, one line per knob */
  int64_t *table;       /* the translation unit's mutable config table */
};

/* 1 if APPROX_CONFIG was set and its configuration has been written into the tables,
 * else 0. */
int approx_config_loaded(void);

/* Every tunable object refers to this symbol, so that a link against the runtime archive
 * pulls the runtime in (and with it the constructor above) even where the program calls
 * none of its functions. */
extern const char approx_runtime_anchor;

#ifdef __cplusplus
}
#endif

#endif
