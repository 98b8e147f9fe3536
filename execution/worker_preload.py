"""Imported once by the fork server that starts worker processes (see ``execution/process_slot.py``).

It does the slow part of a worker's start-up before any worker exists: the
stage modules and the simulator, and the MiniLM weights (numpy, 0.2 s;
``verirank_core/minilm.py``). Each worker then forks from this process with all of it in memory,
so a second device costs a fork, not another start-up.

Math libraries are held to one thread first: a process that forks must not
own a BLAS or OpenMP pool, and the workers fill the cores between them anyway.
Last, everything loaded is moved out of the garbage collector's sight
(``gc.freeze``): a full collection in a worker would otherwise walk every
loaded object and, by touching them, copy the memory the workers share.
"""

from __future__ import annotations

import gc
import logging

from execution.process_slot import one_thread_per_process

one_thread_per_process()  # before numpy's BLAS starts: its thread pool reads the environment

import execution.agent  # noqa: E402,F401
import execution.judge  # noqa: E402,F401
import execution.knowledge  # noqa: E402,F401
import execution.predict  # noqa: E402,F401
import verirank_core.isolation  # noqa: E402,F401
# what a worker's first page imported lazily (70 ms of each worker's start, measured): the simulator
# a sim: device opens, its drawing, and the PNG writer of the screenshots it saves
import phonesim.device  # noqa: E402,F401
import phonesim.render  # noqa: E402,F401
from PIL import Image  # noqa: E402

Image.preinit()  # the image formats PIL loads on its first save (PNG among them)

try:
    from verirank_core.embed import preload_model, set_encoder_threads

    preload_model()
    set_encoder_threads(1)  # numpy may have started its BLAS pool before the environment said one thread
    one_thread_per_process()  # the model's libraries are loaded now
except Exception as exc:  # a worker loads (or fails on) the model itself, with its own error
    logging.getLogger(__name__).warning("fork server could not preload the embedding model: %s", exc)

gc.freeze()
