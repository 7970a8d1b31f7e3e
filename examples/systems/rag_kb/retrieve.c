/* The C half of rag_kb's retrieval, in the shared library the Python pipeline loads once
 * (ctypes): vector search over MiniLM embeddings of the Wikipedia summaries, by the search of
 * examples/kernels/kb/kb.c, linked in with its knobs probe (corpus subsetting: the nearest
 * n/v clusters), dims (dot-product perforation over principal axes) and precision (int8 dot),
 * all dynamic on the query's top-score margins. Context selection is ../common/select.c.
 *
 *   kb_load(path)                                  the knowledge base (kb.bin), once per copy
 *   kb_retrieve(q, qq, scale, k, out_ids, out_scores)
 *                                                  the k (<= 10) nearest summaries of a query
 *                                                  (rotated as kb.bin, and its int8 copy) */
#include <stdlib.h>
#include "approxrt.h"

#define SEARCH_K 10         /* kb.c's TOP_K */
#define MAX_CLUSTERS 1024   /* kb.c's */

/* examples/kernels/kb: kb.c's search, state.c's loading and probe layout. */
int search(const float *q, const signed char *qq, float query_scale, int dim, int n_clusters,
           const int *cluster_start, const int *doc_id, const float *centroid,
           const float *doc, const float *doc_scale, const signed char *doc_q8,
           const int *rank_at, int *top);
void stride_layout(int n, int *rank_at);
int load_kb(const char *path, int *head, int **cluster_start, int **doc_id, float **centroid,
            float **doc, float **doc_scale, signed char **doc_q8, float **query,
            float **query_scale, signed char **query_q8);

static int head[4];
static int *cluster_start, *doc_id, *position;
static float *centroid, *doc, *doc_scale, *query, *query_scale;
static signed char *doc_q8, *query_q8;
static int rank_at[MAX_CLUSTERS];

/* Returns the number of documents, or -1 when the knowledge base cannot be read. */
int kb_load(const char *path) {
  if (!load_kb(path, head, &cluster_start, &doc_id, &centroid, &doc, &doc_scale, &doc_q8,
               &query, &query_scale, &query_q8) ||
      head[2] > MAX_CLUSTERS || head[2] % 8 != 0)
    return -1;
  stride_layout(head[2], rank_at);
  position = malloc(sizeof(int) * head[0]);     /* document id -> its row */
  if (!position) return -1;
  for (int i = 0; i < head[0]; i++) position[doc_id[i]] = i;
  return head[0];
}

/* The tuner loads a copy of this library per configuration and unloads the old ones: what
 * kb_load read goes with its copy (a copy holds the whole knowledge base, ~20 MB). */
__attribute__((destructor)) static void kb_unload(void) {
  free(cluster_start), free(doc_id), free(position), free(centroid), free(doc);
  free(doc_scale), free(doc_q8), free(query), free(query_scale), free(query_q8);
}

/* The k best documents of a query, best first, with their exact cosine similarity (the
 * selection's state, whatever the search's knobs did to the ranking). Returns how many. */
int kb_retrieve(const float *q, const signed char *qq, float query_scale, int k, int *out_ids,
                float *out_scores) {
  int top[SEARCH_K];
  int dim = head[1];
  int found = search(q, qq, query_scale, dim, head[2], cluster_start, doc_id, centroid, doc,
                     doc_scale, doc_q8, rank_at, top);
  if (found > k) found = k;
  for (int i = 0; i < found; i++) {
    const float *x = doc + (size_t)position[top[i]] * dim;
    float s = 0.0f;
    for (int j = 0; j < dim; j++) s += q[j] * x[j];
    out_ids[i] = top[i];
    out_scores[i] = s;
  }
  return found;
}
