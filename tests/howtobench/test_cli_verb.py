"""The benchmark builder's CLI verb is `howtobench`; `bench` still works but is out of --help."""

from __future__ import annotations

from typer.testing import CliRunner

from verirank.cli import app


def test_howtobench_verb_and_hidden_bench_alias():
    runner = CliRunner()
    top = runner.invoke(app, ["--help"])
    assert top.exit_code == 0
    assert "howtobench" in top.output
    assert "│ bench " not in top.output
    for verb in ("howtobench", "bench"):
        result = runner.invoke(app, [verb, "--help"])
        assert result.exit_code == 0, result.output
        assert "build" in result.output and "pretrain" in result.output
