"""``diskbench import`` of files that are not what fio or DiskSpd write (issue 24, items 12-14).

Each case runs the real CLI twice, without and with a store: the file is refused with exit 2 (a
bad input file, in the exit-code table) and one line naming the file and what is wrong, never an
internal error (exit 70) or a traceback, and a refused file leaves no run and no kept copy
behind. The files are the real fixtures with one figure changed; each test says which.
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path

import pytest

from diskbench import importer
from diskbench.cli import main
from diskbench.store import Store

from .conftest import FIO_FIXTURES, FIXTURES, assert_no_bug, diskbench

BAD_INPUT = 2  # the exit-code table: bad input (arguments, a profile, a file to import)
VC_XML = FIXTURES / "diskspd" / "windows" / "xml" / "virtualclient_Results_DiskSpd_Xml_v2.0.21a_L_D.xml"
VC_TEXT = FIXTURES / "diskspd" / "windows" / "text" / "virtualclient_Results_DiskSpd_Text_v2.0.21a_L_D.txt"
JSONPLUS = FIO_FIXTURES / "randread-4k-numjobs4-group-reporting.jsonplus.json"
FORTY_DIGITS = "1234567890" * 4


def _refused(path: Path, tmp_path: Path, *expected: str) -> str:
    """Import ``path`` without and with a store: exit 2 and one line; returns the line."""
    db = tmp_path / "store" / "db.sqlite"
    line = ""
    for store in ([], ["--no-store"]):
        out = diskbench("import", str(path), "--format", "json", *store, db=db)
        assert out.returncode == BAD_INPUT, out.stderr
        assert out.stdout == "" and out.stderr.count("\n") == 1, out.stderr
        line = out.stderr
        assert line.startswith(f"error: {path}"), line
        for text in expected:
            assert text in line, line
    if db.exists():  # a refused file is no run, and keeps no copy
        assert Store(db).list_runs() == []
    assert not any((tmp_path / "store").rglob("*.gz"))
    return line


def _edited(tmp_path: Path, source: Path, old: str, new: str, name: str) -> Path:
    text = source.read_text()
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


# --- DiskSpd XML: every number checked as fio's are -------------------------------------------
@pytest.mark.parametrize(("old", "new", "expected"), [
    ("<TestTimeSeconds>120.01<", "<TestTimeSeconds>NaN<", "<TestTimeSeconds> is 'NaN', not a finite number"),
    ("<TestTimeSeconds>120.01<", "<TestTimeSeconds>inf<", "<TestTimeSeconds> is 'inf', not a finite number"),
    ("<ReadBytes>152215552<", f"<ReadBytes>{FORTY_DIGITS}<", "<ReadBytes> is 123456789012345678901234567890..."),
    ("<ReadBytes>152215552<", "<ReadBytes>-100<", "<ReadBytes> is negative (-100)"),
    ("<AverageReadMilliseconds>2.477<", "<AverageReadMilliseconds>NaN<", "<AverageReadMilliseconds> is 'NaN'"),
    ("<AverageReadMilliseconds>2.477<", "<AverageReadMilliseconds>1e999<", "'1e999', not a finite number"),
    ("<IOCount>52915<", "<IOCount>52916<", "<IOCount> is 52916, not the sum of its read and write figures"),
    ("<ReadCount>37162<", "<ReadCount>0<", "<ReadCount> is 0 but <ReadBytes> is 152215552"),
    ("<ReadMilliseconds>0.094<", "<ReadMilliseconds>94<", "the latency percentiles fall"),
    ('Read="319"', 'Read="NaN"', "<Iops> <Bucket> Read is 'NaN', not a finite number"),
], ids=["time-nan", "time-inf", "bytes-40-digits", "bytes-negative", "avg-nan", "avg-1e999", "iocount-sum",
        "bytes-without-count", "percentiles-fall", "iops-bucket-nan"])
def test_diskspd_xml_numbers(tmp_path: Path, old: str, new: str, expected: str) -> None:
    _refused(_edited(tmp_path, VC_XML, old, new, "results.xml"), tmp_path, expected)


# --- DiskSpd text: the same checks, and the printed rates against the counts --------------------
@pytest.mark.parametrize(("old", "new", "expected"), [
    ("     0 |       146169856 |", f"     0 | {FORTY_DIGITS} |", "'Total IO' section: bytes is 1234567890"),
    ("actual test time:       30.01s", f"actual test time:       {'9' * 400}.00s", "not a finite number"),
    ("    1189.03 |    0.840 |     129.18 |     1.051 | diskspd.dat",
     "    9999.03 |    0.840 |     129.18 |     1.051 | diskspd.dat", "I/O per s"),
    ("   50th |      0.232 |", "   50th |      0.132 |", "latency distribution row '50th'"),
    ("     0 |       146169856 |        35686 |", "     0 |       146169856 |        35687 |",
     "thread 0 of the 'Total IO' section: ios 35687 is not the read and write rows'"),
    ("avg.|   0.82%|", f"avg.|   {'9' * 400}.82%|", "the CPU 'avg.' row is '999"),
], ids=["bytes-40-digits", "time-400-digits", "iops-edited", "percentile-falls", "total-not-a-sum", "cpu-400-digits"])
def test_diskspd_text_numbers(tmp_path: Path, old: str, new: str, expected: str) -> None:
    expected = "iops 9999.03 is not its count over the test time" if expected == "I/O per s" else expected
    _refused(_edited(tmp_path, VC_TEXT, old, new, "results.txt"), tmp_path, expected)


# --- fio: bins fio cannot write, and rates that do not follow from the counts -------------------
def _fio_doc(name: str = JSONPLUS.name) -> dict[str, object]:
    text = (FIO_FIXTURES / name).read_text()
    return json.loads(text[text.index("{"):text.rindex("}") + 1])  # type: ignore[no-any-return]


def _write(tmp_path: Path, doc: object, name: str = "fio.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2))
    return path


def _read_dir(doc: dict[str, object]) -> dict[str, object]:
    return doc["jobs"][0]["read"]  # type: ignore[index, no-any-return]


def test_fio_bin_key_beyond_any_latency_fio_counts(tmp_path: Path) -> None:
    doc = _fio_doc()
    clat = _read_dir(doc)["clat_ns"]
    clat["bins"]["1" + "0" * 40] = 1  # type: ignore[index]
    clat["N"] += 1  # type: ignore[index]
    _refused(_write(tmp_path, doc), tmp_path, "read.clat_ns.bins key is 1e+40, beyond any latency fio's 64-bit")


def test_fio_bin_keys_are_fios_bucket_midpoints_below_the_max(tmp_path: Path) -> None:
    doc = _fio_doc()
    bins = _read_dir(doc)["clat_ns"]["bins"]  # type: ignore[index]
    key, value = next(iter(bins.items()))
    bins[str(int(key) + 1)] = bins.pop(key)
    _refused(_write(tmp_path, doc), tmp_path, f"bins key is {int(key) + 1}, which is not one of fio's latency bucket")
    doc = _fio_doc()
    clat = _read_dir(doc)["clat_ns"]
    clat["bins"]["17112760320"] = 1  # type: ignore[index]  # fio's last bucket (17.1 s); max is 169 ms
    clat["N"] += 1  # type: ignore[index]
    _refused(_write(tmp_path, doc), tmp_path, "above the bucket of the largest latency fio measured")


@pytest.mark.parametrize(("value", "expected"), [
    (10**40, "read.clat_ns.percentile.99.990000 is larger than any counter fio keeps (1e+40)"),
    (17112760320, "read.clat_ns.percentile['99.990000'] is 17112760320, above the bucket of the largest latency"),
    (74973185, "read.clat_ns.percentile['99.990000'] is 74973185, which is not one of fio's latency bucket values"),
], ids=["1e40", "last-bucket", "between-buckets"])
def test_fio_percentiles_are_buckets_up_to_the_max(tmp_path: Path, value: int, expected: str) -> None:
    doc = _fio_doc("randread-4k-qd16.json")  # p99.99 74973184 ns, max 74792261 ns (its bucket's midpoint)
    _read_dir(doc)["clat_ns"]["percentile"]["99.990000"] = value  # type: ignore[index]
    _refused(_write(tmp_path, doc), tmp_path, expected)


def test_fio_zero_runtime_with_iops(tmp_path: Path) -> None:
    doc = _fio_doc("randread-4k-qd16.json")
    read = _read_dir(doc)
    read["runtime"], read["iops"] = 0, 11181.0
    _refused(_write(tmp_path, doc), tmp_path, "I/Os", "in a runtime of 0 ms")


@pytest.mark.parametrize(("key", "delta", "expected"), [
    ("iops", 1.0, "read.iops is 36061.313229, but fio's 108217 I/Os in 3001 ms are 36060.313229 IOPS"),
    ("bw_bytes", 2.0, "read.bw_bytes is 147724883, but fio's 443322368 bytes in 3001 ms are 147724881.0 B/s"),
    ("bw", 1.0, "read.bw is 144263, but fio's 443322368 bytes in 3001 ms are 144262.6 KiB/s"),
    ("total_ios", 10, "read.iops is 36060.313229, but fio's 108227 I/Os"),
])
def test_fio_rates_follow_from_the_counts(tmp_path: Path, key: str, delta: float, expected: str) -> None:
    doc = _fio_doc("randread-4k-qd16.json")
    _read_dir(doc)[key] += delta  # type: ignore[operator]
    _refused(_write(tmp_path, doc), tmp_path, expected)


def test_unicode_digits_are_not_numbers(tmp_path: Path) -> None:
    """``"²".isdigit()`` is true and ``int("²")`` fails: a bin key or numjobs of it was an internal error."""
    doc = _fio_doc()
    bins = _read_dir(doc)["clat_ns"]["bins"]  # type: ignore[index]
    bins["²"] = bins.pop(next(iter(bins)))
    _refused(_write(tmp_path, doc), tmp_path, "read.clat_ns.bins has the key '²', not a latency")
    doc = _fio_doc()
    doc["jobs"][0]["job options"]["numjobs"] = "²"  # type: ignore[index]
    out = diskbench("import", str(_write(tmp_path, doc)), "--no-store", "--format", "json", db=tmp_path / "db")
    assert out.returncode == 0 and json.loads(out.stdout)["results"][0]["jobs"] == 1  # one entry; numjobs unknown
    text = VC_XML.read_text().replace("<ReadCount>37162<", "<ReadCount>²<", 1)
    (tmp_path / "digits.xml").write_text(text)
    _refused(tmp_path / "digits.xml", tmp_path, "<ReadCount> is '²', not a number")


def test_fio_3_document_without_io_kbytes_contradicts_itself(tmp_path: Path) -> None:
    doc = _fio_doc("randread-4k-qd16.json")
    del _read_dir(doc)["io_kbytes"]  # io_bytes would then be fio 2.x's KiB: 1024 times bw_bytes
    _refused(_write(tmp_path, doc), tmp_path, "read.bw_bytes is 147724881, but fio's 453962104832 bytes")


# --- binary and oversized files ----------------------------------------------------------------
def test_a_200_mb_binary_file_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "disk.img"
    with open(path, "wb") as fh:
        fh.write(b"\x7fELF\x02\x01\x01" + bytes(100))
        fh.truncate(200 << 20)  # sparse: 200 MB to read, nothing to write
    start = time.monotonic()
    _refused(path, tmp_path, "is a binary file, not fio or DiskSpd output (it holds NUL bytes)")
    assert time.monotonic() - start < 20  # two imports and a process start each; it took 147 s before


def test_a_file_of_mostly_non_text_without_nul_is_binary(tmp_path: Path) -> None:
    path = tmp_path / "noise.bin"
    path.write_bytes(bytes(range(1, 256)) * 400)
    _refused(path, tmp_path, "is a binary file, not fio or DiskSpd output (it is mostly not text)")


def _in_process(*args: str) -> tuple[int, str, str]:
    """``diskbench`` in this process (so a module constant can be lowered): exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = int(exc.code or 0)
    assert_no_bug(code, err.getvalue())
    return code, out.getvalue(), err.getvalue()


def _status_interval_file(path: Path, documents: int) -> str:
    doc = JSONPLUS.read_text().strip() + "\n"
    path.write_text(doc * documents)
    return doc


def test_only_so_much_is_read_whole_but_fio_status_interval_files_are_read_from_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importer, "WHOLE_LIMIT", 1 << 20)
    monkeypatch.delenv("DISKBENCH_DEBUG", raising=False)
    big = tmp_path / "status-interval.json"
    doc = _status_interval_file(big, 240)  # about 6 MB: read from its end, as bench/import_big does
    assert big.stat().st_size > 4 << 20
    code, out, err = _in_process("--db", str(tmp_path / "db.sqlite"), "import", str(big), "--format", "json")
    assert code == 0, err
    (result,) = json.loads(out)["results"]
    assert result["ios"] == json.loads(doc)["jobs"][0]["read"]["total_ios"]
    cut = tmp_path / "cut.json"  # the same file with its last document cut: it cannot be read from the end
    cut.write_text(big.read_text()[:-5000])
    code, out, err = _in_process("import", str(cut), "--no-store")
    assert code == BAD_INPUT and out == ""
    assert err == (f"error: {cut} is {cut.stat().st_size / 2**20:.0f} MiB, more than the 1 MiB diskbench reads of a "
                   "file whole (only a fio --status-interval file, whose result is the last document at its end, "
                   "may be bigger)\n")
    xml = tmp_path / "big.xml"  # DiskSpd output is read whole: a big one is refused, saying the limit
    xml.write_text(VC_XML.read_text().replace("</Results>", "<!--" + "x" * (2 << 20) + "--></Results>"))
    code, _, err = _in_process("import", str(xml), "--no-store")
    assert code == BAD_INPUT and "more than the 1 MiB diskbench reads of a file whole" in err


# --- UTF-16 (PowerShell's >) still imports -----------------------------------------------------
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"], ids=["with-bom", "without-bom"])
def test_utf16_diskspd_text_imports_like_utf8(tmp_path: Path, encoding: str) -> None:
    text = VC_TEXT.read_text()
    path = tmp_path / "powershell.txt"
    path.write_bytes(text.replace("\n", "\r\n").encode(encoding))
    out = diskbench("import", str(path), "--no-store", "--format", "json", db=tmp_path / "db.sqlite")
    assert out.returncode == 0, out.stderr
    utf8 = diskbench("import", str(VC_TEXT), "--no-store", "--format", "json", db=tmp_path / "db.sqlite")
    strip = [{k: v for k, v in r.items() if k != "notes"} for r in json.loads(utf8.stdout)["results"]]
    assert [{k: v for k, v in r.items() if k != "notes"} for r in json.loads(out.stdout)["results"]] == strip
    total = next(r for r in json.loads(out.stdout)["results"] if r["direction"] == "total")
    assert total["iops"] == 1189.03  # "total: ... | 1189.03 |" in the file: DiskSpd's own figure
