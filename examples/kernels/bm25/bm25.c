/* BM25 keyword retrieval (k1 = 1.2, b = 0.75) over the Wikipedia summaries: for each query,
 * score every document term by term, as rank_bm25's get_scores does (each document's
 * postings are sorted by term id and binary-searched), and print the ids of the top 10.
 *
 * Knobs:
 *   doc_stride  (dynamic) perforate the document loop of one query term: score every v-th
 *               document only (corpus subsetting), decided per term from its idf
 *               (state.c: idf_level): a common word moves every score a little.
 *   term_skip   (dynamic) skip a query term, decided from its share of the query's idf mass.
 *   early_stop  (dynamic) stop scoring the query's remaining terms (processed by decreasing
 *               idf) once the most they can still add is small next to the best score so far. */
#include <stdio.h>
#include <stdlib.h>
#include "approxrt.h"

#define TOP_K 10
#define K1 1.2f
#define B 0.75f

/* User runtime library (state.c). */
int idf_level(float idf);
int term_share(float idf, float query_idf);
int stop_margin(float remaining_idf, float best);
int load_corpus(const char *path, int *n_docs, float *avgdl, int **doc_len, int **doc_start,
                int **post_term, int **post_tf, float **idf);
int load_queries(const char *path, char *corpus, int corpus_size, int **start, int **terms);

/* Frequency of `term` in the postings post_term[lo..hi) (sorted), 0 if absent. */
int term_frequency(const int *post_term, const int *post_tf, int lo, int hi, int term) {
  int end = hi;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (post_term[mid] < term) lo = mid + 1;
    else hi = mid;
  }
  return (lo < end && post_term[lo] == term) ? post_tf[lo] : 0;
}

/* Scores of every document for one query; its `nq` terms come by decreasing idf. */
void score_query(int n_docs, float avgdl, const int *doc_len, const int *doc_start,
                 const int *post_term, const int *post_tf, const float *idf,
                 const int *q, int nq, float *scores) {
  float query_idf = 0.0f;
  for (int t = 0; t < nq; t++) query_idf += idf[q[t]];
  for (int d = 0; d < n_docs; d++) scores[d] = 0.0f;
  float remaining = query_idf;
  float best = 0.0f;
  for (int t = 0; t < nq; t++) {
    int term = q[t];
    float w = idf[term];
    #pragma approx task_skipping knob(early_stop) state(stop_margin(remaining, best)) \
            thresholds(1) range(0:100)
    {
      #pragma approx task_skipping knob(term_skip) state(term_share(w, query_idf)) \
              thresholds(1) range(0:100)
      {
        #pragma approx loop_perforate knob(doc_stride) values(1:8) state(idf_level(w)) \
                thresholds(1) range(0:100)
        for (int d = 0; d < n_docs; d++) {
          int tf = term_frequency(post_term, post_tf, doc_start[d], doc_start[d + 1], term);
          if (tf > 0) {
            float norm = K1 * (1.0f - B + B * (float)doc_len[d] / avgdl);
            float s = scores[d] + w * (float)tf * (K1 + 1.0f) / ((float)tf + norm);
            scores[d] = s;
            if (s > best) best = s;
          }
        }
      }
    }
    remaining -= w;
  }
}

/* The k best documents (score > 0), best first; ties go to the lower id. Returns how many. */
int top_k(const float *scores, int n_docs, int *top, int k) {
  float top_score[TOP_K];
  int found = 0;
  for (int d = 0; d < n_docs; d++) {
    float s = scores[d];
    if (s <= 0.0f || (found == k && s <= top_score[k - 1])) continue;
    int i = found < k ? found++ : k - 1;
    while (i > 0 && top_score[i - 1] < s) {
      top_score[i] = top_score[i - 1];
      top[i] = top[i - 1];
      i--;
    }
    top_score[i] = s;
    top[i] = d;
  }
  return found;
}

#ifndef APPROX_NO_MAIN  /* a library holding several kernels leaves their mains out */
int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bm25 QUERIES\n");
    return 1;
  }
  char corpus[4096];
  int *q_start, *q_terms;
  int n_queries = load_queries(argv[1], corpus, (int)sizeof corpus, &q_start, &q_terms);
  int n_docs;
  float avgdl;
  int *doc_len, *doc_start, *post_term, *post_tf;
  float *idf;
  if (n_queries < 0 || !load_corpus(corpus, &n_docs, &avgdl, &doc_len, &doc_start,
                                    &post_term, &post_tf, &idf)) {
    fprintf(stderr, "bm25: cannot read %s or its corpus\n", argv[1]);
    return 1;
  }
  float *scores = malloc(sizeof(float) * n_docs);
  int *top = malloc(sizeof(int) * TOP_K * (n_queries + 1));
  int *found = malloc(sizeof(int) * (n_queries + 1));
  approx_roi_begin();
  for (int i = 0; i < n_queries; i++) {
    score_query(n_docs, avgdl, doc_len, doc_start, post_term, post_tf, idf,
                q_terms + q_start[i], q_start[i + 1] - q_start[i], scores);
    found[i] = top_k(scores, n_docs, top + TOP_K * i, TOP_K);
  }
  approx_roi_end();
  for (int i = 0; i < n_queries; i++) {
    for (int j = 0; j < found[i]; j++) printf(j ? " %d" : "%d", top[TOP_K * i + j]);
    printf("\n");
  }
  return 0;
}
#endif
