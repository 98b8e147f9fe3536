"""Imported once by the fork server that starts worker processes (see ``execution/runner.py``).

It does the slow part of a worker's start-up before any worker exists: the
stage modules, ``sentence_transformers`` (seconds to import) and the MiniLM
weights. Each worker then forks from this process with all of it in memory,
so a second device costs a fork, not another start-up.

Math libraries are held to one thread first: a process that forks must not
own an OpenMP pool, and the workers fill the cores between them anyway.
Last, everything loaded is moved out of the garbage collector's sight
(``gc.freeze``): a full collection in a worker would otherwise walk the
half-million objects of torch and transformers (a quarter of a second each
time) and, by touching them, copy the memory the workers share.
"""

from __future__ import annotations

import gc
import logging
import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import execution.agent  # noqa: E402,F401
import execution.judge  # noqa: E402,F401
import execution.predict  # noqa: E402,F401
import execution.runner  # noqa: E402,F401

try:
    import torch

    torch.set_num_threads(1)
    from verirank_core.embed import preload_model

    preload_model()
except Exception as exc:  # a worker loads (or fails on) the model itself, with its own error
    logging.getLogger(__name__).warning("fork server could not preload the embedding model: %s", exc)

gc.freeze()
