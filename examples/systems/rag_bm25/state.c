/* User runtime library of rag.c: corpus loading and the states its dynamic knobs decide on.
 * Compiled by the system C compiler and linked into the library (system.toml `runtime`). */
#include <stdio.h>
#include <stdlib.h>

#define BM25_K1 1.2f

/* State of `doc_stride`: the term's idf x10, clamped to 0..100. */
int idf_level(float idf) {
  int level = (int)(idf * 10.0f);
  return level < 0 ? 0 : (level > 100 ? 100 : level);
}

/* State of `term_skip`: the term's share of the query's idf mass, in percent. */
int term_share(float idf, float query_idf) {
  if (query_idf <= 0.0f) return 100;
  int share = (int)(100.0f * idf / query_idf);
  return share > 100 ? 100 : share;
}

/* State of `early_stop`: the most the terms not scored yet could add (each at most
 * idf * (k1 + 1)), in percent of the best score so far, clamped to 0..100. */
int stop_margin(float remaining_idf, float best) {
  if (best <= 0.0f) return 100;
  int margin = (int)(100.0f * remaining_idf * (BM25_K1 + 1.0f) / best);
  return margin > 100 ? 100 : margin;
}

/* State of `extra_passage` and `passage_tail`: a passage's score in percent of the best
 * passage's. Low means the retrieval is confident in its winner. */
int score_ratio(float score, float best) {
  if (best <= 0.0f) return 0;
  int ratio = (int)(100.0f * score / best);
  return ratio < 0 ? 0 : (ratio > 100 ? 100 : ratio);
}

static void *read_exact(FILE *f, size_t size, size_t count) {
  void *p = malloc(size * (count ? count : 1));
  if (p && fread(p, size, count, f) != count) {
    free(p);
    return NULL;
  }
  return p;
}

/* corpus.bin (the layout of examples/kernels/bm25/gen.py). Returns 1 on success. */
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
