"""Stage 1 on the fourth set of labelled real texts (``datasets/real-dev4``), held out.

    .venv/bin/python -m benchmarks.bench_steps_real_dev4 [--quick] [--structures ol table ...]

64 texts for 8 tasks that no other set has (its README), labelled in the nineteenth session after
that session's rules were made. Same figures as ``bench_steps_real``; writes
benchmarks/results/steps_real_dev4.json.
"""

from __future__ import annotations

import sys

from benchmarks.bench_steps_real import main_on_set


if __name__ == "__main__":
    sys.exit(main_on_set("real-dev4", sys.argv[1:]))
