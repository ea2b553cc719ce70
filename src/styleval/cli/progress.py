"""A tqdm progress bar behind the library's ``progress(description, done, total)`` callback."""
from __future__ import annotations

import sys
from typing import Callable

from tqdm import tqdm


class ProgressBar:
    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._bar: tqdm | None = None

    def __call__(self, description: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            self._bar = tqdm(total=total, unit="job", file=sys.stderr, leave=False)
        self._bar.set_description(description)
        self._bar.n = done
        self._bar.refresh()
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def make(enabled: bool) -> Callable[[str, int, int], None]:
    return ProgressBar(enabled)
