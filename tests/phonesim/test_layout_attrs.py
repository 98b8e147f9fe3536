"""NodeAttrs (the keyword arguments layout helpers pass on) must list exactly UINode's settable fields."""

from __future__ import annotations

import dataclasses

from phonesim.layout import NodeAttrs, UINode


def test_node_attrs_match_uinode_fields():
    fields = {f.name: f.type for f in dataclasses.fields(UINode) if f.name not in ("cls", "package", "bounds")}
    declared = dict(NodeAttrs.__annotations__)
    assert set(declared) == set(fields)
    # same annotation text (both postponed), so a retyped field is caught too
    def bare(annotation: str) -> str:
        return annotation.replace('"', "").replace("'", "")

    assert {k: bare(getattr(v, "__forward_arg__", v)) for k, v in declared.items()} == \
        {k: bare(v) for k, v in fields.items()}
