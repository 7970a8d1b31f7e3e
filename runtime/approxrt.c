/* See approxrt.h. At exit, the ROI total is appended to the file named by APPROX_ROI_FILE
 * (one line, seconds), where the tuner and `make demo` read it.
 *
 * The rest of this file applies APPROX_CONFIG to the knob tables registered in the ELF
 * section `approx_knobs` (approxrt.h, docs/approx-ir.md section 3): a small JSON parser, a
 * manifest parser, and the constructor that ties them together. */
#define _POSIX_C_SOURCE 199309L
#include "approxrt.h"

#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- ROI timers */

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

/* ---------------------------------------------------------------- errors */

static const char *cfg_path; /* APPROX_CONFIG, for messages */
static int config_loaded;

int approx_config_loaded(void) { return config_loaded; }

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

/* ---------------------------------------------------------------- JSON */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval;

struct jmember {
  char *key;
  size_t key_len;
  struct jval *val;
};

struct jval {
  enum jtype type;
  int boolean;
  /* J_NUM: the token as written (for messages), and its value. */
  const char *tok;
  size_t tok_len;
  int is_int;       /* an integer literal (no fraction/exponent) that fits int64 */
  int finite;       /* the double is finite (not overflowed to infinity) */
  int64_t i;
  double d;
  /* J_STR */
  char *str;
  size_t str_len;
  /* J_ARR (items) / J_OBJ (members) */
  size_t n;
  struct jval **items;
  struct jmember *members;
};

#define JSON_MAX_DEPTH 128

struct jparser {
  const char *start, *p, *end;
  int depth;
};

static void json_free(struct jval *v) {
  if (!v) return;
  free(v->str);
  if (v->items)
    for (size_t k = 0; k < v->n; k++) json_free(v->items[k]);
  if (v->members)
    for (size_t k = 0; k < v->n; k++) {
      free(v->members[k].key);
      json_free(v->members[k].val);
    }
  free(v->items);
  free(v->members);
  free(v);
}

/* A malformed document: report line and column of the parser's position and exit. */
static void json_error(struct jparser *ps, const char *what) {
  long line = 1, col = 1;
  for (const char *q = ps->start; q < ps->p && q < ps->end; q++) {
    if (*q == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  fail(NULL, 0, "malformed JSON at line %ld, column %ld: %s", line, col, what);
}

static void skip_ws(struct jparser *ps) {
  while (ps->p < ps->end &&
         (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static unsigned read_hex4(struct jparser *ps) {
  if (ps->end - ps->p < 4) json_error(ps, "truncated \\u escape");
  unsigned u = 0;
  for (int k = 0; k < 4; k++) {
    int h = hexval(ps->p[k]);
    if (h < 0) json_error(ps, "bad \\u escape");
    u = u * 16 + (unsigned)h;
  }
  ps->p += 4;
  return u;
}

/* Parses a string starting at '"'; returns a malloc'd, NUL-terminated UTF-8 buffer (which
 * may also contain NULs from \u0000; *len is authoritative). */
static char *parse_string(struct jparser *ps, size_t *len) {
  ps->p++; /* opening quote */
  size_t cap = 16, n = 0;
  char *buf = xrealloc(NULL, cap);
  for (;;) {
    if (ps->p >= ps->end) {
      free(buf);
      json_error(ps, "unterminated string");
    }
    unsigned char c = (unsigned char)*ps->p;
    char out[4];
    size_t out_n = 0;
    if (c == '"') {
      ps->p++;
      break;
    } else if (c < 0x20) {
      free(buf);
      json_error(ps, "control character in string");
    } else if (c == '\\') {
      ps->p++;
      if (ps->p >= ps->end) {
        free(buf);
        json_error(ps, "unterminated string");
      }
      char e = *ps->p++;
      switch (e) {
        case '"': out[out_n++] = '"'; break;
        case '\\': out[out_n++] = '\\'; break;
        case '/': out[out_n++] = '/'; break;
        case 'b': out[out_n++] = '\b'; break;
        case 'f': out[out_n++] = '\f'; break;
        case 'n': out[out_n++] = '\n'; break;
        case 'r': out[out_n++] = '\r'; break;
        case 't': out[out_n++] = '\t'; break;
        case 'u': {
          unsigned u = read_hex4(ps);
          if (u >= 0xD800 && u <= 0xDBFF) { /* high surrogate: needs a low one */
            if (ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') {
              ps->p += 2;
              unsigned lo = read_hex4(ps);
              if (lo >= 0xDC00 && lo <= 0xDFFF)
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
              else
                u = 0xFFFD;
            } else {
              u = 0xFFFD;
            }
          } else if (u >= 0xDC00 && u <= 0xDFFF) {
            u = 0xFFFD;
          }
          if (u < 0x80) {
            out[out_n++] = (char)u;
          } else if (u < 0x800) {
            out[out_n++] = (char)(0xC0 | (u >> 6));
            out[out_n++] = (char)(0x80 | (u & 0x3F));
          } else if (u < 0x10000) {
            out[out_n++] = (char)(0xE0 | (u >> 12));
            out[out_n++] = (char)(0x80 | ((u >> 6) & 0x3F));
            out[out_n++] = (char)(0x80 | (u & 0x3F));
          } else {
            out[out_n++] = (char)(0xF0 | (u >> 18));
            out[out_n++] = (char)(0x80 | ((u >> 12) & 0x3F));
            out[out_n++] = (char)(0x80 | ((u >> 6) & 0x3F));
            out[out_n++] = (char)(0x80 | (u & 0x3F));
          }
          break;
        }
        default:
          free(buf);
          ps->p--;
          json_error(ps, "bad escape in string");
      }
    } else {
      out[out_n++] = (char)c;
      ps->p++;
    }
    if (n + out_n + 1 > cap) {
      cap *= 2;
      buf = xrealloc(buf, cap);
    }
    memcpy(buf + n, out, out_n);
    n += out_n;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* Reported at the number's first character. */
static void bad_number(struct jparser *ps, const char *s) {
  ps->p = s;
  json_error(ps, "bad number");
}

static void parse_number(struct jparser *ps, struct jval *v) {
  const char *s = ps->p;
  int integral = 1;
  if (ps->p < ps->end && *ps->p == '-') ps->p++;
  if (ps->p >= ps->end || !is_digit(*ps->p)) bad_number(ps, s);
  if (*ps->p == '0') {
    ps->p++;
  } else {
    while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
  }
  if (ps->p < ps->end && *ps->p == '.') {
    integral = 0;
    ps->p++;
    if (ps->p >= ps->end || !is_digit(*ps->p)) bad_number(ps, s);
    while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
  }
  if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
    integral = 0;
    ps->p++;
    if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
    if (ps->p >= ps->end || !is_digit(*ps->p)) bad_number(ps, s);
    while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
  }
  size_t n = (size_t)(ps->p - s);
  char *tmp = xrealloc(NULL, n + 1);
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  v->type = J_NUM;
  v->tok = s;
  v->tok_len = n;
  errno = 0;
  v->d = strtod(tmp, NULL);
  v->finite = v->d <= DBL_MAX && v->d >= -DBL_MAX;
  if (integral) {
    errno = 0;
    long long ll = strtoll(tmp, NULL, 10);
    if (errno != ERANGE && ll >= INT64_MIN && ll <= INT64_MAX) {
      v->is_int = 1;
      v->i = (int64_t)ll;
    }
  }
  free(tmp);
}

static int match_word(struct jparser *ps, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, w, n) == 0) {
    ps->p += n;
    return 1;
  }
  return 0;
}

/* Every error exits the process (the tree built so far is abandoned with it). */
static struct jval *parse_value(struct jparser *ps) {
  skip_ws(ps);
  if (ps->p >= ps->end) json_error(ps, "unexpected end of file");
  struct jval *v = xrealloc(NULL, sizeof *v);
  memset(v, 0, sizeof *v);
  char c = *ps->p;
  if (c == '{' || c == '[') {
    if (++ps->depth > JSON_MAX_DEPTH) json_error(ps, "nested too deeply");
    ps->p++;
    size_t cap = 0;
    int obj = c == '{';
    v->type = obj ? J_OBJ : J_ARR;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
      ps->p++;
    } else {
      for (;;) {
        if (v->n == cap) {
          cap = cap ? 2 * cap : 4;
          if (obj)
            v->members = xrealloc(v->members, cap * sizeof *v->members);
          else
            v->items = xrealloc(v->items, cap * sizeof *v->items);
        }
        if (obj) {
          skip_ws(ps);
          if (ps->p >= ps->end || *ps->p != '"') json_error(ps, "expected a string key");
          struct jmember *m = &v->members[v->n];
          m->key = parse_string(ps, &m->key_len);
          m->val = NULL;
          v->n++;
          skip_ws(ps);
          if (ps->p >= ps->end || *ps->p != ':') json_error(ps, "expected ':'");
          ps->p++;
          m->val = parse_value(ps);
        } else {
          v->items[v->n++] = parse_value(ps);
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
          ps->p++;
          continue;
        }
        if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
          ps->p++;
          break;
        }
        json_error(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
    ps->depth--;
  } else if (c == '"') {
    v->type = J_STR;
    v->str = parse_string(ps, &v->str_len);
  } else if (c == '-' || is_digit(c)) {
    parse_number(ps, v);
  } else if (match_word(ps, "true")) {
    v->type = J_BOOL;
    v->boolean = 1;
  } else if (match_word(ps, "false")) {
    v->type = J_BOOL;
  } else if (match_word(ps, "null")) {
    v->type = J_NULL;
  } else {
    json_error(ps, "unexpected character");
  }
  return v;
}

static struct jval *json_parse(const char *text, size_t len) {
  struct jparser ps = {text, text, text + len, 0};
  struct jval *v = parse_value(&ps);
  skip_ws(&ps);
  if (ps.p != ps.end) json_error(&ps, "trailing characters after the document");
  return v;
}

static int key_is(const struct jmember *m, const char *k) {
  return m->key_len == strlen(k) && memcmp(m->key, k, m->key_len) == 0;
}

static const struct jval *obj_get(const struct jval *o, const char *k) {
  for (size_t i = 0; i < o->n; i++)
    if (key_is(&o->members[i], k)) return o->members[i].val;
  return NULL;
}

/* ---------------------------------------------------------------- manifests */

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

/* ---------------------------------------------------------------- applying a config */

#define KNOB_SHAPE "expected {\"value\": int} or {\"thresholds\": [...], \"decisions\": [...]}"

static int in_domain(const struct knob *k, int64_t v) {
  for (size_t i = 0; i < k->nvalues; i++)
    if (k->values[i] == v) return 1;
  return 0;
}

/* An integer choice (value or decision) for knob k, or an error naming `what`. */
static int64_t check_choice(const struct knob *k, const struct jval *v, const char *what) {
  /* An integer literal too large for int64 is still an integer, just not in the domain. */
  int integral = v->type == J_NUM && !memchr(v->tok, '.', v->tok_len) &&
                 !memchr(v->tok, 'e', v->tok_len) && !memchr(v->tok, 'E', v->tok_len);
  if (!integral) fail(k->name, k->name_len, "%s must be an integer", what);
  if (v->is_int && in_domain(k, v->i)) return v->i;
  err_begin(k->name, k->name_len);
  err_more("%s %.*s is outside its domain [", what, (int)(v->tok_len > 64 ? 64 : v->tok_len),
           v->tok);
  for (size_t i = 0; i < k->nvalues; i++)
    err_more("%s%lld", i ? ", " : "", (long long)k->values[i]);
  err_more("]");
  err_end();
  return 0;
}

static void print_list(const struct jval *arr) {
  err_more("[");
  for (size_t i = 0; i < arr->n; i++) {
    const struct jval *t = arr->items[i];
    err_more("%s%.*s", i ? ", " : "", (int)(t->tok_len > 64 ? 64 : t->tok_len), t->tok);
  }
  err_more("]");
}

/* Exits: the configured thresholds of knob `nm` are not strictly increasing. */
static void fail_unsorted(const char *nm, size_t nl, const struct jval *thr, int64_t *bits) {
  free(bits);
  err_begin(nm, nl);
  err_more("thresholds ");
  print_list(thr);
  err_more(" are not strictly increasing");
  err_end();
}

static void apply_knob(const struct knob *k, const struct jval *entry) {
  const char *nm = k->name;
  size_t nl = k->name_len;
  const struct jval *value = obj_get(entry, "value");
  const struct jval *thr = obj_get(entry, "thresholds");
  const struct jval *dec = obj_get(entry, "decisions");
  if (value) {
    if (thr || dec) fail(nm, nl, KNOB_SHAPE);
    int64_t v = check_choice(k, value, "value");
    if (!k->dynamic) {
      k->table[k->slot] = v;
    } else {
      for (size_t i = 0; i <= k->nthr; i++) k->table[k->slot + k->nthr + i] = v;
    }
    return;
  }
  if (!thr || !dec) fail(nm, nl, KNOB_SHAPE);
  if (!k->dynamic)
    fail(nm, nl, "a static knob takes {\"value\": v}, not thresholds and decisions");
  if (thr->type != J_ARR) fail(nm, nl, "\"thresholds\" must be an array of numbers");
  if (dec->type != J_ARR) fail(nm, nl, "\"decisions\" must be an array of integers");
  for (size_t i = 0; i < thr->n; i++)
    if (thr->items[i]->type != J_NUM)
      fail(nm, nl, "\"thresholds\" must be an array of numbers");
  for (size_t i = 0; i < dec->n; i++)
    if (dec->items[i]->type != J_NUM) fail(nm, nl, "\"decisions\" must be an array of integers");
  if (thr->n != k->nthr)
    fail(nm, nl, "knob has %zu threshold%s, the configuration gives %zu", k->nthr,
         k->nthr == 1 ? "" : "s", thr->n);
  if (dec->n != k->nthr + 1)
    fail(nm, nl, "%zu threshold%s need %zu decisions, got %zu", k->nthr,
         k->nthr == 1 ? "" : "s", k->nthr + 1, dec->n);
  /* Thresholds: validate and convert before writing anything. */
  int64_t *bits = xrealloc(NULL, (thr->n ? thr->n : 1) * sizeof *bits);
  for (size_t i = 0; i < thr->n; i++) {
    const struct jval *t = thr->items[i];
    int tl = (int)(t->tok_len > 64 ? 64 : t->tok_len);
    if (k->kind == 'i') {
      if (t->is_int) {
        bits[i] = t->i;
      } else if (t->finite && t->d >= -0x1p63 && t->d < 0x1p63 &&
                 (double)(int64_t)t->d == t->d) {
        bits[i] = (int64_t)t->d; /* e.g. 37.0 or 3.7e1 */
      } else {
        free(bits);
        fail(nm, nl, "threshold %.*s is not a 64-bit integer (the knob's state is an integer)",
             tl, t->tok);
      }
      if (i > 0 && bits[i - 1] >= bits[i]) fail_unsorted(nm, nl, thr, bits);
    } else {
      if (!t->finite) {
        free(bits);
        fail(nm, nl, "threshold %.*s is out of range for a double", tl, t->tok);
      }
      double d = t->d;
      if (i > 0) {
        double prev;
        memcpy(&prev, &bits[i - 1], sizeof prev);
        if (!(prev < d)) fail_unsorted(nm, nl, thr, bits);
      }
      memcpy(&bits[i], &d, sizeof d);
    }
  }
  int64_t *choices = xrealloc(NULL, dec->n * sizeof *choices);
  for (size_t i = 0; i < dec->n; i++) choices[i] = check_choice(k, dec->items[i], "decision");
  for (size_t i = 0; i < thr->n; i++) k->table[k->slot + i] = bits[i];
  for (size_t i = 0; i < dec->n; i++) k->table[k->slot + k->nthr + i] = choices[i];
  free(bits);
  free(choices);
}

static void apply_config(const struct jval *root) {
  if (root->type != J_OBJ) fail(NULL, 0, "configuration must be a JSON object");
  const struct jval *kn = obj_get(root, "knobs");
  if (!kn || kn->type != J_OBJ) fail(NULL, 0, "configuration needs a \"knobs\" object");
  for (size_t i = 0; i < kn->n; i++) {
    const struct jmember *m = &kn->members[i];
    for (size_t j = 0; j < i; j++)
      if (kn->members[j].key_len == m->key_len &&
          memcmp(kn->members[j].key, m->key, m->key_len) == 0)
        fail(m->key, m->key_len, "configured twice");
    const struct jval *entry = m->val;
    int found = 0;
    if (entry->type != J_OBJ) fail(m->key, m->key_len, KNOB_SHAPE);
    for (size_t j = 0; j < entry->n; j++) {
      const struct jmember *f = &entry->members[j];
      if (!key_is(f, "value") && !key_is(f, "thresholds") && !key_is(f, "decisions")) {
        err_begin(m->key, m->key_len);
        err_more("unknown key '");
        put_sanitized(f->key, f->key_len);
        err_more("' (" KNOB_SHAPE ")");
        err_end();
      }
      for (size_t q = 0; q < j; q++)
        if (entry->members[q].key_len == f->key_len &&
            memcmp(entry->members[q].key, f->key, f->key_len) == 0) {
          err_begin(m->key, m->key_len);
          err_more("duplicate key '");
          put_sanitized(f->key, f->key_len);
          err_more("'");
          err_end();
        }
    }
    for (size_t j = 0; j < nknobs; j++) {
      if (knobs[j].name_len == m->key_len && memcmp(knobs[j].name, m->key, m->key_len) == 0) {
        found = 1;
        apply_knob(&knobs[j], entry);
      }
    }
    if (!found) fail(m->key, m->key_len, "unknown knob (not in this program)");
  }
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) fail(NULL, 0, "cannot read configuration: %s", strerror(errno));
  size_t cap = 4096, n = 0;
  char *buf = xrealloc(NULL, cap);
  for (;;) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
    if (n == cap) {
      cap *= 2;
      buf = xrealloc(buf, cap);
    }
  }
  int bad = ferror(f), err = errno;
  fclose(f);
  if (bad) {
    free(buf);
    fail(NULL, 0, "cannot read configuration: %s", err ? strerror(err) : "read error");
  }
  *len = n;
  return buf;
}

__attribute__((constructor(101))) static void approx_load_config(void) {
  const char *path = getenv("APPROX_CONFIG");
  if (!path || !*path) return;
  cfg_path = path;
  size_t len;
  char *text = read_file(path, &len);
  struct jval *root = json_parse(text, len);
  load_manifests();
  apply_config(root);
  json_free(root);
  free(text);
  free_manifests();
  config_loaded = 1;
}
