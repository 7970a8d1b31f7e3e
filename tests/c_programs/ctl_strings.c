/* String processing with `continue` and `break`: word counts, vowel statistics that skip
   non-letters, a string comparison that returns early, and run-length encoding. */
#include <stdio.h>

int is_letter(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

int count_words(const char *s) {
  int words = 0, inside = 0;
  for (int i = 0; s[i] != 0; i++) {
    if (!is_letter(s[i])) {
      inside = 0;
      continue;
    }
    if (inside)
      continue;
    inside = 1;
    words++;
  }
  return words;
}

int vowels(const char *s, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    int c = s[i] | 32;
    if (!is_letter(s[i]))
      continue;
    switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u':
      v++;
    }
  }
  return v;
}

int compare(const char *a, const char *b) {
  int i = 0;
  while (1) {
    if (a[i] != b[i])
      return a[i] < b[i] ? -1 : 1;
    if (a[i] == 0)
      return 0;
    i++;
  }
}

int run_lengths(const char *s, int *out) {
  int runs = 0, i = 0;
  while (s[i] != 0) {
    int j = i;
    while (s[j] == s[i])
      j++;
    out[runs++] = j - i;
    if (runs == 16)
      break;
    i = j;
  }
  return runs;
}

int main(void) {
  char text[] = "The quick brown fox -- jumps over 2 lazy dogs; aaa bbb!";
  char same[] = "The quick brown fox";
  char other[] = "The quick red fox";
  int n = 0;
  while (text[n] != 0)
    n++;
  int upper = 0;
  // @approx loop_perforate knob(upper) values(1:2)
  for (int i = 0; i < n; i++)
    upper += text[i] >= 'A' && text[i] <= 'Z';
  printf("length %d, %d words, %d vowels, %d upper\n", n, count_words(text), vowels(text, n),
         upper);
  printf("compare %d %d %d\n", compare(same, other), compare(other, same), compare(same, same));
  char rle[] = "aaabccddddde";
  int runs[16];
  int r = run_lengths(rle, runs);
  printf("%d runs:", r);
  for (int i = 0; i < r; i++)
    printf(" %d", runs[i]);
  printf("\n");
  return 0;
}
