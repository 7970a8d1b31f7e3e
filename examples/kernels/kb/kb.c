/* Vector knowledge-base ranking: brute-force cosine top-10 of a query's MiniLM embedding
 * over the embeddings of the 10,033 Wikipedia summaries (unit vectors, so cosine = dot).
 * The documents come grouped by k-means cluster; an exact search probes every cluster.
 *
 * Knobs, all dynamic over a top-score margin of the query from a cheap first pass (state.c):
 *   probe      perforate the probe loop: with the clusters visited in the layout of
 *              state.c's stride_layout, probing every v-th position probes the n/v clusters
 *              nearest to the query (a cluster pre-filter). State: cluster_margin, from the
 *              query's similarities to the cluster centroids.
 *   dims       perforate the dot-product loop: the dimensions are principal axes laid out
 *              by gen.py so that every v-th one is the strongest 384/v. State: score_margin,
 *              from an int8 scan of the nearest cluster.
 *   precision  substitute an int8 dot product over pre-quantised vectors for the float one.
 *              State: score_margin. */
#include <stdio.h>
#include <stdlib.h>
#include "approxrt.h"

#define TOP_K 10
#define MAX_CLUSTERS 1024

/* User runtime library (state.c). */
int cluster_margin(const float *csim, const int *order, int n_clusters);
int score_margin(const signed char *qq, const signed char *doc_q8, const float *doc_scale,
                 float query_scale, int lo, int hi, int dim);
void stride_layout(int n, int *rank_at);
int load_kb(const char *path, int *head, int **cluster_start, int **doc_id, float **centroid,
            float **doc, float **doc_scale, signed char **doc_q8, float **query,
            float **query_scale, signed char **query_q8);
int load_batch(const char *path, char *kb, int kb_size, int **ids);

float dot_int8(const float *q, const float *x, const signed char *qq, const signed char *xq,
               float scale, int dim, int margin) {
  int acc = 0;
  for (int k = 0; k < dim; k++) acc += (int)qq[k] * (int)xq[k];
  return scale * (float)acc;
}

// @approx func_substitute knob(precision) variants(dot_int8) state(margin) thresholds(1) range(0:100)
float dot(const float *q, const float *x, const signed char *qq, const signed char *xq,
          float scale, int dim, int margin) {
  float acc = 0.0f;
  #pragma approx loop_perforate knob(dims) values(1, 2, 4, 8) state(margin) thresholds(1) \
          range(0:100)
  for (int k = 0; k < dim; k++) acc += q[k] * x[k];
  return acc;
}

/* Insert (id, s) into the sorted top list of `found` entries; returns the new count. */
int insert(int *top, float *top_score, int found, int id, float s) {
  if (found == TOP_K && s <= top_score[TOP_K - 1]) return found;
  int i = found < TOP_K ? found++ : TOP_K - 1;
  while (i > 0 && top_score[i - 1] < s) {
    top_score[i] = top_score[i - 1];
    top[i] = top[i - 1];
    i--;
  }
  top_score[i] = s;
  top[i] = id;
  return found;
}

/* The TOP_K documents nearest to one query, best first; returns how many were found. */
int search(const float *q, const signed char *qq, float query_scale, int dim, int n_clusters,
            const int *cluster_start, const int *doc_id, const float *centroid,
            const float *doc, const float *doc_scale, const signed char *doc_q8,
            const int *rank_at, int *top) {
  float csim[MAX_CLUSTERS];
  int order[MAX_CLUSTERS];
  float top_score[TOP_K];
  for (int c = 0; c < n_clusters; c++) {
    float s = 0.0f;
    for (int k = 0; k < dim; k++) s += q[k] * centroid[c * dim + k];
    csim[c] = s;
    order[c] = c;
  }
  for (int r = 0; r < n_clusters; r++) {        /* clusters by decreasing similarity */
    int best = r;
    for (int j = r + 1; j < n_clusters; j++)
      if (csim[order[j]] > csim[order[best]]) best = j;
    int t = order[r];
    order[r] = order[best];
    order[best] = t;
  }
  int margin = score_margin(qq, doc_q8, doc_scale, query_scale, cluster_start[order[0]],
                            cluster_start[order[0] + 1], dim);
  int found = 0;
  #pragma approx loop_perforate knob(probe) values(1, 2, 4, 8) \
          state(cluster_margin(csim, order, n_clusters)) thresholds(1) range(0:100)
  for (int p = 0; p < n_clusters; p++) {
    int c = order[rank_at[p]];
    for (int i = cluster_start[c]; i < cluster_start[c + 1]; i++) {
      float s = dot(q, doc + i * dim, qq, doc_q8 + i * dim, query_scale * doc_scale[i], dim,
                    margin);
      found = insert(top, top_score, found, doc_id[i], s);
    }
  }
  return found;
}

#ifndef APPROX_NO_MAIN  /* a library holding several kernels leaves their mains out */
int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: kb QUERIES\n");
    return 1;
  }
  char path[4096];
  int *ids;
  int n_queries = load_batch(argv[1], path, (int)sizeof path, &ids);
  int head[4];
  int *cluster_start, *doc_id;
  float *centroid, *doc, *doc_scale, *query, *query_scale;
  signed char *doc_q8, *query_q8;
  if (n_queries < 0 || !load_kb(path, head, &cluster_start, &doc_id, &centroid, &doc,
                                &doc_scale, &doc_q8, &query, &query_scale, &query_q8) ||
      head[2] > MAX_CLUSTERS || head[2] % 8 != 0) {
    fprintf(stderr, "kb: cannot read %s or its knowledge base\n", argv[1]);
    return 1;
  }
  int dim = head[1], n_clusters = head[2];
  int rank_at[MAX_CLUSTERS];
  stride_layout(n_clusters, rank_at);
  int *top = malloc(sizeof(int) * TOP_K * (n_queries + 1));
  int *found = malloc(sizeof(int) * (n_queries + 1));
  approx_roi_begin();
  for (int i = 0; i < n_queries; i++) {
    int a = ids[i];
    found[i] = search(query + a * dim, query_q8 + a * dim, query_scale[a], dim, n_clusters, cluster_start,
           doc_id, centroid, doc, doc_scale, doc_q8, rank_at, top + TOP_K * i);
  }
  approx_roi_end();
  for (int i = 0; i < n_queries; i++) {
    for (int j = 0; j < found[i]; j++) printf(j ? " %d" : "%d", top[TOP_K * i + j]);
    printf("\n");
  }
  return 0;
}
#endif
