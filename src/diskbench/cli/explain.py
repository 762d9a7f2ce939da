"""``diskbench explain RUN [JOB]``: the bound of each result in words, its limits, warnings, next step."""

from __future__ import annotations

import click

from .app import App, pass_app


@click.command()
@click.argument("run_id")
@click.argument("job", required=False)
@pass_app
def explain(app: App, run_id: str, job: str | None) -> None:
    """Why each result of a run is what it is: the limit that bound it, with figures."""
    from ..attribution.explain import explain as explain_one
    from ..attribution.explain import select
    from ..errors import DiskbenchError

    store = app.store()
    run = store.get_run(run_id)
    results = select(store.get_results(run["id"]), job)
    if not results:
        raise DiskbenchError(f"run {run['id']} has no result for job {job!r}",
                             hint=f"see `diskbench show {run['id']}` for its workloads")
    blocks = ["\n".join(explain_one(r)) for r in results]
    app.ui.write("\n\n".join(blocks) + "\n")
