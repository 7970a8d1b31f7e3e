/* User runtime library of kb.c: input loading, the probe layout, and the state its dynamic
 * knobs decide on. Compiled by the system C compiler and linked with the kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The states of kb.c's dynamic knobs: top-score margins from two cheap first passes.
 *
 * cluster_margin (of `probe`): the first pass scores the query against the cluster
 * centroids; the margin between the best and the 4th best centroid similarity, x250,
 * clamped to 0..100. A query with one clearly nearest cluster loses little when only the
 * nearest clusters are probed; one between several clusters loses its neighbours. */
int cluster_margin(const float *csim, const int *order, int n_clusters) {
  if (n_clusters < 4) return 0;
  int margin = (int)((csim[order[0]] - csim[order[3]]) * 250.0f);
  return margin < 0 ? 0 : (margin > 100 ? 100 : margin);
}

/* score_margin (of `dims` and `precision`): the second pass scans the nearest cluster only,
 * in int8; the margin between its best and 10th best score, x300, clamped to 0..100. Widely
 * spread leaders keep their order under a coarser dot product; bunched ones swap. */
int score_margin(const signed char *qq, const signed char *doc_q8, const float *doc_scale,
                 float query_scale, int lo, int hi, int dim) {
  float best[10];
  int found = 0;
  for (int i = lo; i < hi; i++) {
    int acc = 0;
    for (int k = 0; k < dim; k++) acc += qq[k] * doc_q8[(size_t)i * dim + k];
    float s = (float)acc * query_scale * doc_scale[i];
    if (found == 10 && s <= best[9]) continue;
    int j = found < 10 ? found++ : 9;
    while (j > 0 && best[j - 1] < s) {
      best[j] = best[j - 1];
      j--;
    }
    best[j] = s;
  }
  if (found < 2) return 100;           /* nothing to compare: any order is kept */
  int margin = (int)((best[0] - best[found - 1]) * 300.0f);
  return margin < 0 ? 0 : (margin > 100 ? 100 : margin);
}

/* rank_at[p] = which rank of the clusters (by similarity to the query) probe position p
 * visits, laid out so that positions 0, v, 2v, ... are ranks 0 .. n/v - 1 for v = 1, 2, 4,
 * 8: perforating the probe loop by v probes the n/v most similar clusters. n must be a
 * multiple of 8. */
void stride_layout(int n, int *rank_at) {
  int rank = 0;
  for (int p = 0; p < n; p += 8) rank_at[p] = rank++;
  for (int v = 4; v >= 1; v /= 2)
    for (int p = v; p < n; p += 2 * v) rank_at[p] = rank++;
}

static void *read_array(FILE *f, size_t size, size_t count, int *ok) {
  void *p = malloc(size * (count ? count : 1));
  if (!p || fread(p, size, count, f) != count) *ok = 0;
  return p;
}

/* kb.bin (see gen.py). Returns 1 on success. */
int load_kb(const char *path, int *head, int **cluster_start, int **doc_id, float **centroid,
            float **doc, float **doc_scale, signed char **doc_q8, float **query,
            float **query_scale, signed char **query_q8) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  int ok = fread(head, sizeof(int), 4, f) == 4 && head[0] > 0 && head[1] > 0 && head[2] > 0;
  if (ok) {
    size_t n = head[0], dim = head[1], clusters = head[2], queries = head[3];
    *cluster_start = read_array(f, sizeof(int), clusters + 1, &ok);
    *doc_id = read_array(f, sizeof(int), n, &ok);
    *centroid = read_array(f, sizeof(float), clusters * dim, &ok);
    *doc = read_array(f, sizeof(float), n * dim, &ok);
    *doc_scale = read_array(f, sizeof(float), n, &ok);
    *doc_q8 = read_array(f, 1, n * dim, &ok);
    *query = read_array(f, sizeof(float), queries * dim, &ok);
    *query_scale = read_array(f, sizeof(float), queries, &ok);
    *query_q8 = read_array(f, 1, queries * dim, &ok);
  }
  fclose(f);
  return ok;
}

/* A query batch (see gen.py): the path of kb.bin, then article ids. Returns how many. */
int load_batch(const char *path, char *kb, int kb_size, int **ids) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int n = -1;
  if (!fgets(kb, kb_size, f) || fscanf(f, "%d", &n) != 1 || n < 0) {
    fclose(f);
    return -1;
  }
  kb[strcspn(kb, "\n")] = '\0';
  *ids = malloc(sizeof(int) * (n + 1));
  for (int i = 0; i < n; i++)
    if (fscanf(f, "%d", &(*ids)[i]) != 1) n = -1;
  fclose(f);
  return n;
}
