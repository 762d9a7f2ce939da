"""Commands that run or plan work: run, plan, render, resume, latency (cleanup is in cleanup.py)."""

from __future__ import annotations

import functools
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from .app import (
    App,
    allow_exec_option,
    apply,
    format_option,
    machine_option,
    pass_app,
    profile_option,
    set_option,
    target_option,
)

if TYPE_CHECKING:
    from ..plan import Plan
    from ..profile import Host, LoadedProfile
    from ..runner import RunOptions, RunOutcome
    from ..store import Store

REMOTE_OPTIONS = [
    click.option("--key", "key_file", metavar="FILE", help="SSH private key (default: agent, ~/.ssh)."),
    click.option("--sudo", is_flag=True, help="Use passwordless sudo for privileged steps."),
    click.option("--accept-new-host-key", is_flag=True,
                 help="Trust a host key seen for the first time (recorded; a changed key is refused)."),
    click.option("--known-hosts", metavar="FILE", help="known_hosts file (default ~/.ssh/known_hosts)."),
    click.option("--destroy-data-on", "destroy", metavar="DEV", multiple=True,
                 help="A device whose data diskbench may destroy (repeatable)."),
    click.option("--no-install-fio", is_flag=True, help="Fail instead of installing the engine on a host."),
]


def remote_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Options for running on SSH hosts; shared by run and latency."""
    return apply(f, REMOTE_OPTIONS)


def provider_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Each installed provider's own options (e.g. a subscription), collected into ``provider_opts``."""
    from .. import registry

    names: list[str] = []
    options: list[Callable[[Any], Any]] = []
    for provider in registry.providers.all():
        for option in provider.run_options():
            probe: Any = option(cast(Any, lambda: None))
            param = probe.__click_params__[-1]
            if param.name not in names:
                names.append(str(param.name))
                options.append(option)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["provider_opts"] = {n: kwargs.pop(n) for n in names if kwargs.get(n) is not None}
        for n in names:
            kwargs.pop(n, None)
        return f(*args, **kwargs)

    functools.update_wrapper(wrapper, f)  # keeps the click params already attached to f
    return apply(wrapper, options)


def _hosts(destinations: tuple[str, ...], key_file: str | None, sudo: bool, no_install: bool) -> list[Host]:
    from pydantic import ValidationError

    from ..providers.static import parse_destination

    try:
        return [parse_destination(d, key_file=key_file, sudo=sudo, install_fio=not no_install)
                for d in destinations]
    except (ValueError, ValidationError) as exc:
        raise click.BadParameter(f"use user@address[:port] ({exc})", param_hint="--host") from None


def _options(target: str | None, hosts: list[Host], destroy: tuple[str, ...], accept_new: bool,
             known_hosts: str | None) -> RunOptions:
    from ..runner import RunOptions

    _plain("--destroy-data-on", *destroy)
    return RunOptions(target_dir=_plain("--target", target) if hosts else _target(target),
                      hosts=[h.model_dump() for h in hosts], destroy_data_on=list(destroy),
                      accept_new_host_key=accept_new, known_hosts=_path(known_hosts, "--known-hosts"))


def _plain(option: str, *values: str | None) -> str | None:
    """The last of ``values`` when each is one line of plain text (they reach job files and commands)."""
    from ..text import control_char

    for value in values:
        if value is not None and (bad := control_char(value)):
            raise click.BadParameter(f"{value!r} contains {bad}", param_hint=option)
    return values[-1] if values else None


def _target(target: str | None) -> str | None:
    """``--target`` as an absolute path, resolved once where it enters."""
    return str(Path(_plain("--target", target) or "").resolve()) if target else None


def _path(value: str | None, option: str) -> str | None:
    """A file given on the command line, made absolute where it enters (the run may change folders)."""
    return str(Path(_plain(option, value) or "").expanduser().resolve()) if value else None


@click.command()
@profile_option
@set_option
@target_option
@click.option("--host", "-H", "destinations", metavar="USER@ADDR[:PORT]", multiple=True,
              help="Run a profile without hosts on these SSH hosts (repeatable).")
@click.option("--workload", "-w", "workloads", multiple=True, metavar="NAME", help="Only this workload (repeatable).")
@machine_option
@click.option("--repeats", type=click.IntRange(1, 100), help="Run every job N times, interleaved.")
@click.option("--keep", is_flag=True, help="Keep created machines for debugging (prints how to delete them).")
@click.option("--keep-files", is_flag=True, help="Leave the data files fio laid out in a --target directory.")
@allow_exec_option
@provider_options
@remote_options
@format_option
@pass_app
def run(app: App, profile: str, overrides: tuple[str, ...], target: str | None, destinations: tuple[str, ...],
        workloads: tuple[str, ...], machines: tuple[str, ...], repeats: int | None, keep: bool, keep_files: bool,
        allow_exec: bool, key_file: str | None, sudo: bool,
        accept_new_host_key: bool, known_hosts: str | None, destroy: tuple[str, ...], no_install_fio: bool,
        fmt: str, provider_opts: dict[str, Any]) -> None:
    """Run a profile and print its results."""
    from ..plan import build_plan
    from ..profile import load_profile
    from ..runner import Runner

    hosts = _hosts(destinations, key_file, sudo, no_install_fio)
    options = _options(target, hosts, destroy, accept_new_host_key, known_hosts)
    options.repeats, options.keep, options.provider_options = repeats, keep, provider_opts
    options.keep_files, options.allow_exec = keep_files, allow_exec
    options.workloads, options.machines = list(workloads) or None, list(machines) or None
    loaded = load_profile(profile, overrides)
    _preflight(app, loaded)
    plan = build_plan(loaded, target_dir=options.target_dir, hosts=hosts or None,
                      destroy_data_on=list(destroy), repeats=repeats, workloads=options.workloads,
                      machines=options.machines, allow_exec=allow_exec)
    from ..advice import stability_warnings

    for warning in stability_warnings(plan):
        app.ui.warn(warning)
    store = app.store()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a killed CI job tears down like Ctrl-C
    outcome = Runner(store, app.ui).start(plan, options)
    _finish(app, store, outcome, fmt)


@click.command()
@click.argument("destination", metavar="USER@ADDR[:PORT]")
@click.option("--path", "path", metavar="DIR", help="Directory on the host to measure (default: a "
              "scratch directory in /var/tmp, i.e. the OS disk; /mnt is the Azure temp disk).")
@click.option("--runtime", default="20s", show_default=True, help="Measured time per job.")
@click.option("--size", default="1G", show_default=True, help="Test file size.")
@remote_options
@format_option
@pass_app
def latency(app: App, destination: str, path: str | None, runtime: str, size: str, key_file: str | None,
            sudo: bool, accept_new_host_key: bool, known_hosts: str | None, destroy: tuple[str, ...],
            no_install_fio: bool, fmt: str) -> None:
    """QD1 8k random-write and random-read latency of one host, in about a minute."""
    from ..plan import build_plan
    from ..profile import load_profile
    from ..runner import Runner

    hosts = _hosts((destination,), key_file, sudo, no_install_fio)
    loaded = load_profile("latency", {"defaults.runtime": runtime, "defaults.size": size})
    options = _options(path, hosts, destroy, accept_new_host_key, known_hosts)
    plan = build_plan(loaded, target_dir=options.target_dir, hosts=hosts)
    store = app.store()
    outcome = Runner(store, app.ui).start(plan, options)
    _finish(app, store, outcome, fmt)


@click.command()
@click.argument("run_id")
@click.option("--accept-new-host-key", is_flag=True, help="Trust a host key seen for the first time.")
@allow_exec_option
@format_option
@pass_app
def resume(app: App, run_id: str, accept_new_host_key: bool, allow_exec: bool, fmt: str) -> None:
    """Run the jobs of an interrupted or failed run that have no result yet."""
    from ..runner import Runner, RunOptions

    store = app.store()
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    options = RunOptions(accept_new_host_key=accept_new_host_key, allow_exec=allow_exec)
    outcome = Runner(store, app.ui).resume(run_id, options)
    _finish(app, store, outcome, fmt)


def _finish(app: App, store: Store, outcome: RunOutcome, fmt: str) -> None:
    """Print the run; a run that did not complete is an error (exit 6 when the safety rule refused)."""
    from ..errors import DiskbenchError, SafetyError

    run_id, messages = outcome.run_id, outcome.messages
    run = store.get_run(run_id)
    app.emit(fmt, run, store.get_results(run_id))
    if run["status"] == "completed":
        return
    if outcome.refused:  # the refusal says which device and how to name it
        raise SafetyError(f"run {run_id} is {run['status']}: {outcome.refused[0]}")
    raise DiskbenchError(
        f"run {run_id} is {run['status']}: {len(messages)} job(s) failed ({messages[0]})"
        if messages else f"run {run_id} is {run['status']}",
        hint=f"raw outputs are in {run['artifacts_dir']}; `diskbench resume {run_id}` retries",
    )


@click.command()
@profile_option
@set_option
@target_option
@machine_option
@click.option("--refresh-prices", is_flag=True, help="Fetch current prices from the providers' price APIs.")
@allow_exec_option
@pass_app
def plan(app: App, profile: str, overrides: tuple[str, ...], target: str | None, machines: tuple[str, ...],
         refresh_prices: bool, allow_exec: bool) -> None:
    """Show what a profile would run, for how long and at what cost, without running anything."""
    from .. import registry
    from ..plan import build_plan
    from ..profile import load_profile
    from ..reports.textable import Col, TextTable
    from ..units import human_seconds

    p = build_plan(load_profile(profile, overrides), target_dir=_target(target), machines=list(machines) or None,
                   allow_exec=allow_exec)
    created = {m.name: m for m in p.profile.profile.machine_entries}
    table = TextTable([Col("#", right=True, min_width=2), Col("workload", shrink=True, min_width=8),
                       Col("rw"), Col("bs", right=True), Col("iodepth", right=True), Col("numjobs", right=True),
                       Col("size", right=True), Col("runtime", right=True), Col("expected", right=True)],
                      title=f"profile {p.profile.profile.name}: {p.profile.profile.description}")
    described: set[str] = set()
    last: tuple[str, str] | None = None
    for j in p.jobs:  # one line per machine (its storage said once) and target, then its jobs
        if (j.machine, j.target_label) != last:
            last = (j.machine, j.target_label)
            label = f"{j.machine} · {j.target_label}"
            if j.machines:  # a unit on a client group: one engine run on all of them
                label = f"{j.machine} ({len(j.machines)} clients) · {j.target_label}"
            elif created and j.machine not in described:
                described.add(j.machine)
                size, storage = registry.providers.get(j.provider).describe(created[j.machine])
                label = f"{j.machine} ({size}; {storage}) · {j.target_label}"
            table.add_group(label)
        w = j.workload
        runtime = f"{w.runtime} x{w.rounds}" if w.rounds > 1 and w.runtime else w.runtime  # steady-state rounds
        if w.drain_burst and runtime:
            runtime += " +drain"
        declared = (w.rw, w.bs, w.iodepth, w.numjobs, w.size, runtime)
        table.add_row(j.seq + 1, w.name, *("-" if v is None else v for v in declared), human_seconds(j.expected_s))
    table.caption.append(f"{len(p.jobs)} job(s), expected {human_seconds(p.expected_s)}")
    app.ui.print(table)
    if created:
        _costs(app, p, refresh_prices)
        from ..attribution.plan_check import burst_warnings

        for warning in burst_warnings(p):
            app.ui.warn(warning)
    _preflight(app, p.profile)


def _costs(app: App, p: Plan, refresh: bool) -> None:
    """Machine-minutes and estimated cost per machine, under the plan table."""
    from .. import registry
    from ..reports.textable import Col, TextTable

    for name in p.providers():
        costs, source = registry.providers.get(name).costs(p, refresh=refresh, line=app.ui.line)
        if not costs:
            continue
        table = TextTable([Col("machine", shrink=True), Col("size", shrink=True), Col("VM-minutes", right=True),
                           Col("estimate USD", right=True), Col("note", shrink=True)],
                          title="machines and estimated cost", caption=[source])
        total = 0.0
        for c in costs:
            total += c.usd or 0.0
            table.add_row(c.machine, c.size, f"{c.vm_minutes:.0f}", "-" if c.usd is None else f"{c.usd:.2f}", c.note)
        table.add_row("total", "", f"{sum(c.vm_minutes for c in costs):.0f}", f"{total:.2f}", "")
        app.ui.print(table)


def _preflight(app: App, loaded: LoadedProfile) -> None:
    """Offline checks of machines a provider would create: every problem at once, then fail."""
    from .. import registry
    from ..errors import ProfileError

    profile = loaded.profile
    machines = profile.machine_entries
    if not machines:
        return
    problems = []
    for name in dict.fromkeys(m.provider for m in machines):
        problems += registry.providers.get(name).offline_problems([m for m in machines if m.provider == name])
    if not problems:
        app.ui.line(f"pre-flight: {len(machines)} machine(s) fit their sizes "
                    "(offline check against diskbench's size data)")
        return
    for problem in problems:
        app.ui.line(f"pre-flight: {problem}")
    raise ProfileError(f"{loaded.path}: profile {profile.name!r}: {len(problems)} pre-flight problem(s); "
                       "nothing was created", hint="see the lines above")


@click.command("render")
@profile_option
@target_option
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Folder to write.")
@allow_exec_option
@pass_app
def render_cmd(app: App, profile: str, target: str | None, out: str, allow_exec: bool) -> None:
    """Write the engine's job files of a profile, to read or to run by hand."""
    from .. import registry
    from ..engines.base import Place
    from ..errors import UsageError
    from ..plan import build_plan
    from ..profile import load_profile

    p = build_plan(load_profile(profile), target_dir=_target(target), allow_exec=allow_exec)
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create the folder: {exc.strerror}",
                         hint="name a folder you can write to") from None
    placeholder = False
    for job in p.jobs:
        engine = registry.engines.get(job.engine)
        places = []
        for part in job.parts:
            directory = getattr(part.target, "dir", None)
            placeholder |= directory is None
            places.append(Place(part.workload, part.target_label, directory or "${DISKBENCH_TARGET}"))
        path = folder / f"{job.seq:02d}-{job.slug}{engine.job_suffix}"
        try:
            path.write_text(engine.render(job, places, purpose="by-hand"), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--out {out}: cannot write {path.name}: {exc.strerror}") from None
        app.ui.line(str(path))
    if placeholder:
        app.ui.line(f"run them in {folder} as their first comment says, with DISKBENCH_TARGET set to an "
                    "existing directory on the disk to measure")
