"""CLI commands, one module per stage. Each module defines ``register(app)``.

Heavy libraries (torch, faiss, mlflow) are imported inside the command
functions so that ``verirank --help`` stays instant.
"""
