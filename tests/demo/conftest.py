"""One small `verirank demo` run shared by every test of this folder.

The run uses the committed HowToBench subset when it exists (else the same
subset is built into a temporary folder with `verirank howtobench build --small`),
limited to 4 queries (one per app) and their top 5 results, so the whole
pipeline runs for real in well under a minute on an idle machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

#: arguments of the shared run besides --data and --out
DEMO_ARGS = ["--queries", "4", "--set", "extraction.search.top_n=5"]


def make_app() -> typer.Typer:
    """A CLI with the demo, report and evaluate commands, registered as verirank.cli does."""
    from verirank.commands import demo, training

    app = typer.Typer()
    demo.register(app)
    training.register(app)
    return app


@dataclass
class DemoRun:
    out: Path
    data: Path
    output: str
    seconds: float
    app: typer.Typer

    def invoke(self, *args: str):
        return CliRunner().invoke(self.app, [str(a) for a in args])


@pytest.fixture(scope="session")
def demo_data(tmp_path_factory) -> Path:
    from verirank_core.resources import SMALL_BENCH

    if (SMALL_BENCH / "qrels.txt").exists():
        return SMALL_BENCH
    from howtobench.build import build_benchmark

    out = tmp_path_factory.mktemp("howtobench-small")
    build_benchmark(out, small=True)
    return out


@pytest.fixture(scope="session")
def demo_run(demo_data, tmp_path_factory) -> DemoRun:
    out = tmp_path_factory.mktemp("demo") / "out"
    app = make_app()
    started = time.perf_counter()
    result = CliRunner().invoke(app, ["demo", "--data", str(demo_data), "--out", str(out), *DEMO_ARGS])
    seconds = time.perf_counter() - started
    if result.exit_code != 0:
        raise AssertionError(f"verirank demo failed ({result.exit_code}):\n{result.output}\n{result.exception!r}")
    return DemoRun(out=out, data=demo_data, output=result.output, seconds=seconds, app=app)
