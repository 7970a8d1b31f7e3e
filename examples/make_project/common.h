/* Shared by every translation unit: sizes and the checksum helper. */
#ifndef COMMON_H
#define COMMON_H

#define N_SAMPLES 4096
#define N_TAPS 32

double checksum(const double *x, int n);

#endif
