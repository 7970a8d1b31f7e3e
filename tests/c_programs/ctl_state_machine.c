/* A tokenizer as a state machine: `switch` inside a loop, where `break` leaves the switch
   and `continue` the loop iteration; fallthrough, `default` between cases, a nested switch. */
#include <stdio.h>

enum { START, NUMBER, WORD, SPACE };

int classify(int ch) {
  switch (ch) {
  case ' ':
  case '\t':
  case '\n':
    return SPACE;
  case '0': case '1': case '2': case '3': case '4':
  case '5': case '6': case '7': case '8': case '9':
    return NUMBER;
  default:
    return WORD;
  }
}

int weight(int kind, int len) {
  int w = 0;
  switch (kind) {
  case NUMBER:
    w += 100;  /* falls through */
  default:
    w += len;
    break;
  case SPACE:
    w = -1;
  }
  return w;
}

int main(void) {
  char text[] = "let x1 = 42 + y7\tcount 3 9 words\nend 1000";
  int state = START, len = 0, numbers = 0, words = 0, score = 0, value = 0, total = 0;
  for (int i = 0;; i++) {
    int ch = text[i];
    int kind = ch == 0 ? SPACE : classify(ch);
    switch (state) {
    case START:
    case SPACE:
      if (kind == SPACE) {
        if (ch == 0)
          break;
        continue;
      }
      state = kind;
      len = 1;
      value = kind == NUMBER ? ch - '0' : 0;
      continue;
    case NUMBER:
      if (kind == NUMBER) {
        value = value * 10 + (ch - '0');
        len++;
        continue;
      }
      numbers++;
      total += value;
      score += weight(NUMBER, len);
      break;
    default:
      switch (kind) {
      case WORD:
      case NUMBER:
        len++;
        continue;
      }
      words++;
      score += weight(WORD, len);
    }
    state = kind == SPACE ? START : kind;
    len = 1;
    if (ch == 0)
      break;
  }
  printf("numbers %d (sum %d) words %d score %d\n", numbers, total, words, score);
  int hist[4] = {0, 0, 0, 0};
  // @approx loop_perforate knob(hist) values(1:2)
  for (int i = 0; i < 40; i++)
    hist[classify(text[i])]++;
  printf("classes %d %d %d %d\n", hist[0], hist[1], hist[2], hist[3]);
  return 0;
}
