/* The C half: the fact that best matches the question, word by word (each question word's
 * best dot product with the fact's words, summed; the vectors are unit vectors). The knob
 * `dims` reads every v-th dimension of each dot product only. */

int nearest(const float *words, const int *start, int facts, int dim, const float *query,
            int terms) {
  int best = 0;
  float best_score = -1e30f;
  for (int f = 0; f < facts; f++) {
    float score = 0.0f;
    for (int q = 0; q < terms; q++) {
      float most = -1.0f;
      for (int w = start[f]; w < start[f + 1]; w++) {
        float dot = 0.0f;
        #pragma approx loop_perforate knob(dims) values(1, 2, 4, 8, 16, 32)
        for (int j = 0; j < dim; j++) dot += words[w * dim + j] * query[q * dim + j];
        if (dot > most) most = dot;
      }
      score += most;
    }
    if (score > best_score) {
      best_score = score;
      best = f;
    }
  }
  return best;
}
