"""HowToBench: an honest benchmark of mobile How-to search, built from simulator worlds.

Modules, in the order the builder uses them:

* :mod:`howtobench.tasks`     task definitions (YAML) -> :class:`Task`
* :mod:`howtobench.replay`    the labeller: replays an action sequence on a fresh simulator
* :mod:`howtobench.wording`   renders UI steps as instruction sentences (plain, paraphrased, breadcrumbs)
* :mod:`howtobench.pages`     page variants and the six HTML page styles
* :mod:`howtobench.serp`      the original ranking (popularity prior, not correctness)
* :mod:`howtobench.qrels`     TREC qrels from replayed gold sequences
* :mod:`howtobench.site`      writes the static site and serves it on 127.0.0.1
* :mod:`howtobench.build`     ties everything together (``verirank howtobench build``)
* :mod:`howtobench.stats`     the Table 3-style statistics
* :mod:`howtobench.pretrain`  the synthetic pre-training set (``verirank howtobench pretrain``)
* :mod:`howtobench.importers` the paper's formats (How-to WeWeb layout, MagicWand trajectories)
"""
