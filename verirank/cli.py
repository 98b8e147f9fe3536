"""The ``verirank`` command line.

Stage commands live in ``verirank/commands/<stage>.py``; this module only
assembles them so that ``verirank --help`` lists everything in pipeline order.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="verirank",
    help=(
        "Verify mobile How-to search results by running their steps on a device, then rerank.\n\n"
        "Pipeline: search -> fetch -> extract (stage 1) -> execute (stage 2) -> "
        "features -> train/rerank/evaluate/export (stage 3). `verirank run` chains the stages; "
        "`verirank demo` runs everything on the bundled benchmark with no API key."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)



def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"verirank {version('verirank')}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Keeps `verirank` a command group even while one stage is installed."""


# Order here is the order of `verirank --help`.
_COMMAND_MODULES = (
    "verirank.commands.extraction",
    "verirank.commands.execution",
    "verirank.commands.ranking",
    "verirank.commands.training",
    "verirank.commands.pipeline",
    "verirank.commands.demo",
    "verirank.commands.howtobench",
    "verirank.commands.sim",
    "verirank.commands.farm",
    "verirank.commands.worlds",
)

for _name in _COMMAND_MODULES:
    importlib.import_module(_name).register(app)


if __name__ == "__main__":  # pragma: no cover
    app()
