/* The C half of rag_bm25, a shared library the Python pipeline loads once (ctypes): BM25
 * retrieval over the Wikipedia summaries (the scoring of examples/kernels/bm25/bm25.c,
 * linked in with its knobs doc_stride, term_skip and early_stop), then context selection:
 * which retrieved passages go into the prompt, and how many words of each.
 *
 *   rag_load(path)                                 the corpus (corpus.bin), once per copy
 *   rag_retrieve(terms, n, k, out_ids, out_scores)  the k (<= 10) best summaries of a question
 *   rag_select(scores, n, words, out_words)         words of each passage to put in the prompt
 *
 * Knobs of the selection:
 *   extra_passage (dynamic) drop a passage whose score is far below the best one: a confident
 *                 retrieval (one clear winner) needs fewer passages.
 *   passage_tail  (dynamic) cut a kept passage to its first HEAD_WORDS words, decided from its
 *                 score relative to the best: a weak passage is worth fewer prompt tokens. */
#include <stdlib.h>
#include "approxrt.h"

#define HEAD_WORDS 24

/* examples/kernels/bm25: bm25.c's scoring, state.c's loading and states. */
void score_query(int n_docs, float avgdl, const int *doc_len, const int *doc_start,
                 const int *post_term, const int *post_tf, const float *idf,
                 const int *q, int nq, float *scores);
int top_k(const float *scores, int n_docs, int *top, int k);
int load_corpus(const char *path, int *n_docs, float *avgdl, int **doc_len, int **doc_start,
                int **post_term, int **post_tf, float **idf);
/* state.c */
int score_ratio(float score, float best);

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

/* The k best documents of one query (its terms by decreasing idf), best first, and their
 * scores. Returns how many (documents with a score > 0). */
int rag_retrieve(const int *terms, int n_terms, int k, int *out_ids, float *out_scores) {
  score_query(n_docs, avgdl, doc_len, doc_start, post_term, post_tf, idf, terms, n_terms,
              scores);
  int found = top_k(scores, n_docs, out_ids, k);
  for (int i = 0; i < found; i++) out_scores[i] = scores[out_ids[i]];
  return found;
}

/* Context selection over `n` passages ranked best first: out_words[i] is how many of the
 * `words[i]` words of passage i go into the prompt (0: left out). The best passage always
 * goes in whole. Returns the number of passages kept. */
int rag_select(const float *ranked, int n, const int *words, int *out_words) {
  int kept = 0;
  for (int i = 0; i < n; i++) {
    out_words[i] = 0;
    if (i == 0) {
      out_words[0] = words[0];
      kept = 1;
      continue;
    }
    #pragma approx task_skipping knob(extra_passage) \
            state(score_ratio(ranked[i], ranked[0])) thresholds(1) range(0:100)
    {
      out_words[i] = words[i] < HEAD_WORDS ? words[i] : HEAD_WORDS;
      kept++;
      #pragma approx task_skipping knob(passage_tail) \
              state(score_ratio(ranked[i], ranked[0])) thresholds(1) range(0:100)
      out_words[i] = words[i];
    }
  }
  return kept;
}
