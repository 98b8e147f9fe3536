"""Stage 1 on the sixth set of labelled real texts (``datasets/real-dev6``), held out.

    .venv/bin/python -m benchmarks.bench_steps_real_dev6 [--quick] [--structures ol table ...]

32 texts for 4 goals no other set has (developer options, ring volume, forgetting a Wi-Fi network,
emergency information; its README), labelled in the twenty-fifth session before any rule was made.
Same figures as ``bench_steps_real``; writes benchmarks/results/steps_real_dev6.json.
"""

from __future__ import annotations

import sys

from benchmarks.bench_steps_real import main_on_set


if __name__ == "__main__":
    sys.exit(main_on_set("real-dev6", sys.argv[1:]))
