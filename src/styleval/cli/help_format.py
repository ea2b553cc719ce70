"""The help formatter of the training verbs: every option's default in its help line."""
from __future__ import annotations

import argparse


class DefaultsFormatter(argparse.HelpFormatter):
    """Appends ``(default: VALUE)`` to an option's help unless the help already names its default or there is
    none to name (None, False, an empty string or list)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        nothing = default is None or default is False or default is argparse.SUPPRESS or default in ("", [])
        if "default" in text or not action.option_strings or nothing:
            return text
        return f"{text} (default: %(default)s)".lstrip()
