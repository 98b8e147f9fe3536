"""HowToBench: an honest benchmark of mobile How-to search, built from simulator worlds.

Modules, in the order the builder uses them:

* :mod:`verirank.bench.tasks`     task definitions (YAML) -> :class:`Task`
* :mod:`verirank.bench.replay`    the labeller: replays an action sequence on a fresh simulator
* :mod:`verirank.bench.wording`   renders UI steps as instruction sentences (plain, paraphrased, breadcrumbs)
* :mod:`verirank.bench.pages`     page variants and the six HTML page styles
* :mod:`verirank.bench.serp`      the original ranking (popularity prior, not correctness)
* :mod:`verirank.bench.qrels`     TREC qrels from replayed gold sequences
* :mod:`verirank.bench.site`      writes the static site and serves it on 127.0.0.1
* :mod:`verirank.bench.build`     ties everything together (``verirank bench build``)
* :mod:`verirank.bench.stats`     the Table 3-style statistics
* :mod:`verirank.bench.pretrain`  the synthetic pre-training set (``verirank bench pretrain``)
* :mod:`verirank.bench.importers` the paper's formats (How-to WeWeb layout, MagicWand trajectories)
"""
