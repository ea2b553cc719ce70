"""Render small tables (a header and rows of cells) as aligned plain text or as a LaTeX ``tabular``."""
from __future__ import annotations

from typing import Sequence

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "±": r"$\pm$", "↑": r"$\uparrow$", "↓": r"$\downarrow$", "→": r"$\rightarrow$"}


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: str | None = None) -> str:
    """Columns padded to their widest cell; ``align`` is one letter per column, ``l`` or ``r`` (default: the first
    column left, the others right)."""
    ncol = len(header)
    align = align or ("l" + "r" * (ncol - 1))
    if len(align) != ncol or any(len(r) != ncol for r in rows):
        raise ValueError("every row and the alignment must have one entry per header column")
    widths = [max(len(str(x)) for x in [header[i]] + [r[i] for r in rows]) for i in range(ncol)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).ljust(w) if a == "l" else str(c).rjust(w)
                         for c, w, a in zip(cells, widths, align)).rstrip()

    rule = "  ".join("-" * w for w in widths).rstrip()
    return "\n".join([line(header), rule] + [line(r) for r in rows])


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters (and render ±, arrows in math mode)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def latex_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str | None = None,
                label: str | None = None, align: str | None = None, bold: Sequence[tuple[int, int]] = ()) -> str:
    """A ``table`` with a booktabs ``tabular``; cells are escaped; ``bold`` lists (row, column) cells to set in bold."""
    ncol = len(header)
    align = align or ("l" + "r" * (ncol - 1))
    marked = set(bold)
    body = []
    for i, row in enumerate(rows):
        cells = [latex_escape(c) for c in row]
        cells = [f"\\textbf{{{c}}}" if (i, j) in marked else c for j, c in enumerate(cells)]
        body.append(" & ".join(cells) + r" \\")
    lines = [r"\begin{table}[t]", r"\centering", f"\\begin{{tabular}}{{{align}}}", r"\toprule",
             " & ".join(latex_escape(h) for h in header) + r" \\", r"\midrule", *body, r"\bottomrule",
             r"\end{tabular}"]
    if caption:
        lines.append(f"\\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(f"\\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
