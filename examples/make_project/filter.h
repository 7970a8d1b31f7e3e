#ifndef FILTER_H
#define FILTER_H

void fir(const double *x, double *y, int n, int taps);

#endif
