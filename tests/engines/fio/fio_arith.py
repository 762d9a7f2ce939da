"""fio's percentile threshold computed by C, the way fio's stat.c computes it, for independent checks.

The expression ``(long double) p / 100.0 * nr`` is compiled with ``-ffast-math`` (as fio's
Makefile builds it) and run natively, so the tests check diskbench's Python emulation against
the machine's own extended-precision arithmetic, not against itself.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

C_SOURCE = r"""
#include <stdio.h>
#include <stdlib.h>
/* The rank fio's calc_clat_percentiles needs: the smallest running sum >= p/100*nr. */
int main(int argc, char **argv) {
    double p = strtod(argv[1], NULL);
    unsigned long long nr = strtoull(argv[2], NULL, 10);
    volatile unsigned long long sum = 0;
    while (!(sum >= ((long double) p / 100.0 * nr)))
        sum++;
    printf("%llu\n", sum);
    return 0;
}
"""

needs_cc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed (fio's arithmetic in C)")


@functools.lru_cache(maxsize=1)
def _binary() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fio-arith-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "rank.c").write_text(C_SOURCE)
    subprocess.run(["gcc", "-O2", "-ffast-math", "-o", str(folder / "rank"), str(folder / "rank.c")], check=True)
    return folder / "rank"


@functools.lru_cache(maxsize=4096)
def fio_rank(p: float, n: int) -> int:
    """The count of samples fio's percentile ``p`` needs among ``n`` (at least 1)."""
    out = subprocess.run([str(_binary()), repr(p), str(n)], capture_output=True, text=True, check=True)
    return max(1, int(out.stdout))
