/* The C half of rag_bm25, a shared library the Python pipeline loads once (ctypes):
 * BM25 retrieval (k1 = 1.2, b = 0.75) over the Wikipedia summaries, then context selection
 * (which retrieved passages go into the prompt, and how many words of each).
 *
 *   rag_load(path)                                 the corpus (corpus.bin, see gen.py), once
 *   rag_retrieve(terms, n, k, out_ids, out_scores)  the k best summaries of one question
 *   rag_select(scores, n, words, out_words)         words of each passage to put in the prompt
 *
 * Knobs:
 *   doc_stride    (dynamic) corpus subsetting: score every v-th document for one query term,
 *                 decided per term from its idf (state.c: idf_level).
 *   term_skip     (dynamic) skip a query term, from its share of the query's idf mass.
 *   early_stop    (dynamic) stop scoring once the remaining terms can add little.
 *   extra_passage (dynamic) drop a passage whose score is far below the best one: a confident
 *                 retrieval (one clear winner) needs fewer passages.
 *   passage_tail  (dynamic) cut a passage to its head, decided from its score relative to the
 *                 best: a weak passage is worth fewer prompt tokens. */
#include <stdlib.h>
#include "approxrt.h"

#define MAX_K 16
#define K1 1.2f
#define B 0.75f
#define HEAD_WORDS 24

int idf_level(float idf);
int term_share(float idf, float query_idf);
int stop_margin(float remaining_idf, float best);
int score_ratio(float score, float best);
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

/* Frequency of `term` in the postings post_term[lo..hi) (sorted), 0 if absent. */
static int term_frequency(int lo, int hi, int term) {
  int end = hi;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (post_term[mid] < term) lo = mid + 1;
    else hi = mid;
  }
  return (lo < end && post_term[lo] == term) ? post_tf[lo] : 0;
}

/* Scores of every document for one query; its `nq` terms come by decreasing idf. */
static void score_query(const int *q, int nq) {
  const int n = n_docs;  /* a local bound: the perforated loop must be countable */
  float query_idf = 0.0f;
  for (int t = 0; t < nq; t++) query_idf += idf[q[t]];
  for (int d = 0; d < n; d++) scores[d] = 0.0f;
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
        for (int d = 0; d < n; d++) {
          int tf = term_frequency(doc_start[d], doc_start[d + 1], term);
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

/* The k (<= MAX_K) best documents of one query (score > 0), best first; ties go to the
 * lower id. Returns how many. */
int rag_retrieve(const int *terms, int n_terms, int k, int *out_ids, float *out_scores) {
  if (k > MAX_K) k = MAX_K;
  score_query(terms, n_terms);
  int found = 0;
  for (int d = 0; d < n_docs; d++) {
    float s = scores[d];
    if (s <= 0.0f || (found == k && s <= out_scores[k - 1])) continue;
    int i = found < k ? found++ : k - 1;
    while (i > 0 && out_scores[i - 1] < s) {
      out_scores[i] = out_scores[i - 1];
      out_ids[i] = out_ids[i - 1];
      i--;
    }
    out_scores[i] = s;
    out_ids[i] = d;
  }
  return found;
}

/* Context selection over `n` passages ranked best first: out_words[i] is how many of the
 * `words[i]` words of passage i go into the prompt (0: the passage is left out). The best
 * passage always goes in whole. Returns the number of passages kept. */
int rag_select(const float *scores_in, int n, const int *words, int *out_words) {
  int kept = 0;
  for (int i = 0; i < n; i++) {
    out_words[i] = 0;
    if (i == 0) {
      out_words[0] = words[0];
      kept = 1;
      continue;
    }
    #pragma approx task_skipping knob(extra_passage) \
            state(score_ratio(scores_in[i], scores_in[0])) thresholds(1) range(0:100)
    {
      out_words[i] = words[i] < HEAD_WORDS ? words[i] : HEAD_WORDS;
      kept++;
      #pragma approx task_skipping knob(passage_tail) \
              state(score_ratio(scores_in[i], scores_in[0])) thresholds(1) range(0:100)
      out_words[i] = words[i];
    }
  }
  return kept;
}
