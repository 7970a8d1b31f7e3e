// A singly linked list built with malloc, walked, reversed and freed.
#include <stdio.h>
#include <stdlib.h>

struct node {
  int value;
  struct node *next;
};

static struct node *push(struct node *head, int value) {
  struct node *n = (struct node *)malloc(sizeof(struct node));
  n->value = value;
  n->next = head;
  return n;
}

static struct node *reverse(struct node *head) {
  struct node *prev = NULL;
  while (head != NULL) {
    struct node *next = head->next;
    head->next = prev;
    prev = head;
    head = next;
  }
  return prev;
}

int main(void) {
  struct node *head = NULL;
  #pragma approx loop_perforate
  for (int i = 0; i < 12; i++)
    head = push(head, i * i - 3 * i);
  head = reverse(head);
  long sum = 0;
  for (struct node *p = head; p != NULL; p = p->next) {
    sum += p->value;
    printf("%d%s", p->value, p->next ? "," : "\n");
  }
  while (head != NULL) {
    struct node *dead = head;
    head = head->next;
    free(dead);
  }
  printf("sum %ld empty %d\n", sum, !head);
  return 0;
}
