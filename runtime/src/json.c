/* Part of approxrt.c (#included there, not compiled alone; uses errors.c): a small JSON
 * parser. Every malformed document is reported with its line and column, and exits. */
#include <errno.h>
#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
