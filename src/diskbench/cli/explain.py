"""``diskbench explain RUN [JOB]``: the bound of each result in words, its limits, warnings, next step."""

from __future__ import annotations

import click

from .app import App, pass_app, run_id_argument


@click.command()
@run_id_argument
@click.argument("job", required=False)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@pass_app
def explain(app: App, run_id: str, job: str | None, fmt: str) -> None:
    """Why each result of a run is what it is: the limit that bound it, with figures."""
    from .. import api
    from ..reports.documents import dumps, explain_json

    store = app.store()
    explanations = api.explain(run_id, job, store=store)
    if fmt == "json":
        app.ui.write(dumps(explain_json(store.get_run(run_id)["id"], explanations)))
        return
    app.ui.write("\n\n".join("\n".join(e.lines) for e in explanations) + "\n")
