"""What a profile may say to fio: where I/O lands is the target's business, running programs is
the operator's.

fio runs as root on the hosts it measures. Its job files can name any file or device
(``filename``, ``directory``, an I/O log to replay), run programs (``exec_prerun``, the ``exec``
and ``external:`` engines) and reach storage through other paths than the file system (``sg``,
``rbd``, ``nbd`` ...). diskbench writes the target's path into the job itself, after the safety
rule has judged it; so options that would decide where I/O lands are refused in ``extra:``,
ioengines that do not do their I/O on the target's files or device are refused, and options
that run programs are refused unless the person running diskbench passes ``--allow-exec``
(a profile alone can never turn them on).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...profile import Workload

# Options that name the files or devices fio does I/O on, or that replay I/O recorded elsewhere.
PLACE_OPTIONS = (
    "filename", "directory", "filename_format", "opendir",  # name files, devices or folders
    "read_iolog", "replay_redirect",  # replay I/O on what a log names, or on another device
    "write_iolog", "write_hist_log", "mem", "iomem",  # write or map a file at a path of their own
    "allow_mounted_write",  # lets fio write to a mounted device
    "profile",  # fio's built-in profiles name devices of their own
    "include",  # reads another job file (fio takes include=FILE as the include directive)
)
PLACE_WHY = ("decides where fio reads or writes, which comes from the target alone (dir:, device:, stripe: ...), "
             "judged by the safety rule")
# Options that start programs or load code; allowed only with --allow-exec.
EXEC_OPTIONS = {
    "exec_prerun": "runs a command before the job",
    "exec_postrun": "runs a command after the job",
}
# Options diskbench writes itself: a second value would change what it records.
OWN_OPTIONS = ("clat_percentiles", "percentile_list", "write_iops_log", "write_bw_log", "write_lat_log",
               "log_avg_msec", "new_group", "rw", "readwrite", "bs", "blocksize", "iodepth", "numjobs",
               "rwmixread", "size", "runtime", "ramp_time", "direct", "rate_iops", "time_based")
# ioengines that do their I/O on the job's files or device (or none at all).
FILE_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap",
                "splice", "null", "cpuio", "falloc", "ftruncate", "filecreate", "filestat", "filedelete",
                "dircreate", "dirstat", "dirdelete", "solarisaio", "windowsaio")
EXEC_ENGINES = ("exec",)  # runs a program (its `program` option) as the job
EXEC_ENGINE_PREFIX = "external:"  # loads a shared object from a path


ENV_EXPANSION = "${"  # fio replaces ${NAME} in a job file with the environment's NAME (as root)


def option_problems(workload: Workload, *, allow_exec: bool) -> list[tuple[str, str]]:
    """(key, why) for every setting of ``workload`` a profile may not give fio."""
    problems = [(f"extra.{key}", _why(key, allow_exec)) for key in workload.extra or {}]
    problems += [(f"extra.{key}", "holds ${...}, which fio replaces with an environment variable of the host's "
                  "root; write the value itself") for key, value in (workload.extra or {}).items()
                 if ENV_EXPANSION in str(value)]
    problems = [(key, why) for key, why in problems if why]
    engine = _engine_problem(workload.ioengine, allow_exec)
    if engine:
        problems.append(("ioengine", engine))
    return problems


def _why(key: str, allow_exec: bool) -> str:
    if key in PLACE_OPTIONS:
        return PLACE_WHY
    if key in EXEC_OPTIONS and not allow_exec:
        return f"{EXEC_OPTIONS[key]} as root; only `--allow-exec` on the command line allows that"
    if key in OWN_OPTIONS or key == "ioengine":
        return "diskbench sets it" + (f"; use the workload's {key}: key" if key in Workload.model_fields else "")
    return ""


def _engine_problem(ioengine: str | None, allow_exec: bool) -> str:
    if ioengine is None or ioengine in FILE_ENGINES:
        return ""
    if ioengine in EXEC_ENGINES or ioengine.startswith(EXEC_ENGINE_PREFIX):
        return "" if allow_exec else (f"{ioengine} runs a program or loads code as root; only `--allow-exec` on "
                                      "the command line allows that")
    return (f"{ioengine} does its I/O elsewhere than on the target's files or device; diskbench takes "
            f"{', '.join(_short(FILE_ENGINES))}")


def _short(engines: Iterable[str]) -> list[str]:
    return [e for e in engines if e in ("libaio", "io_uring", "psync", "sync", "posixaio", "mmap", "null")] + ["..."]
