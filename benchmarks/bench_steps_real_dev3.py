"""Stage 1 on the third set of labelled real texts (``datasets/real-dev3``), held out.

    .venv/bin/python -m benchmarks.bench_steps_real_dev3 [--quick] [--structures ol table ...]

62 texts for 8 tasks that neither real-dev nor real-dev2 has (its README). No rule has been
made from it: its figures say how far stage 1 carries to texts and tasks it has not seen.
Same figures as ``bench_steps_real``; writes benchmarks/results/steps_real_dev3.json.
"""

from __future__ import annotations

import sys

from benchmarks.bench_steps_real import main_on_set


if __name__ == "__main__":
    sys.exit(main_on_set("real-dev3", sys.argv[1:]))
