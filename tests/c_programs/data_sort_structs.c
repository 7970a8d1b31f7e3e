// An array of structs sorted by a key with struct copies (insertion sort).
#include <stdio.h>

struct record {
  char tag;
  long key;
  double weight;
};

static void sort(struct record *r, int n) {
  for (int i = 1; i < n; i++) {
    struct record cur = r[i];
    int j = i - 1;
    while (j >= 0 && r[j].key > cur.key) {
      r[j + 1] = r[j];
      j--;
    }
    r[j + 1] = cur;
  }
}

int main(void) {
  struct record rs[10];
  for (int i = 0; i < 10; i++) {
    rs[i].tag = (char)('a' + i);
    rs[i].key = (i * 37) % 11 - 4;
    rs[i].weight = i * 0.5;
  }
  sort(rs, 10);
  double total = 0.0;
  // @approx loop_perforate
  for (int i = 0; i < 10; i++)
    total += rs[i].weight * (double)rs[i].key;
  for (struct record *p = rs; p < rs + 10; p++)
    printf("%c:%ld ", p->tag, p->key);
  printf("\ntotal %.2f\n", total);
  return 0;
}
