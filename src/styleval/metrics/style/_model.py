"""Shared machinery of metrics built on a style model (shipped name, model folder, or ``auto``)."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...errors import InputError
from ...records import Direction
from ...style_models.model import CLASSIFIER, StyleModel
from ..base import Aspect, Batch, Metric, SegmentStats

AUTO = "auto"


def _styles(batch: Batch) -> set[str]:
    out: set[str] = set()
    for d in batch.directions:
        if d is not None:
            out.update({d.source_style, d.target_style})
    return out


def choose_model(kind: str, styles: set[str]) -> str:
    """The first shipped model of ``kind`` whose labels cover ``styles`` (``auto``)."""
    from ...style_models.pretrained import load_style_model, shipped_models

    tried = []
    for name in shipped_models():
        model = load_style_model(name)
        if model.kind != kind:
            continue
        tried.append(f"{name} ({', '.join(model.labels)})")
        try:
            for s in styles:
                model.style_index(s)
        except InputError:
            continue
        return name
    raise InputError(f"no shipped {kind} covers the styles {', '.join(sorted(styles))}; shipped: "
                     f"{'; '.join(tried) or '(none)'}. Train one with `styleval train-style` and pass model=<folder>")


class StyleModelMetric(Metric):
    """A style metric scoring outputs with a style model chosen by the ``model`` parameter."""

    aspect = Aspect.STYLE
    needs: ClassVar[frozenset[str]] = frozenset({"target_style"})
    libraries: ClassVar[tuple[str, ...]] = ("scikit-learn", "numpy")
    model_kind: ClassVar[str] = CLASSIFIER
    model: str

    def get_params(self) -> dict:
        params = super().get_params()
        params.pop("batch_size", None)
        return params

    def model_name(self, batch: Batch | None = None) -> str:
        """The style model this metric uses for ``batch``: ``model``, or the shipped one ``auto`` picks for the
        batch's styles."""
        if self.model != AUTO:
            return self.model
        if batch is None:
            raise InputError("model='auto' is resolved from the directions of a batch")
        return choose_model(self.model_kind, _styles(batch))

    def load(self, batch: Batch | None = None) -> StyleModel:
        from ...style_models.pretrained import load_style_model

        name = self.model_name(batch)
        model = load_style_model(name)
        if model.kind != self.model_kind:
            raise InputError(f"metric {self.name!r} needs a {self.model_kind}, but model {name!r} is a {model.kind}")
        return model

    def compute(self, batch: Batch) -> SegmentStats:
        """The statistics, with the identity of the model that computed them among the resolved resources (what
        ``auto`` chose is known only once a batch is seen)."""
        out = super().compute(batch)
        out.resources.update(self._model_resources(self.model_name(batch)))
        return out

    def resources(self) -> dict[str, str]:
        if self.model == AUTO:
            return {"style_model": AUTO}
        return self._model_resources(self.model)

    def _model_resources(self, name: str) -> dict[str, str]:
        from ...style_models.pretrained import load_style_model

        res = load_style_model(name).resources()
        if not getattr(self, "calibrated", True) and "style_calibration" in res:
            res["style_calibration"] = "not used"
        return res

    @staticmethod
    def target_index(model: StyleModel, directions: list[Direction | None]) -> np.ndarray:
        """Index of each segment's target style among the model's labels (poles for a regressor)."""
        cache: dict[str, int] = {}
        out = []
        for d in directions:
            if d is None:
                raise InputError("a segment has no transfer direction")
            if d.target_style not in cache:
                cache[d.target_style] = model.style_index(d.target_style)
                model.style_index(d.source_style)  # an unknown source style is an error too
            out.append(cache[d.target_style])
        return np.asarray(out, dtype=int)
