"""Metric registry: decorator registration, entry-point plugins, helpful errors for unknown names."""
from __future__ import annotations

from importlib import metadata
from typing import Any, TypeVar

from ..errors import InputError, UnknownNameError
from .base import Against, Metric
from .spec import parse_spec

ENTRY_POINT_GROUP = "styleval.metrics"

_REGISTRY: dict[str, type[Metric]] = {}
_plugins_loaded = False

M = TypeVar("M", bound=type[Metric])


def register(cls: M) -> M:
    """Class decorator: make a metric available by its ``name``."""
    name = cls.name
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"metric name {name!r} is registered twice ({_REGISTRY[name].__module__}, {cls.__module__})")
    _REGISTRY[name] = cls
    return cls


def _load_builtin() -> None:
    from . import content, fluency, judge, overall, style  # noqa: F401  (importing registers the built-in metrics)


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        loaded = ep.load()
        if isinstance(loaded, type) and issubclass(loaded, Metric):
            register(loaded)
        elif callable(loaded):  # a function that registers metrics itself
            loaded()


def available() -> dict[str, type[Metric]]:
    """All registered metrics by name, built-ins and plugins."""
    _load_builtin()
    _load_plugins()
    return dict(sorted(_REGISTRY.items()))


def metric_class(name: str) -> type[Metric]:
    metrics = available()
    try:
        return metrics[name]
    except KeyError:
        raise UnknownNameError("metric", name, list(metrics)) from None


def create(name: str, **params: Any) -> Metric:
    """Instantiate a registered metric with keyword parameters; unknown parameters are an error."""
    cls = metric_class(name)
    allowed = cls.param_names()
    fixed = getattr(cls, "fixed_against", None)
    if "against" in params and "against" not in allowed and fixed is not None:  # PINC: always the source
        if Against.parse(params["against"]) is not fixed:
            raise InputError(f"metric {name!r} is always scored against the {fixed.value}, not "
                             f"{Against.parse(params['against']).value}")
        params = {k: v for k, v in params.items() if k != "against"}
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise InputError(f"metric {name!r} has no parameter(s) {', '.join(unknown)}; "
                         f"its parameters: {', '.join(allowed) or '(none)'}")
    return cls(**params)


def accepts_against(cls: type[Metric]) -> bool:
    return "against" in cls.param_names()

__all__ = ["register", "available", "metric_class", "create", "parse_spec", "accepts_against", "Against"]
