"""Seed fidelity: each bundled seed profile renders the articles' own fio jobs, option by option.

The job files and command lines are read from the articles themselves (``tests/fixtures/seeds``,
a copy of ``shared/seeds`` checked against it when that folder is beside the clone). Both sides
are reduced to what fio runs: a list of jobs, each the ``[global]`` options with its section's on
top and the command line's on top of those, identical jobs counted (``[writer1]..[writer4]`` is
``numjobs=4``). What diskbench adds for its own reporting (its percentile list, fio's JSON
output) is set aside; every other difference is recorded below with its reason, and the test
fails when a profile differs in anything else, or no longer differs where it says it does.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter

import pytest

from diskbench.engines.base import Place
from diskbench.engines.fio.render import render_fio
from diskbench.expand import build_plan
from diskbench.plan import Unit
from diskbench.profile import load_profile
from diskbench.runner.knee import step_unit
from diskbench.units import parse_duration, parse_size

from .conftest import FIXTURES, REPO

SEEDS = FIXTURES / "seeds"
SHARED_SEEDS = REPO.parent / "shared" / "seeds"
REPORTING = {"clat_percentiles", "percentile_list"}  # diskbench's percentile list, not I/O
Job = tuple[tuple[str, str], ...]  # one fio job's effective options, sorted


def _seed(prefix: str) -> str:
    (path,) = SEEDS.glob(f"{prefix}_*.txt")
    return path.read_text()


def heredoc_jobs(text: str) -> list[tuple[str, str]]:
    """``cat <<EOF >NAME.ini`` ... ``EOF`` blocks, in the article's order: (name, text)."""
    return [(m[1], m[2]) for m in re.finditer(r"cat <<EOF >(\S+)\n(.*?)\nEOF", text, re.S)]


def ini_blocks(text: str) -> list[str]:
    """Job files written out as plain blocks: ``[global]`` and the option lines after it."""
    blocks = []
    for m in re.finditer(r"^\[global\]\n", text, re.M):
        lines = []
        for line in text[m.start():].splitlines():
            if line and not re.match(r"^(\[[^\]]+\]|[a-z_]+=\S*)$", line):
                break
            lines.append(line)
        blocks.append("\n".join(lines))
    return blocks


def fio_jobs(ini: str, command: dict[str, str] | None = None) -> Counter[Job]:
    """The jobs fio runs for a job file (and options given on its command line)."""
    sections: list[tuple[str, dict[str, str]]] = []
    for line in ini.splitlines():
        line = line.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("["):
            sections.append((line[1:-1], {}))
        else:
            key, _, value = line.partition("=")
            sections[-1][1][key] = value or "1"
    global_ = dict(sections[0][1]) if sections and sections[0][0] == "global" else {}
    jobs: Counter[Job] = Counter()
    for name, options in sections:
        if name == "global":
            continue
        merged = {**global_, **options, **(command or {})}
        count = int(merged.pop("numjobs", "1"))
        jobs[_normal(merged)] += count
    return jobs


def command_options(line: str) -> dict[str, str]:
    """``fio --runtime 60 x.ini`` or ``fio --bs=4k --name=/mnt/test``: the options it sets."""
    args = shlex.split(line.replace("\\\n", " "))[1:]
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--"):
            key, eq, value = arg[2:].partition("=")
            if not eq and i + 1 < len(args) and not args[i + 1].startswith("-") and not args[i + 1].endswith(".ini"):
                value, i = args[i + 1], i + 1
            out[key] = value or "1"
        i += 1
    return out


def _normal(options: dict[str, str]) -> Job:
    """Options in one spelling: sizes in bytes, times in seconds, no zero ramp time."""
    out = {}
    for key, value in options.items():
        if key in REPORTING or key == "new_group":
            continue
        if key in ("size", "filesize", "bs"):
            value = str(parse_size(value))
        elif key in ("runtime", "ramp_time"):
            value = f"{parse_duration(value if value[-1].isalpha() else value + 's'):g}"
        if key == "ramp_time" and value == "0":
            continue
        out[key] = value
    return tuple(sorted(out.items()))


def rendered(job: Unit, directories: dict[str, str]) -> Counter[Job]:
    """What diskbench's job file for ``job`` runs, with each target at the article's directory."""
    if job.sections:
        places = [Place(s.workload, s.target_label, directories[s.target_name]) for s in job.sections]
    else:
        places = [Place(job.workload, job.target_label, directories[job.target_name or job.target_label])]
    return fio_jobs(render_fio(job, places))


def jobs_of(profile: str) -> dict[tuple[str, str], Unit]:
    return {(j.machine, j.workload.name): j for j in build_plan(load_profile(profile)).units}


def differences(seed: Counter[Job], ours: Counter[Job]) -> dict[str, tuple[list[str], list[str]]]:
    """Option -> (the article's values, diskbench's values) for every option that differs."""
    def values(jobs: Counter[Job]) -> dict[str, list[str]]:
        keys = {k for job in jobs for k, _ in job}
        return {k: sorted({dict(job).get(k, "-") for job in jobs}) for k in keys}

    a, b = values(seed), values(ours)
    return {k: (a.get(k, ["-"]), b.get(k, ["-"])) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)}


# -- e8-family: seed 000 -------------------------------------------------------------------------

E8_FILES = {  # (machine, workload) -> index of the article's heredoc (sync.ini, async.ini, ...)
    ("e8as-v4-temp", "sync"): 0, ("e8as-v4-temp", "async"): 1,
    ("e8ds-v4-temp", "sync"): 2, ("e8ds-v4-temp", "async"): 3,
    ("e8ds-v4-os-readwrite", "sync-os"): 4, ("e8ds-v4-os-readwrite", "async-os"): 5,
    ("e8ds-v4-os-nocache", "sync-os"): 4, ("e8ds-v4-os-nocache", "async-os"): 5,  # the same VM, cache off
    ("e8ds-v4-ephemeral-os", "sync-os"): 6, ("e8ds-v4-ephemeral-os", "async-os"): 7,
    ("e8-v4-no-temp", "sync-os"): 4, ("e8-v4-no-temp", "async-os"): 5,  # the article lists its disks only
    ("l8s-v2-nvme", "sync"): 8, ("l8s-v2-nvme", "async-nvme"): 9,
}
E8_DIRS = {"temp": "/mnt", "dir:/": "/", "nvme:all": "/mnt/nvme"}  # where the article's directory= points


def test_e8_family_runs_the_articles_job_files() -> None:
    text = _seed("000")
    files = heredoc_jobs(text)
    assert [name for name, _ in files] == ["sync.ini", "async.ini"] * 2 + ["sync-os.ini", "async-os.ini"] * 2 \
        + ["sync.ini", "async.ini"]
    assert text.count("sudo fio --runtime 60 ") >= 10  # every file run with --runtime 60, nothing else
    jobs = jobs_of("e8-family")
    assert set(jobs) == set(E8_FILES)
    for key, index in E8_FILES.items():
        seed, ours = fio_jobs(files[index][1], {"runtime": "60"}), rendered(jobs[key], E8_DIRS)
        assert seed == ours, (key, differences(seed, ours))


# -- d8ds-premium: seed 001 ----------------------------------------------------------------------

D8DS_DIRS = {"nocache-writes": "/mnt/nocache", "cache-reads": "/mnt/readcache"}


def test_d8ds_premium_runs_the_guides_fio_files() -> None:
    text = _seed("001")
    fiowrite, fioread, fioreadwrite = ini_blocks(text)
    for name in ("fiowrite", "fioread", "fioreadwrite"):
        assert f"sudo fio --runtime 30 {name}.ini" in text
    jobs = jobs_of("d8ds-premium")
    runtime = {"runtime": "30"}
    cases = {
        "max-write": (fiowrite, {}),
        "max-read": (fioread, {}),
        "mixed": (fioreadwrite, {}),  # one fio run over both volumes; new_group only splits its report
        # "change to a larger block size (64 KB)" for throughput: the same files with bs=64k
        "throughput-write-64k": (fiowrite.replace("bs=4k", "bs=64k"), {}),
        "throughput-read-64k": (fioread.replace("bs=4k", "bs=64k"), {}),
    }
    assert {w for _, w in jobs} == set(cases)
    for (_, workload), job in jobs.items():
        ini, expected = cases[workload]
        seed, ours = fio_jobs(ini, runtime), rendered(job, D8DS_DIRS)
        assert differences(seed, ours) == expected, workload


# -- ovh-nvme-raid0: seed 004 --------------------------------------------------------------------

def ovh_differences(mount: str) -> dict[str, tuple[list[str], list[str]]]:
    return {
        # --name=/mnt/test names the job and its files /mnt/test.N.0; diskbench's job is named after
        # the workload, its files are in the array's mount point (/mnt/randread-4k.N.0 on OVH)
        "directory": (["-"], [mount]),
        # diskbench always writes size=; the profile's equals the article's --filesize=64m
        "size": (["-"], [str(64 << 20)]),
    }


@pytest.mark.parametrize("profile, machine, mount", [
    ("ovh-nvme-raid0", "db01", "/mnt"), ("l-series-nvme", "l8s-v2", "/mnt/nvme")])
def test_nvme_profiles_run_the_ovh_command_lines(profile: str, machine: str, mount: str) -> None:
    text = _seed("004")
    lines = [m[0] for m in re.finditer(r"^\$ fio (?:.*\\\n)*.*$", text, re.M)]
    assert len(lines) == 2
    jobs = jobs_of(profile)
    for line, workload in zip(lines, ("randread-4k", "randwrite-4k"), strict=True):
        options = command_options(line.removeprefix("$ "))
        name = options.pop("name")
        seed = fio_jobs(f"[{name}]\n", options)
        ours = rendered(jobs[(machine, workload)], {"nvme:all": mount})
        assert differences(seed, ours) == ovh_differences(mount), workload
        assert sum(seed.values()) == sum(ours.values()) == 32
    assert "mdadm --create /dev/md1 --level 0 --raid-devices 4" in text and "mkfs.xfs /dev/md1" in text
    target = load_profile(profile).profile.machines[0].target
    assert target is not None and target.model_dump(exclude_none=True, exclude_defaults=True) == {
        "nvme": "all", "raid": 0, "fs": "xfs", "mount": mount}


@pytest.mark.skipif(not SHARED_SEEDS.is_dir(), reason="no shared/seeds beside this clone")
def test_vendored_seeds_are_the_shared_ones() -> None:
    shared = {p.name: p.read_bytes() for p in SHARED_SEEDS.iterdir()}
    assert {p.name: p.read_bytes() for p in SEEDS.iterdir()} == shared


@pytest.mark.parametrize("line, expected", [
    ("fio --runtime 60 sync.ini", {"runtime": "60"}),
    ("fio --bs=4k --group_reporting --name=/mnt/t", {"bs": "4k", "group_reporting": "1", "name": "/mnt/t"}),
])
def test_command_options(line: str, expected: dict[str, str]) -> None:
    assert command_options(line) == expected


def test_jobs_count_identical_sections_as_numjobs() -> None:
    four = "[global]\nbs=8k\n" + "".join(f"[writer{i}]\nrw=randwrite\n" for i in range(1, 5))
    one = "[global]\nbs=8k\n[w]\nrw=randwrite\nnumjobs=4\n"
    assert fio_jobs(four) == fio_jobs(one)
    assert not differences(fio_jobs(four), fio_jobs(one))
    assert differences(fio_jobs(one), fio_jobs(one.replace("8k", "4k"))) == {"bs": (["8192"], ["4096"])}


# -- d8ds-premium-windows: seed 001's fio files on the Linux twin ---------------------------------

def test_the_windows_profiles_linux_twin_runs_the_guides_fio_files() -> None:
    """The twin runs fiowrite.ini and fioread.ini as the guide does, except that it measures the same
    window as its DiskSpd sibling: DiskSpd's ``-W30`` (a 30 s warm-up before a 30 s run) is fio's
    ``ramp_time=30`` with ``time_based`` (a DiskSpd run is time based)."""
    fiowrite, fioread, _ = ini_blocks(_seed("001"))
    jobs = jobs_of("d8ds-premium-windows")
    expected = {"ramp_time": (["-"], ["30"]), "time_based": (["-"], ["1"])}
    for workload, ini in (("fio-max-write", fiowrite), ("fio-max-read", fioread)):
        seed, ours = fio_jobs(ini, {"runtime": "30"}), rendered(jobs[("d8ds-v4-linux-twin", workload)], D8DS_DIRS)
        assert differences(seed, ours) == expected, workload
        assert sum(ours.values()) == 4  # numjobs=4
    windows = {w for (m, w) in jobs if m == "d8ds-v4-windows"}
    assert windows == {"max-write", "max-read"}


# -- anf-nfs-scaleout: seed 002 ------------------------------------------------------------------

SEED002_MIX = list(range(100, -1, -10))
# What the article does not say, and the profile chooses (its header says why): diskbench's values.
SEED002_CHOSEN = {"iodepth", "numjobs", "size", "runtime", "ramp_time", "time_based", "direct", "ioengine",
                  "directory"}
# The 256 KiB series gives no step for its mix; the profile takes its other uncached series' 25%.
SEED002_CHOSEN_STEP = {(256, False, False): 25}
Series = tuple[int, bool, bool]  # (KiB, random, cached)


def seed002() -> dict[str, object]:
    """What the ANF article states, read from its text: mount options, clients, protocol, blocks, mixes."""
    text = _seed("002")
    mounts = set(re.findall(r"掛接選項:(\S+)", text))
    (clients,) = set(re.findall(r"(\d+) (D\d+s_v5)", text))
    mixes = [int(a) for a, b in re.findall(r"(\d+)%:(\d+)%", text) if int(a) + int(b) == 100]
    return {"mounts": mounts, "clients": clients, "nfsv3": "NFSv3" in text, "ultra": "Ultra" in text,
            "random": re.findall(r"(\d+)-KiB 和 (\d+)-KiB 區塊大小", text), "mixes": mixes,
            "randrepeat": "randrepeat=0" in text, "manual_qos": text.count("手動 QoS"),
            "tib": re.findall(r"單一 Azure NetApp Files (\d+)-TiB 一般磁碟區", text)}


def seed002_series() -> dict[Series, int | None]:
    """The article's result series of the six-client runs, each with the step of its read/write mix:
    the sections headed 結果 (results) but for the single-client nconnect runs and the side-by-side
    comparison (比較) of two series already there. 包含 (with) caching: fio's default randrepeat;
    otherwise caching is excluded (randrepeat=0)."""
    text = _seed("002")
    out: dict[Series, int | None] = {}
    for section in re.split(r"\n結果:", text)[1:]:
        head, _, body = section.partition("\n")
        if "nconnect" in head or "比較" in head:
            continue
        (kib,) = re.findall(r"(\d+) ?KiB", head)
        step = re.search(r"調整為? ?(\d+)%", body)
        out[(int(kib), "隨機" in head, "包含" in head)] = int(step[1]) if step else None
    return out


def group_units() -> list[Unit]:
    """The six-client series: the units on the client group."""
    return [u for u in build_plan(load_profile("anf-nfs-scaleout")).units if u.machines]


def test_anf_profile_mounts_and_sizes_as_the_article() -> None:
    article = seed002()
    (mount,) = article["mounts"]  # type: ignore[misc]
    assert mount == "rw,nconnect=8,hard,rsize=262144,wsize=262144,vers=3,tcp,bg"
    units = group_units()
    options = {j.target.options for j in units if j.target is not None and hasattr(j.target, "options")}
    assert len(options) == 1
    ours = set(options.pop().split(","))
    # bg: retry a failed mount in the background at boot; a benchmark mounts once and wants the error
    assert set(mount.split(",")) - ours == {"bg"} and ours - set(mount.split(",")) == set()
    count, size = article["clients"]  # type: ignore[misc]
    loaded = load_profile("anf-nfs-scaleout").profile
    shared = loaded.shared
    assert shared is not None and shared.clients is not None
    clients = [m for m in loaded.machines if m.name in shared.clients]
    assert len(clients) == int(count) and {getattr(m, "size", None) for m in clients} == {f"Standard_{size}"}
    assert article["nfsv3"] and article["ultra"] and shared.anf is not None
    assert (shared.anf.protocol, shared.anf.service_level) == ("NFSv3", "Ultra")
    # "a single 100-TiB regular volume ... manual QoS", in both the high-IOPS and high-throughput setups
    assert article["tib"] == ["100"] and article["manual_qos"] == 2
    assert (shared.anf.size_gib, shared.anf.qos_type) == (100 * 1024, "Manual")
    assert all(j.machines == [m.name for m in clients] for j in units)  # every job on all six at once


def test_anf_profile_renders_the_articles_jobs() -> None:
    """Each of the article's six-client series (4 KiB random with and without caching, 8 KiB random
    without, 64 KiB sequential with and without, 256 KiB sequential without) is one workload whose mix
    steps as the article's does (10% or 25%), with randrepeat=0 where caching is excluded and fio's
    default where it is not; nothing the article does not name is added except the values the profile
    chooses (``SEED002_CHOSEN``, ``SEED002_CHOSEN_STEP``)."""
    article = seed002()
    assert article["random"] == [("4", "8"), ("64", "256")]
    assert article["mixes"][:3] == [100, 90, 80] and article["randrepeat"]
    series = seed002_series()
    assert series == {(4, True, True): 10, (4, True, False): 25, (8, True, False): 25, (64, False, True): 10,
                      (64, False, False): 25, (256, False, False): None}
    expected = {}
    for (kib, random, cached), step in series.items():
        step = step or SEED002_CHOSEN_STEP[(kib, random, cached)]
        expected[("randrw" if random else "rw", str(kib * 1024), "1" if cached else "0")] = \
            set(map(str, range(100, -1, -step)))
    got: dict[tuple[str, str, str], set[str]] = {}
    for unit in group_units():
        (options,) = fio_jobs(render_fio(unit, [Place(unit.workload, unit.target_label, "/mnt/anf")]))
        opts = dict(options)
        got.setdefault((opts["rw"], opts["bs"], opts["randrepeat"]), set()).add(opts["rwmixread"])
        assert set(opts) - {"rw", "bs", "rwmixread", "randrepeat"} <= SEED002_CHOSEN, sorted(opts)
    assert got == expected


def seed002_flush() -> dict[str, tuple[str, ...]]:
    """The article's cache flush: each result section (結果) that says its iterations were "offset by
    reading a completely separate large data set that is not part of the benchmark, to clear any caching
    of the benchmark's data set" (讀取完全獨立的大型數據集 ... 清除 ... 快取), by its heading."""
    found: dict[str, list[tuple[str, ...]]] = {}
    for section in re.split(r"\n結果:", _seed("002"))[1:]:
        head, _, body = section.partition("\n")
        body = body.split("\n平行網路連線")[0]  # the section ends where the nconnect block starts
        found[head] = re.findall(r"每個測試反覆專案都是藉由(讀取完全獨立的大型數據集)而非基準檢驗的一部分來抵消,"
                                 r"以便(清除)基準檢驗數據集可能發生的任何(快取)", body)
    return {head: hits[0] for head, hits in found.items() if hits}


def test_anf_profile_flushes_before_each_256k_step_as_the_article() -> None:
    """"Results: 256 KiB sequential I/O without caching": "each test iteration is offset by reading a
    completely separate large data set that is not part of the benchmark, to clear any caching of the
    benchmark data set" (結果:256 KiB 循序 I/O 而不快取). So every step of the 256 KiB series, and no other
    unit, flushes first, on every client, with a separate data set at least as large as the benchmark's
    own (6 x 8 jobs x 20 GiB). (tests/test_plan.py: how the plan shows and counts it.)"""
    assert seed002_flush() == {"256 KiB 循序 I/O 而不快取": ("讀取完全獨立的大型數據集", "清除", "快取")}
    plan = build_plan(load_profile("anf-nfs-scaleout"))
    flushed = [u for u in plan.units if u.workload.flush_cache]
    assert [u.workload.name for u in flushed] == [f"seq-256k-rwmixread{m}" for m in (100, 75, 50, 25, 0)]
    assert all(len(u.machines) == 6 and u.workload.bs == "256k" and u.workload.rw == "rw" for u in flushed)
    w = flushed[0].workload
    benchmark = parse_size(w.size or "0") * (w.numjobs or 1) * 6
    assert w.flush_bytes * 6 >= benchmark and w.flush_bytes == parse_size("160g")


# The nconnect comparison: what the article does not say, and the profile chooses (its header says why)
NCONNECT_CHOSEN = {"iodepth", "numjobs", "size", "runtime", "ramp_time", "time_based", "direct", "ioengine",
                   "directory"}


def seed002_nconnect() -> dict[str, object]:
    """The article's single-client nconnect test, read from its text: its setup block (平行網路連線
    (nconnect) 基準檢驗設定), its 4 KiB section and chart captions, its 64 KiB side-by-side comparison."""
    text = _seed("002")
    setup = text[text.index("平行網路連線 (nconnect) 基準檢驗設定"):text.index("相應增加基準檢驗")]
    four = text[text.index("結果:4 KiB,隨機,不含 nconnect"):text.index("高輸送量基準檢驗")]
    sixty_four = text[text.index("並存比較(含和不含 nconnect"):text.index("其他相關資訊")]
    return {
        "vm": re.findall(r"單一(D\d+s_v\d)虛擬機", setup),  # "a single D32s_v4 virtual machine"
        "with_and_without": "NFSv3 與 不含 nconnect" in setup,  # "NFSv3 with and without nconnect"
        "mount": re.findall(r"掛接選項:(\S+)", setup),
        "sizes": re.findall(r"(\d+)-KiB 和 (\d+)-KiB wsize/rsize", setup),  # the I/O sizes, 4 and 64 KiB
        # "the workload mix uses a different I/O depth each time", said of both (4 KiB and 64 KiB)
        "depths": text.count("產生的工作負載混合每次都會使用不同的 I/O 深度"),
        # "these tests are also run with randrepeat=0 to avoid caching on purpose" / "only run with caching excluded"
        "uncached": ("這些測試也會搭配 執行 randrepeat=0 ,以刻意避免快取" in text
                     and "這些測試只會在排除快取時執行" in text),
        "4k": ("4 KiB 隨機工作負載" in text, "4-KiB 讀取效能的圖表" in four, "4-KiB 寫入效能的圖表" in four),
        "64k": "64 KiB 循序讀取和寫入的並存比較" in sixty_four,  # "64 KiB sequential reads and writes"
        "64k_random_once": "64-KiB 隨機工作負載" in text,  # its text once says random: the chart wins
    }


def test_anf_profile_runs_the_nconnect_comparison_on_one_d32s_v4() -> None:
    """"Parallel network connections (nconnect) benchmark setup": one D32s_v4 (單一D32s_v4虛擬機), "NFSv3 with
    and without nconnect", the mount rw,nconnect=8,hard,rsize=262144,wsize=262144,vers=3,tcp,bg; "Results:
    4 KiB, random, without nconnect, caching excluded" (reads and writes, its two charts) and "Side-by-side
    comparison (with and without nconnect)" of "64 KiB sequential reads and writes", each with "a different
    I/O depth each time" and randrepeat=0. So: one more machine, outside the client group, that mounts the
    run's volume itself twice (nfs: shared), with the article's options and with the same but nconnect=8,
    and runs the same four workloads on each, I/O depth searched for the knee of each latency-vs-load curve
    (``iodepth: auto``: a different depth each step); nothing the article does not name is added but the
    values the profile chooses (``NCONNECT_CHOSEN``), and each step's job file is the one the article's
    curve would run at that depth."""
    article = seed002_nconnect()
    assert article["vm"] == ["D32s_v4"] and article["with_and_without"] and article["uncached"]
    assert article["mount"] == ["rw,nconnect=8,hard,rsize=262144,wsize=262144,vers=3,tcp,bg"]
    assert article["sizes"] == [("4", "64")] and article["depths"] == 2
    assert article["4k"] == (True, True, True) and article["64k"] and article["64k_random_once"]
    loaded = load_profile("anf-nfs-scaleout").profile
    assert loaded.shared is not None and loaded.shared.clients is not None
    (machine,) = [m for m in loaded.machines if m.name not in loaded.shared.clients]
    assert getattr(machine, "size", None) == f"Standard_{article['vm'][0]}"  # type: ignore[index]
    targets = machine.named_targets()
    mounts = {name: (getattr(t, "nfs", None), set(getattr(t, "options", "").split(","))) for name, t in targets.items()}
    (article_mount,) = article["mount"]  # type: ignore[misc]
    with_nconnect = set(article_mount.split(",")) - {"bg"}  # bg: a boot-time retry, as for the six clients
    assert mounts == {"nconnect8": ("shared", with_nconnect), "no-nconnect": ("shared", with_nconnect - {"nconnect=8"})}

    plan = build_plan(load_profile("anf-nfs-scaleout"))
    units = [u for u in plan.units if u.machine == machine.name]
    assert all(u.on_shared and not u.machines for u in units)
    assert plan.shared_turns() == ["clients", machine.name]  # after the six clients, never beside them
    assert [u.target_name for u in units] == ["nconnect8"] * 4 + ["no-nconnect"] * 4  # one mount, then the other
    got: dict[str, dict[tuple[str, str], set[str]]] = {}
    for unit in units:
        knee = unit.workload.knee  # the article names no depth: the search's, a different one each step
        assert knee is not None and (knee.min_iodepth, knee.max_iodepth) == (1, 64), unit.workload.name
        for depth in (1, 2, 4, 8, 16, 32, 64):
            step = step_unit(unit, depth)
            (options,) = fio_jobs(render_fio(step, [Place(step.workload, step.target_label, "/mnt/anf")]))
            opts = dict(options)
            assert set(opts) - {"rw", "bs", "randrepeat"} <= NCONNECT_CHOSEN, sorted(opts)
            assert opts["randrepeat"] == "0"  # caching excluded
            got.setdefault(unit.target_name, {}).setdefault((opts["rw"], opts["bs"]), set()).add(opts["iodepth"])
    depths = {"1", "2", "4", "8", "16", "32", "64"}
    expected = {("randread", "4096"): depths, ("randwrite", "4096"): depths,
                ("read", str(64 * 1024)): depths, ("write", str(64 * 1024)): depths}
    assert got == {"nconnect8": expected, "no-nconnect": expected}


# -- premium-cache and premium-cache-windows: seed 003 ---------------------------------------------

def seed003() -> dict[str, bool]:
    text = _seed("003")
    return {"read cache": "standard disk with Read Caching turned on" in text,
            "read/write cache": "has both read and write caching enabled" in text,
            "p30": "Premium P30 disk" in text, "temp": "Local D: temp disk" in text,
            "write": "100% write" in text, "256k": "block size to 256k" in text,
            "qd1": "outstanding IO to 1" in text}


@pytest.mark.parametrize("profile", ["premium-cache", "premium-cache-windows"])
def test_premium_cache_profiles_have_the_articles_disks_and_tests(profile: str) -> None:
    """The article's drives (a Standard disk uncached, with read cache, with read/write cache; a P30; the
    temp disk) are the profile's targets, and its tests (small random reads, 100% writes, 256k reads,
    one outstanding I/O) its workloads. Its "small block size" is not given: the profile reads 8k."""
    article = seed003()
    assert all(article.values()), article
    loaded = load_profile(profile).profile
    (machine,) = loaded.machines
    disks = [(d.type, d.size_gb, d.caching) for d in machine.data_disks]  # type: ignore[attr-defined]
    assert disks == [("Standard_LRS", 1024, "None"), ("Standard_LRS", 1024, "ReadOnly"),
                     ("Standard_LRS", 1024, "ReadWrite"), ("Premium_LRS", 1024, "None")]  # 1024 GiB: a P30
    targets = {name: t.kind for name, t in (machine.targets or {}).items()}
    assert targets == {"hdd-none": "lun", "hdd-readonly": "lun", "hdd-readwrite": "lun", "p30": "lun",
                       "temp": "temp"}, targets
    work = {w.name: (w.rw, w.bs, w.iodepth) for w in loaded.workloads}
    assert work["randwrite-8k"][0] == "randwrite"  # "change the Access Specification to 100% write"
    assert work["randread-256k"][:2] == ("randread", "256k")  # "Changing the block size to 256k"
    assert work["latency-qd1"][2] == 1  # "changing outstanding IO to 1"
    jobs = build_plan(load_profile(profile)).units
    assert {(j.workload.name, j.target_name) for j in jobs} == {(w, t) for w in work for t in targets}


def test_every_client_group_job_gets_randrepeat_0_unless_the_profile_says() -> None:
    """The article's uncached runs set randrepeat=0 so the clients do not ask for the same offsets;
    nfs-lab (the same scale-out on any NFS server) sets nothing and gets it from diskbench."""
    assert "randrepeat" not in (load_profile("nfs-lab").profile.defaults.extra or {})
    for job in build_plan(load_profile("nfs-lab")).units:
        (options,) = fio_jobs(render_fio(job, [Place(job.workload, job.target_label, "/mnt/nfs")]))
        assert dict(options).get("randrepeat") == "0", job.workload.name
