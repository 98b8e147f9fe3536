"""Stage 1 on the fifth set of labelled real texts (``datasets/real-dev5``), held out.

    .venv/bin/python -m benchmarks.bench_steps_real_dev5 [--quick] [--structures ol table ...]

64 more texts for 8 tasks of the other sets (its README), drawn from texts that name the task and
Settings, labelled in the twenty-fourth session before any rule was made. Same figures as
``bench_steps_real``; writes benchmarks/results/steps_real_dev5.json.
"""

from __future__ import annotations

import sys

from benchmarks.bench_steps_real import main_on_set


if __name__ == "__main__":
    sys.exit(main_on_set("real-dev5", sys.argv[1:]))
