/* Part of approxrt.c (#included there, not compiled alone; uses errors.c and json.c's
 * is_digit): the manifests of the knob tables registered in the ELF section
 * `approx_knobs` (approxrt.h), parsed into one `struct knob` per line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct knob {
  char *name;
  size_t name_len;
  int64_t *table;
  size_t slot;
  int dynamic;
  size_t nthr;     /* dynamic: threshold count */
  char kind;       /* dynamic: 'i' or 'f' */
  int64_t *values; /* the domain */
  size_t nvalues;
};

static struct knob *knobs;
static size_t nknobs;

extern const struct approx_knob_entry __start_approx_knobs[] __attribute__((weak));
extern const struct approx_knob_entry __stop_approx_knobs[] __attribute__((weak));

static void bad_manifest(const char *line, size_t n, const char *why) {
  err_begin(NULL, 0);
  err_more("malformed knob manifest line '");
  put_sanitized(line, n);
  err_more("': %s", why);
  err_end();
}

/* A non-negative decimal (size_t) or a signed one (int64); 0 on failure. */
static int parse_uint(const char *s, size_t n, size_t *out) {
  size_t v = 0;
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_digit(s[i])) return 0;
    if (v > ((size_t)1 << 40)) return 0; /* far beyond any table */
    v = v * 10 + (size_t)(s[i] - '0');
  }
  *out = v;
  return 1;
}

static int parse_int64(const char *s, size_t n, int64_t *out) {
  int neg = n > 0 && s[0] == '-';
  uint64_t v = 0;
  size_t i = neg ? 1 : 0;
  if (i >= n) return 0;
  for (; i < n; i++) {
    if (!is_digit(s[i])) return 0;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) return 0;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 1;
}

static void parse_manifest_line(const char *line, size_t len, int64_t *table) {
  const char *tok[7];
  size_t tl[7];
  size_t nt = 0;
  for (size_t i = 0; i < len;) {
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) i++;
    if (i >= len) break;
    size_t b = i;
    while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') i++;
    if (nt == 7) bad_manifest(line, len, "too many fields");
    tok[nt] = line + b;
    tl[nt++] = i - b;
  }
  if (nt == 0) return; /* blank line */
  struct knob k;
  memset(&k, 0, sizeof k);
  k.table = table;
  const char *vals;
  size_t vals_len;
  if (nt == 4 && tl[2] == 6 && memcmp(tok[2], "static", 6) == 0) {
    vals = tok[3];
    vals_len = tl[3];
  } else if (nt == 6 && tl[2] == 7 && memcmp(tok[2], "dynamic", 7) == 0) {
    k.dynamic = 1;
    if (!parse_uint(tok[3], tl[3], &k.nthr)) bad_manifest(line, len, "bad threshold count");
    if (tl[4] != 1 || (tok[4][0] != 'i' && tok[4][0] != 'f'))
      bad_manifest(line, len, "state kind must be 'i' or 'f'");
    k.kind = tok[4][0];
    vals = tok[5];
    vals_len = tl[5];
  } else {
    bad_manifest(line, len, "expected 'NAME SLOT static VALUES' or "
                            "'NAME SLOT dynamic N STATE_KIND VALUES'");
    return;
  }
  if (!parse_uint(tok[1], tl[1], &k.slot)) bad_manifest(line, len, "bad slot");
  size_t cap = 0;
  for (size_t i = 0; i <= vals_len;) {
    size_t b = i;
    while (i < vals_len && vals[i] != ',') i++;
    int64_t v;
    if (!parse_int64(vals + b, i - b, &v)) {
      free(k.values);
      bad_manifest(line, len, "bad VALUES");
    }
    if (k.nvalues == cap) {
      cap = cap ? 2 * cap : 8;
      k.values = xrealloc(k.values, cap * sizeof *k.values);
    }
    k.values[k.nvalues++] = v;
    i++; /* past the comma (or the end) */
  }
  k.name_len = tl[0];
  k.name = xrealloc(NULL, tl[0] + 1);
  memcpy(k.name, tok[0], tl[0]);
  k.name[tl[0]] = '\0';
  knobs = xrealloc(knobs, (nknobs + 1) * sizeof *knobs);
  knobs[nknobs++] = k;
}

static void load_manifests(void) {
  const struct approx_knob_entry *start = __start_approx_knobs;
  const struct approx_knob_entry *stop = __stop_approx_knobs;
  if (!start || !stop) return;
  uintptr_t a = (uintptr_t)start, b = (uintptr_t)stop;
  if (b <= a) return;
  size_t n = (size_t)(b - a) / sizeof *start;
  for (size_t e = 0; e < n; e++) {
    const char *m = start[e].manifest;
    if (!m || !start[e].table) continue;
    while (*m) {
      const char *nl = strchr(m, '\n');
      size_t len = nl ? (size_t)(nl - m) : strlen(m);
      parse_manifest_line(m, len, start[e].table);
      m += len + (nl ? 1 : 0);
    }
  }
}

static void free_manifests(void) {
  for (size_t i = 0; i < nknobs; i++) {
    free(knobs[i].name);
    free(knobs[i].values);
  }
  free(knobs);
  knobs = NULL;
  nknobs = 0;
}
