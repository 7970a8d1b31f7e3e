/* Part of approxrt.c (#included there, not compiled alone; uses errors.c, json.c and
 * manifest.c): the constructor that reads APPROX_CONFIG and writes it into the knob
 * tables. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int config_loaded;

int approx_config_loaded(void) { return config_loaded; }

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

const char approx_runtime_anchor = 1;

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
