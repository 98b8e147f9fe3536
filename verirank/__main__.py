"""``python -m verirank``: the same CLI as the ``verirank`` command."""

from verirank.cli import app

if __name__ == "__main__":
    app(prog_name="verirank")
