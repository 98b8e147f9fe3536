"""Stage 1 on the second set of labelled real texts (``datasets/real-dev2``), as on real-dev.

    .venv/bin/python -m benchmarks.bench_steps_real_dev2 [--quick] [--structures ol table ...]

The rules of stage 1 were tuned on ``../shared/real-dev/``. This set (89 texts for 12 other
tasks, labelled the same way; its README) was labelled after that and measured before any
change made for it, so its first figures said how far the tuning carries to texts and tasks it
had not seen (one rule has been made from it since; the README says which). Same figures as
``bench_steps_real``; writes benchmarks/results/steps_real_dev2.json.
"""

from __future__ import annotations

import sys

from benchmarks.bench_steps_real import main_on_set


if __name__ == "__main__":
    sys.exit(main_on_set("real-dev2", sys.argv[1:]))
