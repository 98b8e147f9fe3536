"""The two tracked workflows behind ``verirank train`` and ``verirank evaluate``.

Each reads its inputs, does the work with pure functions from
``ranking.models`` / ``ranking.metrics`` / ``ranking.significance``, writes
its local outputs, and (unless ``tracking_uri`` is None) records one MLflow
run through ``ranking.tracking``.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Mapping, Optional

from verirank_core.ranking_config import EvalConfig, TrainConfig
from ranking.metrics import (
    EvalResult, Qrels, Run, evaluate, qrels_from_labels, read_qrels, read_trec_run, run_from_scores, write_trec_run,
)
from ranking.models import make_model, split_by_query
from ranking.models.base import Ranker
from ranking.models.data import file_sha256, load_ltr_data
from ranking.significance import PairedTest, compare
from ranking.svmlight import LTRData
from verirank_core.errors import ConfigError
from verirank_core.store import atomic_write_json

__all__ = ["TrainOutcome", "build_model", "train", "EvalReport", "evaluate_runs", "format_eval_table"]


# --- train -----------------------------------------------------------------------------------


@dataclasses.dataclass
class TrainOutcome:
    model: Ranker
    out_dir: Path
    seconds: float
    valid: Optional[EvalResult]
    test: Optional[EvalResult]
    run_id: Optional[str] = None
    model_uri: Optional[str] = None


def build_model(name: str, train_cfg: TrainConfig, seed: int, epochs: Optional[int] = None) -> Ranker:
    """A ranker by name with the config's shared settings applied where the model has them.

    Precedence: the model's defaults < seed/epochs/num_threads < ``train.params``.
    """
    probe = make_model(name)
    fields = set(probe.get_params())
    shared = {"seed": seed, "num_threads": train_cfg.num_threads,
              "epochs": epochs if epochs is not None else train_cfg.epochs}
    params = {k: v for k, v in shared.items() if k in fields}
    params.update(train_cfg.params)
    return make_model(name, **params)


def _scores_run(model: Ranker, data: LTRData) -> tuple[Run, Qrels]:
    scores = model.predict(data.X, data.qids, feature_names=data.feature_names)
    qids = [str(q) for q in data.qids]
    return run_from_scores(qids, data.docs, scores), qrels_from_labels(qids, data.docs, data.y)


def train(
    data_path: Path,
    model_name: str,
    out_dir: Path,
    *,
    train_cfg: TrainConfig = TrainConfig(),
    eval_cfg: EvalConfig = EvalConfig(),
    seed: int = 42,
    epochs: Optional[int] = None,
    query_file: Optional[Path] = None,
    valid_path: Optional[Path] = None,
    valid_query_file: Optional[Path] = None,
    test_path: Optional[Path] = None,
    test_query_file: Optional[Path] = None,
    config: Optional[Mapping[str, object]] = None,
    tracking_uri: Optional[str] = None,
    experiment: str = "verirank",
    run_name: Optional[str] = None,
) -> TrainOutcome:
    """Fit ``model_name`` on ``data_path``, save it to ``out_dir`` and track the run.

    Validation: ``valid_path`` if given, else a seeded ``train.valid_frac`` of
    the training queries (0 = none). The reranked run and per-query metrics
    are computed on the test file when given, else on the validation data.
    """
    data = load_ltr_data(data_path, query_file=query_file, label_column=train_cfg.label_column)
    width = data.X.shape[1]
    files = [Path(data_path)] + ([Path(query_file)] if query_file else [])
    valid: Optional[LTRData] = None
    if valid_path is not None:
        valid = load_ltr_data(valid_path, query_file=valid_query_file, label_column=train_cfg.label_column,
                              n_features=width)
        files.append(Path(valid_path))
    elif train_cfg.valid_frac > 0:
        keep, hold = split_by_query(data.qids, train_cfg.valid_frac, seed)
        data, valid = data.subset(keep), data.subset(hold)
    test = None
    if test_path is not None:
        test = load_ltr_data(test_path, query_file=test_query_file, label_column=train_cfg.label_column,
                             n_features=width)
    for other in (valid, test):
        if other is not None and other.feature_names != data.feature_names:
            raise ConfigError("validation/test data have different feature columns than the training data")

    model = build_model(model_name, train_cfg, seed, epochs)
    started = time.perf_counter()
    eval_set = None if valid is None else (valid.X, valid.y, valid.qids)
    model.fit(data.X, data.y, data.qids, feature_names=data.feature_names, eval_set=eval_set)
    seconds = time.perf_counter() - started
    out_dir = Path(out_dir)
    model.save(out_dir)

    results: dict[str, EvalResult] = {}
    runs: dict[str, Run] = {}
    for split, part in (("valid", valid), ("test", test)):
        if part is not None:
            runs[split], qrels = _scores_run(model, part)
            results[split] = evaluate(runs[split], qrels, eval_cfg.metrics, gain=eval_cfg.gain)
    report_split = "test" if "test" in runs else ("valid" if "valid" in runs else None)
    if report_split:
        write_trec_run(out_dir / f"{report_split}.trec", runs[report_split], tag=model.name)

    outcome = TrainOutcome(model=model, out_dir=out_dir, seconds=seconds,
                           valid=results.get("valid"), test=results.get("test"))
    summary: dict[str, object] = {
        "model": model.name, "params": model.get_params(), "seconds": round(seconds, 3),
        "n_train_queries": data.n_queries, "n_features": width,
        **{f"{k}_mean": v.mean for k, v in results.items()},
    }
    if tracking_uri is not None:
        import mlflow

        from ranking import tracking

        tracking.configure(tracking_uri, experiment)
        with tracking.start_run("train", run_name=run_name or model.name,
                                tags={"verirank.model": model.name}) as run:
            tracking.log_params({
                "model": model.name,
                **{f"hp.{k}": v for k, v in model.get_params().items()},
                "feature_set": ",".join(data.feature_names) if width <= 60 else f"{width} columns f1..f{width}",
                "n_features": width,
                "data_path": str(data_path),
                "data_sha256": file_sha256(files),
                "n_train_queries": data.n_queries,
                "n_valid_queries": valid.n_queries if valid is not None else 0,
                "valid_source": "file" if valid_path else (f"split {train_cfg.valid_frac}" if valid else "none"),
                "metric_gain": eval_cfg.gain,
            })
            if config is not None:
                tracking.log_config(config)
            tracking.log_history(model.history_)
            mlflow.log_metric("train_seconds", seconds)
            for split, result in results.items():
                tracking.log_eval(result, split)
            if report_split:
                tracking.log_run_file(runs[report_split], name=f"{report_split}.trec", tag=model.name)
                tracking.log_per_query(results[report_split], name="per_query.csv")
            importance, title = _importance(model, valid or test, seed)
            if importance:
                tracking.log_importance_plot(importance, title)
            outcome.model_uri = tracking.log_ranker(model)
            outcome.run_id = run.info.run_id
        summary["mlflow_run_id"] = outcome.run_id
        summary["model_uri"] = outcome.model_uri
    atomic_write_json(out_dir / "train_summary.json", summary)
    return outcome


def _importance(model: Ranker, data: Optional[LTRData], seed: int) -> tuple[dict[str, float], str]:
    native = model.feature_importance()
    if native is not None:
        kind = "weights" if model.name == "lr" else "gain"
        return native, f"{model.name}: feature {kind}"
    if data is None:
        return {}, ""
    from ranking.models.evaluation import permutation_importance

    # wide data (LETOR) would need one prediction pass per column: cap it
    values = permutation_importance(model, data.X, data.y, data.qids, seed=seed, max_features=40)
    return values, f"{model.name}: permutation importance (NDCG@5 drop)"


# --- evaluate ----------------------------------------------------------------------------------


@dataclasses.dataclass
class EvalReport:
    result: EvalResult
    baseline: Optional[EvalResult]
    tests: list[PairedTest]
    run_id: Optional[str] = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"system": self.result.summary()}
        if self.baseline is not None:
            out["baseline"] = self.baseline.summary()
            out["significance"] = [t.to_dict() for t in self.tests]
        if self.run_id:
            out["mlflow_run_id"] = self.run_id
        return out


def evaluate_runs(
    run_path: Path,
    qrels_path: Path,
    *,
    baseline_path: Optional[Path] = None,
    eval_cfg: EvalConfig = EvalConfig(),
    seed: int = 42,
    tracking_uri: Optional[str] = None,
    experiment: str = "verirank",
    run_name: Optional[str] = None,
) -> EvalReport:
    """Score a TREC run (and optionally a baseline run) against qrels, with significance."""
    qrels = read_qrels(qrels_path)
    run = read_trec_run(run_path)
    result = evaluate(run, qrels, eval_cfg.metrics, gain=eval_cfg.gain)
    baseline, tests = None, []
    if baseline_path is not None:
        baseline = evaluate(read_trec_run(baseline_path), qrels, eval_cfg.metrics, gain=eval_cfg.gain)
        tests = compare(result, baseline, n_resamples=eval_cfg.n_resamples, seed=seed)
    report = EvalReport(result=result, baseline=baseline, tests=tests)
    if tracking_uri is not None:
        import mlflow

        from ranking import tracking

        tracking.configure(tracking_uri, experiment)
        with tracking.start_run("evaluate", run_name=run_name or Path(run_path).stem) as mlrun:
            files = [Path(run_path), Path(qrels_path)] + ([Path(baseline_path)] if baseline_path else [])
            tracking.log_params({
                "run_path": str(run_path), "qrels_path": str(qrels_path),
                "baseline_path": str(baseline_path or ""), "metric_gain": eval_cfg.gain,
                "metrics": ",".join(eval_cfg.metrics), "data_sha256": file_sha256(files),
            })
            tracking.log_eval(result, "system")
            if baseline is not None:
                tracking.log_eval(baseline, "baseline")
                mlflow.log_metrics({
                    f"p_ttest.{tracking.metric_key(t.metric)}": t.p_ttest for t in tests
                } | {f"p_permutation.{tracking.metric_key(t.metric)}": t.p_permutation for t in tests})
            tracking.log_run_file(run, name="run.trec")
            tracking.log_per_query(result)
            mlflow.log_dict(report.to_dict(), "report.json")
            report.run_id = mlrun.info.run_id
    return report


def format_eval_table(report: EvalReport) -> str:
    """A plain-text table: metric, system, [baseline, delta, p-values], answerable-only mean."""
    r = report.result
    header = ["metric", "system"]
    if report.baseline is not None:
        header += ["baseline", "delta", "p(t-test)", "p(perm)"]
    header += ["system (answerable)"]
    rows = []
    tests = {t.metric: t for t in report.tests}
    for m in r.metrics:
        row = [m, f"{r.mean[m]:.4f}"]
        if report.baseline is not None:
            t = tests[m]
            row += [f"{t.baseline:.4f}", f"{t.delta:+.4f}", f"{t.p_ttest:.4g}", f"{t.p_permutation:.4g}"]
        row.append(f"{r.mean_answerable[m]:.4f}")
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in rows]
    lines.append(f"queries: {len(r.per_query)} judged, {len(r.answerable)} with a relevant page, "
                 f"{len(r.skipped)} in the run without judgments (skipped)")
    return "\n".join(lines)
