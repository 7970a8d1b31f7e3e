/* User runtime library of bm25.c: input loading and the states its dynamic knobs decide on.
 * Compiled by the system C compiler and linked with the kernel (approx.toml `runtime`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BM25_K1 1.2f

/* State of `doc_stride`: the term's idf, x10, clamped to 0..100 (idf of this corpus is
 * 0.05 for "the" up to 9.2 for a word in one summary). */
int idf_level(float idf) {
  int level = (int)(idf * 10.0f);
  return level < 0 ? 0 : (level > 100 ? 100 : level);
}

/* State of `term_skip`: the term's share of the query's idf mass, in percent. A word that
 * carries 3% of the query's weight can reorder little. */
int term_share(float idf, float query_idf) {
  if (query_idf <= 0.0f) return 100;
  int share = (int)(100.0f * idf / query_idf);
  return share > 100 ? 100 : share;
}

/* State of `early_stop`, from the running scores: the largest score the terms not scored yet
 * could still add (each adds at most idf * (k1 + 1)), in percent of the best score so far,
 * clamped to 0..100. Small means the leaders are unlikely to change. */
int stop_margin(float remaining_idf, float best) {
  if (best <= 0.0f) return 100;
  int margin = (int)(100.0f * remaining_idf * (BM25_K1 + 1.0f) / best);
  return margin > 100 ? 100 : margin;
}

static void *read_exact(FILE *f, size_t size, size_t count) {
  void *p = malloc(size * (count ? count : 1));
  if (p && fread(p, size, count, f) != count) {
    free(p);
    return NULL;
  }
  return p;
}

/* corpus.bin (see gen.py). Returns 1 on success. */
int load_corpus(const char *path, int *n_docs, float *avgdl, int **doc_len, int **doc_start,
                int **post_term, int **post_tf, float **idf) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  int head[3];
  int ok = fread(head, sizeof(int), 3, f) == 3 && fread(avgdl, sizeof(float), 1, f) == 1;
  if (ok) {
    *n_docs = head[0];
    *doc_len = read_exact(f, sizeof(int), head[0]);
    *doc_start = read_exact(f, sizeof(int), head[0] + 1);
    *post_term = read_exact(f, sizeof(int), head[2]);
    *post_tf = read_exact(f, sizeof(int), head[2]);
    *idf = read_exact(f, sizeof(float), head[1]);
    ok = *doc_len && *doc_start && *post_term && *post_tf && *idf;
  }
  fclose(f);
  return ok;
}

/* A query batch (see gen.py): the corpus path, then one query per line. Terms of query i are
 * terms[start[i] .. start[i + 1]). Returns the number of queries, or -1. */
int load_queries(const char *path, char *corpus, int corpus_size, int **start, int **terms) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = -1;
  if (!fgets(corpus, corpus_size, f) || fscanf(f, "%d", &n) != 1 || n < 0) {
    fclose(f);
    return -1;
  }
  corpus[strcspn(corpus, "\n")] = '\0';
  int cap = 64, used = 0;
  *start = malloc(sizeof(int) * (n + 1));
  *terms = malloc(sizeof(int) * cap);
  for (int i = 0; i < n; i++) {
    int article, count;
    if (fscanf(f, "%d %d", &article, &count) != 2 || count < 0) {
      n = -1;
      break;
    }
    (*start)[i] = used;
    for (int t = 0; t < count; t++) {
      if (used == cap) *terms = realloc(*terms, sizeof(int) * (cap *= 2));
      if (fscanf(f, "%d", &(*terms)[used++]) != 1) n = -1;
    }
    if (n < 0) break;
  }
  if (n >= 0) (*start)[n] = used;
  fclose(f);
  return n;
}
