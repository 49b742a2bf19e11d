"""Package names loaded on first use (PEP 562): importing the package loads none of them."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: each name of `where` imported from the module it
    maps to when first asked for, then kept in the package like any other name."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
