"""Stage 1 on the seventh set of labelled real texts (``datasets/real-dev7``), held out.

    .venv/bin/python -m benchmarks.bench_steps_real_dev7 [--quick] [--structures ol table ...]

30 texts for 4 goals no other set has (APN settings, pairing a Bluetooth device, gesture navigation,
touch sounds; its README), labelled in the twenty-sixth session before any rule was made.
Same figures as ``bench_steps_real``; writes benchmarks/results/steps_real_dev7.json.
"""

from __future__ import annotations

import sys

from benchmarks.bench_steps_real import main_on_set


if __name__ == "__main__":
    sys.exit(main_on_set("real-dev7", sys.argv[1:]))
