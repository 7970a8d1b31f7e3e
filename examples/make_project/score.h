#ifndef SCORE_H
#define SCORE_H

double energy(const double *y, int n);

#endif
