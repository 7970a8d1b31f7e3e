/* The C half of rag_bm25, a shared library the Python pipeline loads once (ctypes): BM25
 * retrieval over the Wikipedia summaries (the scoring of examples/kernels/bm25/bm25.c,
 * linked in with its knobs doc_stride, term_skip and early_stop). Context selection
 * (`rag_select`, the knobs extra_passage and passage_tail) is ../common/select.c.
 *
 *   rag_load(path)                                 the corpus (corpus.bin), once per copy
 *   rag_retrieve(terms, n, k, out_ids, out_scores)  the k (<= 10) best summaries of a question
 */
#include <stdlib.h>
#include "approxrt.h"

/* examples/kernels/bm25: bm25.c's scoring, state.c's loading and states. */
void score_query(int n_docs, float avgdl, const int *doc_len, const int *doc_start,
                 const int *post_term, const int *post_tf, const float *idf,
                 const int *q, int nq, float *scores);
int top_k(const float *scores, int n_docs, int *top, int k);
int load_corpus(const char *path, int *n_docs, float *avgdl, int **doc_len, int **doc_start,
                int **post_term, int **post_tf, float **idf);

static int n_docs;
static float avgdl;
static int *doc_len, *doc_start, *post_term, *post_tf;
static float *idf;
static float *scores;

/* Returns the number of documents, or -1 when the corpus cannot be read. */
int rag_load(const char *path) {
  if (!load_corpus(path, &n_docs, &avgdl, &doc_len, &doc_start, &post_term, &post_tf, &idf))
    return -1;
  scores = malloc(sizeof(float) * n_docs);
  return scores ? n_docs : -1;
}

/* The tuner loads a copy of this library per configuration and unloads the old ones: what
 * rag_load read goes with its copy. */
__attribute__((destructor)) static void rag_unload(void) {
  free(doc_len), free(doc_start), free(post_term), free(post_tf), free(idf), free(scores);
}

/* The k best documents of one query (its terms by decreasing idf), best first, and their
 * scores. Returns how many (documents with a score > 0). */
int rag_retrieve(const int *terms, int n_terms, int k, int *out_ids, float *out_scores) {
  score_query(n_docs, avgdl, doc_len, doc_start, post_term, post_tf, idf, terms, n_terms,
              scores);
  int found = top_k(scores, n_docs, out_ids, k);
  for (int i = 0; i < found; i++) out_scores[i] = scores[out_ids[i]];
  return found;
}
