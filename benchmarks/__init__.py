import os

# Benchmarks time the work itself: no verdict from the per-user verdict cache (bench_reuse names its own file)
os.environ.setdefault("VERIRANK_VERDICT_CACHE", "off")
# ... and label vectors under each run (the per-user file would hold them from an earlier benchmark);
# bench_scale_devices names a machine-wide file of its own
os.environ.setdefault("VERIRANK_VECTOR_CACHE", "cache/vectors.sqlite")
