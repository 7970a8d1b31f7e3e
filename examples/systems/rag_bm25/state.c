/* User runtime library of rag.c: the state its selection knobs decide on. */

/* State of `extra_passage` and `passage_tail`: a passage's score in percent of the best
 * passage's. Low means the retrieval is confident in its winner. */
int score_ratio(float score, float best) {
  if (best <= 0.0f) return 0;
  int ratio = (int)(100.0f * score / best);
  return ratio < 0 ? 0 : (ratio > 100 ? 100 : ratio);
}
