/* Part of approxrt.c (#included there, not compiled alone): the one-line errors a bad
 * configuration gets (`approxrt: error: PATH: [knob 'NAME': ]WHAT`, exit status 2). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static const char *cfg_path; /* APPROX_CONFIG, for messages */

/* Prints NAME with control characters replaced, so one error stays one line. */
static void put_sanitized(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    fputc(c < 0x20 || c == 0x7f ? '?' : c, stderr);
  }
}

/* `approxrt: error: PATH: ` (+ `knob 'NAME': ` when name is given) + the message. The
 * message may be built in several calls: start with err_begin, continue with err_more,
 * finish with err_end (which exits). */
static void err_begin(const char *name, size_t name_len) {
  fflush(stdout);
  fprintf(stderr, "approxrt: error: %s: ", cfg_path ? cfg_path : "(null)");
  if (name) {
    fputs("knob '", stderr);
    put_sanitized(name, name_len);
    fputs("': ", stderr);
  }
}

static void err_more(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

static void err_end(void) {
  fputc('\n', stderr);
  fflush(stderr);
  exit(2);
}

static void fail(const char *name, size_t name_len, const char *fmt, ...) {
  va_list ap;
  err_begin(name, name_len);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  err_end();
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) fail(NULL, 0, "out of memory");
  return q;
}
