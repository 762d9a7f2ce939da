"""Commands that run or plan work: run, plan, render, resume, latency; each parses its arguments,
calls the library (``diskbench.api``) and renders what it returns (cleanup is in cleanup.py)."""

from __future__ import annotations

import functools
import json
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
    run_id_argument,
    set_option,
    target_option,
)

if TYPE_CHECKING:
    from ..api import Results
    from ..profile import Host, LoadedProfile
    from ..runner import RunOptions

ADAPTIVE = "defaults.stop=true"  # run --adaptive: every workload without its own stop: takes the defaults

REMOTE_OPTIONS = [
    click.option("--key", "key_file", metavar="FILE", help="SSH private key (default: agent, ~/.ssh)."),
    click.option("--sudo", is_flag=True, help="Use passwordless sudo for privileged steps."),
    click.option("--accept-new-host-key", is_flag=True,
                 help="Trust a host key seen for the first time (recorded; a changed key is refused)."),
    click.option("--known-hosts", metavar="FILE", help="known_hosts file (default ~/.ssh/known_hosts)."),
    click.option("--destroy-data-on", "destroy", metavar="DEV", multiple=True,
                 help="A device whose data diskbench may destroy (repeatable)."),
    click.option("--no-install-engine", "--no-install-fio", is_flag=True,
                 help="Fail instead of installing the engine (fio) on a host."),
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
        return [parse_destination(d, key_file=key_file, sudo=sudo, install_engine=not no_install)
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
@click.option("--repeats", metavar="N|auto[:MAX]", help="Run every job N times, interleaved; auto: 3 times, then "
              "again each job the gate finds INCONCLUSIVE, round after round, until it decides or the job ran MAX "
              "times (default 10).")
@click.option("--policy", metavar="FILE", help="The gate policy (gate.yaml) --repeats auto judges with: the one "
              "`diskbench gate --policy` will use (default: the gate's defaults).")
@click.option("--keep", is_flag=True, help="Keep created machines for debugging (prints how to delete them).")
@click.option("--keep-files", is_flag=True, help="Leave the data files fio laid out in a --target directory.")
@click.option("--adaptive", is_flag=True, help="End each job once its answer is known (stop: with its defaults "
              "where the profile gives none; the runtime is the maximum).")
@allow_exec_option
@provider_options
@remote_options
@format_option
@pass_app
def run(app: App, profile: str, overrides: tuple[str, ...], target: str | None, destinations: tuple[str, ...],
        workloads: tuple[str, ...], machines: tuple[str, ...], repeats: str | None, policy: str | None, keep: bool,
        keep_files: bool, adaptive: bool, allow_exec: bool, key_file: str | None, sudo: bool,
        accept_new_host_key: bool, known_hosts: str | None, destroy: tuple[str, ...], no_install_engine: bool,
        fmt: str, provider_opts: dict[str, Any]) -> None:
    """Run a profile and print its results."""
    from .. import api

    hosts = _hosts(destinations, key_file, sudo, no_install_engine)
    options = _options(target, hosts, destroy, accept_new_host_key, known_hosts)
    options.keep, options.provider_options = keep, provider_opts
    options.repeats, options.policy = _repeats(options, repeats, _path(policy, "--policy"))
    options.keep_files, options.allow_exec = keep_files, allow_exec
    options.workloads, options.machines = list(workloads) or None, list(machines) or None
    loaded = api.load_profile(profile, list(overrides))
    if adaptive and loaded.profile.defaults.stop is None:  # a profile's own defaults.stop wins
        loaded = api.load_profile(profile, [*overrides, ADAPTIVE])
    _run(app, loaded, options, fmt)


def _repeats(options: RunOptions, repeats: str | None, policy: str | None) -> tuple[int | str | None, str | None]:
    """``--repeats`` and ``--policy`` checked as the library reads them (a wrong one is one line naming
    it); automatic repeats kept as ``auto:MAX``."""
    from ..plan import AutoRepeats

    options.repeats, options.policy = repeats, policy
    rule = options.repeat_rule(("--repeats", "--policy"))
    return (str(rule) if isinstance(rule, AutoRepeats) else rule), policy


def _run(app: App, loaded: LoadedProfile, options: RunOptions, fmt: str) -> None:
    """``api.run`` with this terminal's progress; the results printed, then a failure raised."""
    from .. import api

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a killed CI job tears down like Ctrl-C
    results = api.run(loaded, options=options, store=app.store(), progress=app.ui, check=False)
    _finish(app, results, fmt)


@click.command()
@click.argument("destination", metavar="USER@ADDR[:PORT]")
@click.option("--path", "path", metavar="DIR", help="Directory on the host to measure (default: a "
              "scratch directory in /var/tmp, i.e. the OS disk; /mnt is the Azure temp disk).")
@click.option("--runtime", default="30s", show_default=True, help="Measured time per job.")
@click.option("--size", default="1G", show_default=True, help="Test file size.")
@click.option("--precondition", is_flag=True, help="Write the test file once before measuring, so reads "
              "and overwrites meet allocated blocks (what a database's files look like).")
@remote_options
@format_option
@pass_app
def latency(app: App, destination: str, path: str | None, runtime: str, size: str, precondition: bool,
            key_file: str | None, sudo: bool, accept_new_host_key: bool, known_hosts: str | None,
            destroy: tuple[str, ...], no_install_engine: bool, fmt: str) -> None:
    """QD1 8k random-write and random-read latency of one host, in about a minute."""
    from .. import api

    hosts = _hosts((destination,), key_file, sudo, no_install_engine)
    overrides = {"defaults.runtime": runtime, "defaults.size": size}
    if precondition:
        overrides["target"] = "{scratch: true, precondition: true}"
    loaded = api.load_profile("latency", overrides)
    _run(app, loaded, _options(path, hosts, destroy, accept_new_host_key, known_hosts), fmt)


@click.command()
@run_id_argument
@click.option("--accept-new-host-key", is_flag=True, help="Trust a host key seen for the first time.")
@allow_exec_option
@format_option
@pass_app
def resume(app: App, run_id: str, accept_new_host_key: bool, allow_exec: bool, fmt: str) -> None:
    """Run the jobs of an interrupted or failed run that have no result yet."""
    from .. import api

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    results = api.resume(run_id, store=app.store(), progress=app.ui, accept_new_host_key=accept_new_host_key,
                         allow_exec=allow_exec, check=False)
    _finish(app, results, fmt)


def _finish(app: App, results: Results, fmt: str) -> None:
    """Print the run; a run that did not complete is an error (exit 6 when the safety rule refused)."""
    app.emit(fmt, results.run, results.stored)
    results.raise_for_status()


@click.command()
@profile_option
@set_option
@target_option
@machine_option
@click.option("--repeats", metavar="N|auto[:MAX]", help="Plan every job N times, as `run --repeats` runs them; "
              "auto: the first 3 rounds, with the cost of every job at MAX (default 10) as the upper bound.")
@click.option("--refresh-prices", is_flag=True, help="Fetch current prices from the providers' price APIs.")
@allow_exec_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@pass_app
def plan(app: App, profile: str, overrides: tuple[str, ...], target: str | None, machines: tuple[str, ...],
         repeats: str | None, refresh_prices: bool, allow_exec: bool, fmt: str) -> None:
    """Show what a profile would run, for how long and at what cost, without running anything."""
    from .. import api
    from ..reports.plan_view import cost_tables, plan_json, plan_table

    options = api.run_options(target_dir=_target(target), machines=list(machines) or None, allow_exec=allow_exec)
    options.repeats = _repeats(options, repeats, None)[0]  # checked as `run` checks it, one line naming it
    report = api.plan(api.load_profile(profile, list(overrides)), options=options, refresh_prices=refresh_prices,
                      line=app.ui.line)
    if fmt == "json":
        app.ui.write(json.dumps(plan_json(report), indent=2) + "\n")
    else:
        for table in [plan_table(report), *cost_tables(report)]:
            app.ui.print(table)
        for warning in report.warnings:
            app.ui.warn(warning)
        for note in report.notes:
            app.ui.line(f"note: {note}")
        for text in report.preflight_lines():
            app.ui.line(text)
    report.check()


@click.command("render")
@profile_option
@target_option
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Folder to write.")
@allow_exec_option
@pass_app
def render_cmd(app: App, profile: str, target: str | None, out: str, allow_exec: bool) -> None:
    """Write the engine's job files of a profile, to read or to run by hand."""
    from .. import api

    rendered = api.render(profile, Path(out), target_dir=_target(target), allow_exec=allow_exec)
    for path in rendered.files:
        app.ui.line(str(path))
    if rendered.placeholder:
        app.ui.line(f"run them in {out} as their first comment says, with DISKBENCH_TARGET set to an "
                    "existing directory on the disk to measure")
