"""The stage contract and the one runner every pipeline goes through.

A stage is an object with a ``name`` that is called as
``stage(run, cfg, progress) -> counts``: it reads and writes plain files of the
run directory ``run``, and returns a JSON-able dict of counts. Whatever else
it needs (the query file, a saved model, an HTTP session) is given when the
stage object is made, so every stage has the same call. ``progress`` is a
tqdm-like factory: ``progress(iterable=None, total=None, desc="", unit="it")``.
A stage declares the files of the run directory it reads (``requires``); the
runner checks them before it starts the stage and names the command that
writes a missing one (:data:`MADE_BY`).

:func:`run_stages` runs a list of stages over one run directory. It is the only
code that writes the stage log of ``manifest.json``: per stage invocation the
resolved config, the pipeline that ran it, a fingerprint of the settings the
stage's output depends on, its counts and timings. With ``reuse=True`` (the
demo, the experiments) a finished stage whose fingerprint is unchanged is
skipped unless an earlier stage ran again, and a stage whose records are only
ever appended (``append_only``) refuses to add records made with other
settings to the folder. With ``reuse=False`` (``verirank run`` and the
single-stage commands) every stage runs, and each resumes by itself (its
records are appended, done items skipped).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Protocol, Sequence, runtime_checkable

from verirank_core.config import RunConfig
from verirank_core.errors import ConfigError, StoreError
from verirank_core.store import RunDir

__all__ = ["Counts", "Progress", "Stage", "StageOutcome", "MADE_BY", "require", "run_stages", "last_entry",
           "null_progress", "digest", "describe_outcome", "diff_settings"]

Counts = dict[str, Any]
#: a tqdm-like factory ``progress(iterable=None, total=None, desc="", unit="it")``; the one meaning of "progress"
Progress = Callable[..., Any]

#: the command that writes each run-directory file a stage can require (``{dir}``: the run directory)
MADE_BY: dict[str, str] = {
    "queries.jsonl": "verirank search --queries FILE --out {dir}",
    "serp.jsonl": "verirank search --queries FILE --out {dir}",
    "pages.jsonl": "verirank fetch {dir}",
    "extraction.jsonl": "verirank extract {dir}",
    "execution.jsonl": "verirank execute {dir}",
    "features.parquet": "verirank features {dir}",
    "reranked.jsonl": "verirank rerank {dir} --model MODEL",
}


def require(run: RunDir, names: Sequence[str]) -> None:
    """Fail with the one "X not found: run `verirank Y` first" message when a file of ``run`` is missing."""
    for name in names:
        path = run / name
        if not path.exists():
            command = MADE_BY.get(name, "the stage that writes it").format(dir=run.path)
            raise StoreError(f"{path} not found: run `{command}` first")


@runtime_checkable
class Stage(Protocol):
    """What :func:`run_stages` runs (see the module docstring)."""

    #: the name in the stage log (``search``, ``fetch``, ``extract``, ``execute``, ``features``, ``rerank``...)
    name: str
    #: True when the stage only appends records: its settings cannot change within one run folder
    append_only: bool
    #: the files of the run directory it reads (keys of :data:`MADE_BY`): checked before it runs
    requires: tuple[str, ...]

    def fingerprint(self, cfg: RunConfig) -> Any:
        """The settings (JSON-able) this stage's output depends on, besides the stages before it."""

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        ...


@dataclass
class StageOutcome:
    #: "ran" or "reused"
    status: str
    counts: Counts = field(default_factory=dict)
    seconds: Optional[float] = None
    cpu_seconds: Optional[float] = None


def digest(*parts: Any) -> Any:
    """Settings as plain JSON (pydantic models dumped), for a fingerprint."""
    out = [p.model_dump(mode="json") if hasattr(p, "model_dump") else p for p in parts]
    return json.loads(json.dumps(out[0] if len(out) == 1 else out, sort_keys=True, default=str))


def null_progress(iterable: Any = None, total: Optional[int] = None, desc: str = "", unit: str = "it") -> Any:
    """A progress factory that shows nothing."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=True)


def last_entry(run: RunDir, name: str) -> dict[str, Any]:
    """The last stage-log entry of ``name`` (empty when the stage never started)."""
    return next((e for e in reversed(run.read_manifest().get("stages", [])) if e.get("stage") == name), {})


def diff_settings(then: Any, now: Any, prefix: str = "") -> list[str]:
    """``key: old then, new now`` for every setting that differs between two fingerprints.

    Only keys both sides have are compared: a setting added to the config after
    a folder was made keeps the old behaviour by default, so it does not block a resume.
    """
    if isinstance(then, dict) and isinstance(now, dict):
        out: list[str] = []
        for key in sorted(set(then) & set(now)):
            out += diff_settings(then[key], now[key], f"{prefix}.{key}" if prefix else key)
        return out
    return [] if then == now else [f"{prefix or 'value'}: {then!r} then, {now!r} now"]


def _check_append_only(run: RunDir, stages: Sequence[Stage], prints: dict[str, Any], pipeline: str,
                       hint: str) -> None:
    """Refuse settings that differ from the records an append-only stage already wrote."""
    for stage in stages:
        done = last_entry(run, stage.name)
        if stage.append_only and "fingerprint" in done and diff_settings(done["fingerprint"], prints[stage.name]):
            detail = "; ".join(diff_settings(done["fingerprint"], prints[stage.name])[:5])
            raise ConfigError(f"{run.path} holds a {pipeline} of other {stage.name} settings ({detail}); "
                              f"its records cannot be mixed with new ones: {hint}")


def run_stages(
    run: RunDir,
    cfg: RunConfig,
    stages: Sequence[Stage],
    *,
    pipeline: str = "run",
    progress: Optional[Progress] = None,
    echo: Callable[[str], None] = print,
    until: Optional[str] = None,
    reuse: bool = False,
    hint: str = "give another --out",
    before_stage: Optional[Callable[[Stage], None]] = None,
    describe: Optional[Callable[[str, StageOutcome], str]] = None,
) -> dict[str, StageOutcome]:
    """Run ``stages`` in order over ``run`` (up to and including ``until``); returns each stage's outcome.

    ``echo`` is told one line per stage, made by ``describe(name, outcome)``;
    ``before_stage(stage)`` is called before a stage runs (e.g. to log which code ran it).
    A stage may have a ``warm_up(cfg)`` method: it is called for every stage that
    will run before the first one starts, to start slow things in the background.
    """
    describe = describe or describe_outcome
    names = [s.name for s in stages]
    if until is not None and until not in names:
        raise ConfigError(f"unknown stage {until!r} for --until (valid: {', '.join(names)})")
    run.ensure()
    progress = progress or null_progress
    prints = {s.name: s.fingerprint(cfg) for s in stages}
    if reuse:
        _check_append_only(run, stages, prints, pipeline, hint)

    selected = list(stages) if until is None else list(stages)[:names.index(until) + 1]
    reused = _reusable(run, selected, prints) if reuse else set()
    for stage in selected:
        if stage.name not in reused and hasattr(stage, "warm_up"):
            stage.warm_up(cfg)  # e.g. start worker processes while the stages before it run

    out: dict[str, StageOutcome] = {}
    for stage in stages:
        if stage.name in reused:
            previous = last_entry(run, stage.name)
            out[stage.name] = StageOutcome("reused", previous.get("counts", {}))
            echo(describe(stage.name, out[stage.name]))
        else:
            require(run, stage.requires)
            if before_stage is not None:
                before_stage(stage)
            run.start_stage(stage.name, cfg.to_manifest(), pipeline=pipeline, fingerprint=prints[stage.name])
            wall, cpu = time.perf_counter(), time.process_time()
            counts = stage(run, cfg, progress)
            outcome = StageOutcome("ran", counts, round(time.perf_counter() - wall, 2),
                                   round(time.process_time() - cpu, 2))
            run.finish_stage(stage.name, counts, seconds=outcome.seconds, cpu_seconds=outcome.cpu_seconds)
            out[stage.name] = outcome
            echo(describe(stage.name, outcome))
        if stage.name == until:
            break
    return out


def _reusable(run: RunDir, stages: Sequence[Stage], prints: dict[str, Any]) -> set[str]:
    """The leading stages whose last run finished with the same fingerprint: they are not run again.

    A stage after one that runs runs too, since its input may have changed.
    """
    out: set[str] = set()
    for stage in stages:
        previous = last_entry(run, stage.name)
        if ("finished" not in previous or "fingerprint" not in previous
                or diff_settings(previous["fingerprint"], prints[stage.name])):
            break
        out.add(stage.name)
    return out


def describe_outcome(name: str, outcome: StageOutcome) -> str:
    """``extract: pages=20, ok=14 (3.1s)`` or ``extract: reused (pages=20, ok=14)``."""
    if outcome.status == "reused":
        return f"{name}: reused ({_short(outcome.counts)})"
    return f"{name}: {_short(outcome.counts)} ({outcome.seconds or 0:.1f}s)"


def _short(counts: Counts) -> str:
    shown = [f"{k}={v}" for k, v in counts.items()
             if (isinstance(v, (int, float)) and not isinstance(v, bool)) or (isinstance(v, str) and len(v) <= 24)]
    return ", ".join(shown[:8]) or "done"
