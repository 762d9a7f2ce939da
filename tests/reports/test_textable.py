"""Terminal tables fit 80, 100 and 160 columns without cutting a number."""

from __future__ import annotations

import re

import pytest

from diskbench.model import PERCENTILES, DirectionResult, Latency, pkey
from diskbench.reports.formats import to_table
from diskbench.reports.textable import Col, TextTable
from diskbench.store import StoredResult
from diskbench.units import latency, sig3


@pytest.mark.parametrize(("us", "text"), [
    (56, "56.0 µs"), (1290, "1.29 ms"), (166_700, "167 ms"), (741.3760000000001, "741 µs"),
    (999.7, "1.00 ms"), (0.5, "500 ns"), (12_345_678, "12.3 s"), (None, "-"),
])
def test_latency_reads_in_three_significant_figures(us: float | None, text: str) -> None:
    assert latency(us) == text


def test_sig3() -> None:
    assert [sig3(v) for v in (1.0, 9.996, 12.34, 123.4, 1234)] == ["1.00", "10.0", "12.3", "123", "1230"]


def _stored(host: str, target: str, workload: str, iops: float) -> StoredResult:
    pct = {pkey(p): 50.0 + p * 1000 for p in PERCENTILES}
    clat = Latency(min=1, mean=60, max=200_000, stdev=5, samples=10, percentiles=pct)
    d = DirectionResult("write", iops, iops * 8192, 10, 10, 5.0, clat)
    return StoredResult("r", f"{host}/{target}/{workload}", workload, target, host, "fio", "3.33", 4, d)


RESULTS = [_stored("root@10.0.0.1", "striped-nvme", "randwrite-8k-qd256-numjobs4", 1_234_567.89),
           _stored("root@10.0.0.1", "striped-nvme", "sync", 16_734),
           _stored("root@10.0.0.2", "temp", "sync", 108_123)]
RUN = {"id": "20261122-021051-5009", "profile": "local", "status": "completed", "facts": {"hostname": "vm"}}


@pytest.mark.parametrize("width", [80, 100, 160])
def test_result_table_fits_and_never_cuts_a_number(width: int) -> None:
    text = to_table(RUN, RESULTS).render(width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    for number in ("1,234,568", "16,734", "108,123"):
        assert number in text
    # only the name column may shorten: nothing after it is ever cut
    for line in lines:
        assert "…" not in re.sub(r"^\s*\S+\s", "", line), line
    # rows sit under one line per machine and target, not repeated on every row
    assert text.count("root@10.0.0.1:striped-nvme") == 1 and "root@10.0.0.2:temp" in text
    if width >= 100:
        assert "not shown" not in text and "p95" in text
    else:
        assert "not shown at 80 columns: p95, p90" in text


def test_percentiles_drop_in_order_and_are_named() -> None:
    table = to_table(RUN, RESULTS)
    assert table.dropped(160) == []
    assert table.dropped(80)[:1] == ["p95"]
    narrow = table.dropped(60)
    assert narrow[:3] == ["p95", "p90", "p99.99"]
    assert "p99" not in table.dropped(70)


def test_text_shortens_before_numbers_and_columns_drop() -> None:
    t = TextTable([Col("name", shrink=True, min_width=4), Col("value", right=True), Col("extra", drop=1)])
    t.add_row("a-very-long-workload-name-indeed", "123,456,789", "x")
    out = t.render(30)
    assert "123,456,789" in out and "a-very" in out and "…" in out
    assert "not shown at 30 columns: extra" in out
    assert max(len(line) for line in out.splitlines()) <= 30


@pytest.mark.parametrize("width", [80, 100, 160])
def test_plan_fits_and_says_each_machines_storage_once(tmp_path: object, width: int) -> None:
    from ..conftest import diskbench

    out = diskbench("plan", "--profile", "d8ds-premium", env={"COLUMNS": str(width)})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= width
    assert out.stdout.count("Premium_LRS 1024G cache=ReadOnly") == 1  # the four-disk storage, once
    assert "10m45s" in out.stdout and " 30g " in out.stdout and "5 job(s)" in out.stdout  # numbers whole
    e8 = diskbench("plan", "--profile", "e8-family", env={"COLUMNS": str(width)}).stdout
    assert max(len(line) for line in e8.splitlines()) <= width
    assert e8.count("Standard_L8s_v2;") == 1 and "14 job(s)" in e8


@pytest.mark.parametrize("width", [80, 100, 160])
def test_sizes_never_cut_a_number(width: int) -> None:
    from ..conftest import diskbench

    out = diskbench("sizes", env={"COLUMNS": str(width)})
    assert out.returncode == 0, out.stderr
    assert max(len(line) for line in out.stdout.splitlines()) <= width
    assert "77,000" in out.stdout and "…" not in out.stdout
