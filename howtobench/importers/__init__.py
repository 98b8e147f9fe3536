"""Converters between the MagicWand paper's data formats and verirank's run directory."""
