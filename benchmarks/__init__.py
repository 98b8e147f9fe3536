import os

# Benchmarks time the work itself: no verdict from the per-user verdict cache (bench_reuse names its own file)
os.environ.setdefault("VERIRANK_VERDICT_CACHE", "off")
