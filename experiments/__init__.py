"""The paper's experiments on HowToBench: Tables 5, 6, 7, the feature ablation and judge agreement.

Each experiment is a script (``python -m experiments.table5 [--small]``);
the shared plumbing (benchmark, pipeline run, pre-training set, tables,
MLflow) lives in :mod:`experiments.common`. See ``experiments/README.md``.
"""
