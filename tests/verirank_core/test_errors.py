"""The public error surface: every error is exported and sits under VerirankError."""

from __future__ import annotations

import inspect

import verirank_core.errors as errors


def test_every_error_class_is_exported_and_rooted() -> None:
    classes = {
        name for name, obj in vars(errors).items()
        if inspect.isclass(obj) and issubclass(obj, Exception) and obj.__module__ == errors.__name__
    }
    assert classes == set(errors.__all__)
    for name in classes:
        assert issubclass(getattr(errors, name), errors.VerirankError)


def test_the_docstring_tree_names_every_error() -> None:
    for name in errors.__all__:
        assert name in errors.__doc__, f"{name} missing from the hierarchy drawing"
