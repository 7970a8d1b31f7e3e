/* Context selection of the RAG systems (rag_bm25, rag_kb): which retrieved passages go into
 * the prompt, and how many words of each.
 *
 *   rag_select(scores, n, words, out_words)         words of each passage to put in the prompt
 *
 * Knobs:
 *   extra_passage (dynamic) drop a passage whose score is far below the best one: a confident
 *                 retrieval (one clear winner) needs fewer passages.
 *   passage_tail  (dynamic) cut a kept passage, the best one too, to its first HEAD_WORDS
 *                 words, decided from its score relative to the best (the best's is 100): a
 *                 weak passage is worth fewer prompt tokens, and a summary states what it is
 *                 about first. */
#include "approxrt.h"

#define HEAD_WORDS 24

/* State of `extra_passage` and `passage_tail`: a passage's score in percent of the best
 * passage's. Low means the retrieval is confident in its winner. */
int score_ratio(float score, float best) {
  if (best <= 0.0f) return 0;
  int ratio = (int)(100.0f * score / best);
  return ratio < 0 ? 0 : (ratio > 100 ? 100 : ratio);
}

/* How many of a kept passage's `words` words go into the prompt, its score being `score`. */
static int kept_words(float score, float best, int words) {
  int out = words < HEAD_WORDS ? words : HEAD_WORDS;
  #pragma approx task_skipping knob(passage_tail) \
          state(score_ratio(score, best)) thresholds(1) range(0:100)
  out = words;
  return out;
}

/* Context selection over `n` passages ranked best first: out_words[i] is how many of the
 * `words[i]` words of passage i go into the prompt (0: left out). The best passage always
 * goes in. Returns the number of passages kept. */
int rag_select(const float *ranked, int n, const int *words, int *out_words) {
  int kept = 0;
  for (int i = 0; i < n; i++) {
    out_words[i] = 0;
    if (i == 0) {
      out_words[0] = kept_words(ranked[0], ranked[0], words[0]);
      kept = 1;
      continue;
    }
    #pragma approx task_skipping knob(extra_passage) \
            state(score_ratio(ranked[i], ranked[0])) thresholds(1) range(0:100)
    {
      out_words[i] = kept_words(ranked[i], ranked[0], words[i]);
      kept++;
    }
  }
  return kept;
}
