"""Miscompiles that real C projects (bench/real_c.py, docs/real-c.md) found with
`-fapprox-mlir=all`, each reduced to a small program built with every function through MLIR
and run against `cc -O2`."""

import re
from pathlib import Path

from conftest import assert_same_as_cc_through_mlir

# lz4 1.10.0's programs/lz4io.c passes its resources (cRess_t, dRess_t: buffers, FILE *,
# thread pools) by value, in memory. The call passed a pointer to a copy, but only the
# callee's declaration said `byval`: LLVM reads the attribute at the call, so `opt` took the
# copy for memory nobody reads and dropped the stores that filled it; the callee read stack
# garbage (`lz4` aborted in pthread_mutex_lock freeing its thread pools).
RESOURCES = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef struct { char *src; size_t srcSize; char *dst; size_t dstSize; FILE *out; } Ress;

static Ress create(size_t n) {
    Ress r = {malloc(n), n, malloc(2 * n), 2 * n, stdout};
    return r;
}
static void release(Ress r) {
    fprintf(r.out, "release %zu %zu\n", r.srcSize, r.dstSize);
    free(r.src);
    free(r.dst);
}
long digest(Ress r, int i);  /* lib.c: a declaration here */

int main(void) {
    Ress r = create(16);
    long s = 0;
    memset(r.src, 'a', r.srcSize);
    for (int i = 0; i < 3; i++)
        s += digest(r, i);
    printf("%ld\n", s);
    release(r);
    return 0;
}
"""
RESOURCES_LIB = r"""#include <stdio.h>
typedef struct { char *src; size_t srcSize; char *dst; size_t dstSize; FILE *out; } Ress;
long digest(Ress r, int i) { return (long)(r.srcSize + r.dstSize) * r.src[i] + i; }
"""


def test_lz4io_struct_by_value_in_memory_reaches_the_callee(tmp_path: Path):
    out = assert_same_as_cc_through_mlir({"t.c": RESOURCES, "lib.c": RESOURCES_LIB}, tmp_path,
                                         "-O2")
    assert out == "13971\nrelease 16 32\n"
    calls = re.findall(r"call \w+ @(?:digest|release)\((.*)\)", (tmp_path / "t.ll").read_text())
    assert len(calls) == 2 and all(a.startswith("ptr byval(") for a in calls), calls
