"""The core every stage shares: errors, records, the run store, typed config, the device interface, LLM and embeddings.

It imports no stage (``extraction``, ``execution``, ``ranking``), no side product
(``phonesim``, ``howtobench``) and not the CLI (``verirank``); see docs/architecture.md.
"""
