"""The command line: parse, call the library, render. Nothing here a library user would need."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError
from rich.table import Table

from . import __version__
from .doctor import checks
from .errors import DiskbenchError, ProfileError
from .execute import Runner, RunOptions
from .executor import LocalExecutor
from .importer import import_fio
from .plan import build_plan
from .preflight import check_profile
from .profile import (
    Host,
    LoadedProfile,
    Machine,
    Profile,
    bundled_profiles,
    load_profile,
    parse_profile,
    profile_json_schema,
)
from .render import job_filename, render_fio
from .report import FORMATS, render
from .ssh import parse_destination
from .store import Store
from .ui import UI
from .units import human_seconds

format_option = click.option("--format", "fmt", type=click.Choice(FORMATS), default="table",
                             show_default=True, help="Output format.")
profile_option = click.option("--profile", "-p", "profile", required=True, metavar="NAME|FILE",
                              help="A bundled profile name (see `diskbench profiles`) or a YAML file.")
set_option = click.option("--set", "overrides", multiple=True, metavar="KEY.PATH=VALUE",
                          help="Override a profile value, e.g. machines[0].size=Standard_L32s_v2 (repeatable).")
target_option = click.option("--target", "-t", "target", metavar="DIR",
                             help="Run in this existing directory instead of the profile's target.")


class App:
    """Shared state of one invocation: where the store is, and who prints."""

    def __init__(self, db: str | None, quiet: bool) -> None:
        self.db = db
        self.ui = UI(quiet=quiet)

    def store(self) -> Store:
        return Store(self.db)

    def emit(self, fmt: str, run: dict[str, Any], results: list[Any]) -> None:
        out = render(fmt, run, results)
        if isinstance(out, Table):
            self.ui.print(out)
            for note in sorted({n for r in results for n in r.notes}):
                self.ui.line(f"note: {note}")
        else:
            self.ui.write(out)


pass_app = click.make_pass_decorator(App)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="diskbench")
@click.option("--db", envvar="DISKBENCH_DB", metavar="PATH",
              help="Result store (SQLite). Default: the user data dir; env DISKBENCH_DB.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@click.pass_context
def cli(ctx: click.Context, db: str | None, quiet: bool) -> None:
    """Benchmark storage with fio: profile -> plan -> run -> parse -> store -> report."""
    ctx.obj = App(db, quiet)


def remote_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Options for running on SSH hosts; shared by run, latency and resume."""
    for option in reversed([
        click.option("--key", "key_file", metavar="FILE", help="SSH private key (default: agent, ~/.ssh)."),
        click.option("--sudo", is_flag=True, help="Use passwordless sudo for privileged steps."),
        click.option("--accept-new-host-key", is_flag=True,
                     help="Trust a host key seen for the first time (recorded; a changed key is refused)."),
        click.option("--known-hosts", metavar="FILE", help="known_hosts file (default ~/.ssh/known_hosts)."),
        click.option("--destroy-data-on", "destroy", metavar="DEV", multiple=True,
                     help="A device whose data diskbench may destroy (repeatable)."),
        click.option("--no-install-fio", is_flag=True, help="Fail instead of installing fio on a host."),
    ]):
        f = option(f)
    return f


def _options(target: str | None, hosts: list[Host], destroy: tuple[str, ...], accept_new: bool,
             known_hosts: str | None) -> RunOptions:
    return RunOptions(target_dir=target if hosts else _target(target),
                      hosts=[h.model_dump() for h in hosts], destroy_data_on=list(destroy),
                      accept_new_host_key=accept_new, known_hosts=known_hosts)


def _hosts(destinations: tuple[str, ...], key_file: str | None, sudo: bool, no_install: bool) -> list[Host]:
    try:
        return [parse_destination(d, key_file=key_file, sudo=sudo, install_fio=not no_install)
                for d in destinations]
    except (ValueError, ValidationError) as exc:
        raise click.BadParameter(f"use user@address[:port] ({exc})", param_hint="--host") from None


@cli.command()
@profile_option
@set_option
@target_option
@click.option("--host", "-H", "destinations", metavar="USER@ADDR[:PORT]", multiple=True,
              help="Run a profile without hosts on these SSH hosts (repeatable).")
@click.option("--repeats", type=click.IntRange(1, 100), help="Run every job N times, interleaved.")
@click.option("--subscription", help="Azure subscription (default: AZURE_SUBSCRIPTION_ID or the Azure CLI's).")
@click.option("--ssh-source", metavar="CIDR|any",
              help="Who may reach the VMs' SSH port (default: your detected public address).")
@click.option("--keep", is_flag=True, help="Keep the Azure machines for debugging (prints how to delete them).")
@remote_options
@format_option
@pass_app
def run(app: App, profile: str, overrides: tuple[str, ...], target: str | None, destinations: tuple[str, ...],
        repeats: int | None,
        subscription: str | None, ssh_source: str | None, keep: bool, key_file: str | None, sudo: bool,
        accept_new_host_key: bool, known_hosts: str | None, destroy: tuple[str, ...], no_install_fio: bool,
        fmt: str) -> None:
    """Run a profile and print its results."""
    hosts = _hosts(destinations, key_file, sudo, no_install_fio)
    options = _options(target, hosts, destroy, accept_new_host_key, known_hosts)
    options.repeats, options.keep = repeats, keep
    loaded = load_profile(profile, overrides)
    _preflight(app, loaded.profile)
    plan = build_plan(loaded, target_dir=options.target_dir, hosts=hosts or None,
                      destroy_data_on=list(destroy), repeats=repeats)
    store = app.store()
    azure = None
    if loaded.profile.machines:
        from .cli_azure import provider_factory

        azure = provider_factory(app, store, subscription, ssh_source)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a killed CI job tears down like Ctrl-C
    outcome = Runner(store, app.ui, azure=azure).start(plan, options)
    _finish(app, store, outcome.run_id, fmt, outcome.messages)


@cli.command()
@click.argument("destination", metavar="USER@ADDR[:PORT]")
@click.option("--path", "path", metavar="DIR", help="Directory on the host to measure (default: a "
              "scratch directory in /var/tmp, i.e. the OS disk; /mnt is the Azure temp disk).")
@click.option("--runtime", default="20s", show_default=True, help="Measured time per job.")
@click.option("--size", default="1G", show_default=True, help="Test file size.")
@remote_options
@format_option
@pass_app
def latency(app: App, destination: str, path: str | None, runtime: str, size: str, key_file: str | None,
            sudo: bool,
            accept_new_host_key: bool, known_hosts: str | None, destroy: tuple[str, ...],
            no_install_fio: bool, fmt: str) -> None:
    """QD1 8k random-write and random-read latency of one host, in about a minute."""
    hosts = _hosts((destination,), key_file, sudo, no_install_fio)
    loaded = load_profile("latency")
    text = loaded.text.replace("runtime: 20s", f"runtime: {runtime}").replace("size: 1G", f"size: {size}")
    loaded = LoadedProfile(profile=parse_profile(text, loaded.path), path=loaded.path, text=text)
    options = _options(path, hosts, destroy, accept_new_host_key, known_hosts)
    plan = build_plan(loaded, target_dir=path, hosts=hosts)
    store = app.store()
    outcome = Runner(store, app.ui).start(plan, options)
    _finish(app, store, outcome.run_id, fmt, outcome.messages)


@cli.command()
@click.argument("run_id")
@click.option("--accept-new-host-key", is_flag=True, help="Trust a host key seen for the first time.")
@format_option
@pass_app
def resume(app: App, run_id: str, accept_new_host_key: bool, fmt: str) -> None:
    """Run the jobs of an interrupted or failed run that have no result yet."""
    store = app.store()
    outcome = Runner(store, app.ui).resume(run_id, RunOptions(accept_new_host_key=accept_new_host_key))
    _finish(app, store, outcome.run_id, fmt, outcome.messages)


def _finish(app: App, store: Store, run_id: str, fmt: str, messages: list[str]) -> None:
    run = store.get_run(run_id)
    app.emit(fmt, run, store.get_results(run_id))
    if run["status"] != "completed":
        raise DiskbenchError(
            f"run {run_id} is {run['status']}: {len(messages)} job(s) failed ({messages[0]})"
            if messages else f"run {run_id} is {run['status']}",
            hint=f"raw outputs are in {run['artifacts_dir']}; `diskbench resume {run_id}` retries",
        )


def _target(target: str | None) -> str | None:
    return str(Path(target).resolve()) if target else None


@cli.command()
@profile_option
@set_option
@target_option
@click.option("--refresh-prices", is_flag=True, help="Fetch current VM prices from the Azure Retail Prices API.")
@pass_app
def plan(app: App, profile: str, overrides: tuple[str, ...], target: str | None, refresh_prices: bool) -> None:
    """Show what a profile would run, for how long and at what cost, without running anything."""
    p = build_plan(load_profile(profile, overrides), target_dir=_target(target))
    machines = {m.name: m for m in p.profile.profile.machines}
    table = Table(title=f"profile {p.profile.profile.name}: {p.profile.profile.description}",
                  title_justify="left")
    heads = ["#", "machine"] + (["vm size", "storage"] if machines else []) + [
        "target", "workload", "rw", "bs", "iodepth", "numjobs", "size", "runtime", "expected"]
    for head in heads:
        table.add_column(head)
    for j in p.jobs:
        w = j.workload
        vm = [machines[j.machine].size, _storage(machines[j.machine])] if machines else []
        table.add_row(str(j.seq + 1), j.machine, *vm, j.target_label, w.name, str(w.rw), str(w.bs),
                      str(w.iodepth), str(w.numjobs), str(w.size), str(w.runtime),
                      human_seconds(j.expected_s))
    table.caption = f"{len(p.jobs)} job(s), expected {human_seconds(p.expected_s)}"
    app.ui.print(table)
    if p.profile.profile.machines:
        from .cli_azure import costs

        costs(app, p, refresh_prices)
    _preflight(app, p.profile.profile)


def _preflight(app: App, profile: Profile) -> None:
    """Offline checks of machines against their VM sizes: every problem at once, then fail."""
    if not profile.machines:
        return
    problems = check_profile(profile)
    if not problems:
        app.ui.line(f"pre-flight: {len(profile.machines)} machine(s) fit their VM sizes "
                    "(offline check against diskbench's size data)")
        return
    for problem in problems:
        app.ui.line(f"pre-flight: {problem}")
    raise ProfileError(f"profile {profile.name!r}: {len(problems)} pre-flight problem(s); nothing was created",
                       hint="see the lines above")


def _storage(m: Machine) -> str:
    os_disk = m.os_disk
    parts = [f"OS ephemeral on {os_disk.ephemeral}" if os_disk.ephemeral
             else f"OS {os_disk.type} cache={os_disk.caching}"]
    parts += [f"{d.count}x {d.type} {d.size_gb}G cache={d.caching}" for d in m.data_disks]
    return ", ".join(parts)


@cli.command("render")
@profile_option
@target_option
@click.option("--out", "out", required=True, type=click.Path(file_okay=False), help="Folder to write.")
@pass_app
def render_cmd(app: App, profile: str, target: str | None, out: str) -> None:
    """Write the fio job files of a profile, to read or to run by hand."""
    p = build_plan(load_profile(profile), target_dir=_target(target))
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for job in p.jobs:
        directory = job.target.dir if job.target.dir else "./diskbench-scratch"
        path = folder / job_filename(job)
        path.write_text(render_fio(job, directory), encoding="utf-8")
        app.ui.line(str(path))


@cli.command()
@pass_app
def profiles(app: App) -> None:
    """List the bundled profiles."""
    table = Table(title="bundled profiles", title_justify="left")
    table.add_column("name")
    table.add_column("description")
    for name, path in bundled_profiles().items():
        try:
            description = parse_profile(path.read_text(), str(path)).description
        except DiskbenchError as exc:
            description = f"(invalid: {exc})"
        table.add_row(name, description)
    app.ui.print(table)


@cli.command("profile-schema")
@pass_app
def profile_schema(app: App) -> None:
    """Print the JSON Schema of the profile format."""
    app.ui.write(json.dumps(profile_json_schema(), indent=2) + "\n")


@cli.command()
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True)
@pass_app
def runs(app: App, limit: int) -> None:
    """List stored runs, newest first."""
    store = app.store()
    listed = store.list_runs(limit)
    if not listed:
        app.ui.print(f"no runs in {store.path} yet; start one with `diskbench run --profile local`")
        return
    table = Table(title=f"runs in {store.path}", title_justify="left")
    for head in ("id", "profile", "origin", "started", "status", "jobs", "host"):
        table.add_column(head)
    for r in listed:
        counts = r["job_counts"]
        jobs = f"{counts.get('done', 0)}/{sum(counts.values())}"
        table.add_row(r["id"], r["profile"], r["origin"], r["started"], r["status"], jobs,
                      str(r["facts"].get("hostname", "-")))
    app.ui.print(table)


@cli.command()
@click.argument("run_id")
@format_option
@pass_app
def show(app: App, run_id: str, fmt: str) -> None:
    """Print a stored run again (RUN_ID may be a unique prefix or `last`)."""
    store = app.store()
    run = store.get_run(run_id)
    app.emit(fmt, run, store.get_results(run["id"]))


@cli.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--no-store", is_flag=True, help="Print only; do not store.")
@click.option("--per-job", is_flag=True, help="One result per job name, not per reporting group.")
@format_option
@pass_app
def import_cmd(app: App, file: Path, no_store: bool, per_job: bool, fmt: str) -> None:
    """Read an fio output file (json or json+, noise included) and store/print it."""
    imported = import_fio(file, store=None if no_store else app.store(), per_job=per_job)
    app.emit(fmt, imported.run, imported.results)
    for error in imported.errors:
        app.ui.warn(f"{file}: {error}")


@cli.command()
@pass_app
def doctor(app: App) -> None:
    """Say what is installed and what is missing, with the command that fixes it."""
    missing = 0
    for check in checks(LocalExecutor(), app.db):
        mark = "ok     " if check.ok else "MISSING"
        fix = f"  -> {check.fix}" if check.fix else ""
        app.ui.print(f"{mark} {check.name:8} {check.detail}{fix}")
        missing += not check.ok
    if missing:
        raise DiskbenchError(f"{missing} requirement(s) missing; run the commands shown above")


from . import cli_azure, cli_reports  # noqa: E402,F401 - register sizes, cleanup, report, compare, gate ...


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors as one line, tracebacks only with DISKBENCH_DEBUG=1."""
    debug = os.environ.get("DISKBENCH_DEBUG") == "1"
    try:
        rv = cli.main(args=argv, prog_name="diskbench", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except DiskbenchError as exc:
        if debug:
            raise
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence for users
        if debug:
            raise
        click.echo(f"error: internal error: {type(exc).__name__}: {exc} "
                   "(set DISKBENCH_DEBUG=1 to see the traceback, and please report it)", err=True)
        sys.exit(70)
    sys.exit(rv if isinstance(rv, int) else 0)
