"""``df.broadhead``: a pandas accessor and a polars namespace.

They are registered when pandas or polars is imported, before or after
``import broadhead``; importing broadhead imports neither (it would cost their
import time to users of the other).
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any, Optional, Sequence, Union

_done: set = set()


class BroadheadFrame:
    """``df.broadhead``: Broadhead's filters and projections on this frame, giving
    frames of the same kind back (pandas keeps the index)."""

    def __init__(self, df: Any) -> None:
        self._df = df

    def filter(self, where: str) -> Any:
        """The rows where the SQL predicate ``where`` is TRUE."""
        from . import filter

        return filter(self._df, where)

    def select(self, exprs: Union[str, Sequence[str]], where: Optional[str] = None) -> Any:
        """The SQL expressions ``exprs`` (``AS`` names allowed), on the rows where
        ``where`` is TRUE."""
        from . import select

        return select(self._df, exprs, where)

    def mask(self, where: str) -> Any:
        """A boolean pyarrow array: TRUE where ``where`` is TRUE."""
        from . import Filter

        return Filter(self._df, where).mask(self._df)

    def count(self, where: str) -> int:
        """How many rows ``where`` selects."""
        from . import Filter

        return Filter(self._df, where).count(self._df)


def _register(name: str) -> None:
    if name in _done:
        return
    module = sys.modules.get(name)
    if module is None:
        return
    if name == "pandas":
        register = getattr(getattr(module, "api", None), "extensions", None)
        if register is None:
            return
        _done.add(name)
        register.register_dataframe_accessor("broadhead")(BroadheadFrame)
    elif name == "polars":
        api = getattr(module, "api", None)
        if api is None or not hasattr(api, "register_dataframe_namespace"):
            return
        _done.add(name)
        api.register_dataframe_namespace("broadhead")(BroadheadFrame)


class _Watcher(importlib.abc.MetaPathFinder):
    """Registers the extensions once pandas or polars has been imported."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in ("pandas", "polars") or fullname in _done:
            return None
        # The spec the other finders give, with its loader wrapped to register
        # after the module has run.
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, fullname)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, name: str) -> None:
        self._inner = inner
        self._name = name

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        # The module's own loader runs it; the spec's loader is restored so that
        # reloads and introspection see the real one.
        module.__spec__.loader = self._inner
        module.__loader__ = self._inner
        self._inner.exec_module(module)
        _register(self._name)

    def __getattr__(self, attr):
        return getattr(self._inner, attr)


def install() -> None:
    """Registers the extensions for whichever of pandas and polars is imported,
    now or later."""
    for name in ("pandas", "polars"):
        _register(name)
    if not any(isinstance(f, _Watcher) for f in sys.meta_path) and len(_done) < 2:
        sys.meta_path.insert(0, _Watcher())
