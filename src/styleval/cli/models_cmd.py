"""``styleval models``: list the catalog models with their source, size, content hash and whether they load."""
from __future__ import annotations

import argparse
import json
import os

from ..errors import StyleEvalError
from ..models import catalog as cat


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the offline model catalog: source, size, content hash, whether it loads")
    p.add_argument("--no-load", action="store_true", help="only check that the files are there (fast)")
    p.add_argument("--no-hash", action="store_true", help="skip content hashes")
    p.add_argument("--json", action="store_true", help="print JSON lines")
    p.set_defaults(run=run)


def _size(path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _fmt_size(size: int) -> str:
    n = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)  # pragma: no cover


def _try_load(entry: cat.CatalogEntry) -> str:
    from ..models import encoder, pool

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        if entry.kind == cat.WORD_VECTORS:
            wv = pool.word_vectors(entry.name)
            return f"yes ({len(wv)} words x {wv.dim})"
        if entry.kind == cat.SENTENCE_TRANSFORMERS:
            enc = encoder.sentence_encoder(entry.name)
            dim = enc.get_sentence_embedding_dimension() if hasattr(enc, "get_sentence_embedding_dimension") else "?"
            return f"yes ({dim} dimensions)"
        if entry.kind == cat.SPACY:
            nlp = pool.spacy_pipeline(entry.name)
            return f"yes ({', '.join(nlp.pipe_names)})"
        if entry.kind == cat.CAUSAL_LM_GGUF:
            from ..lm.loading import converted_dir, resolve_causal_lm

            folder = converted_dir(resolve_causal_lm(entry.name))
            if not folder.is_dir():
                return "installed (converted to a cached folder on first use, about a minute)"
            return f"yes (converted: {folder})"
        return "unknown kind"
    except StyleEvalError as exc:
        return f"no: {exc}"
    except Exception as exc:  # report any load failure as a row, not a crash
        return f"no: {type(exc).__name__}: {exc}"


def run(args: argparse.Namespace) -> int:
    rows = []
    for name in cat.names():
        entry = cat.CATALOG[name]
        row = {"name": name, "kind": entry.kind, "source": f"pip install {entry.distribution}",
               "licence": entry.licence, "installed": entry.is_installed(), "path": "", "size": "", "sha256": "",
               "loads": ""}
        if row["installed"]:
            path = entry.locate()
            row["path"] = str(path)
            row["size"] = _fmt_size(_size(path))
            if not args.no_hash:
                from ..models.hashing import content_hash

                row["sha256"] = content_hash(path)[:12]
            row["loads"] = "not checked" if args.no_load else _try_load(entry)
        else:
            row["loads"] = f"no: not installed ({entry.install_hint})"
        rows.append(row)
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    cols = ("name", "kind", "source", "size", "sha256", "loads")
    widths = [max(len(str(r[c])) for r in rows + [dict(zip(cols, cols))]) for c in cols[:-1]]
    print("  ".join(c.ljust(w) for c, w in zip(cols[:-1], widths)) + "  " + cols[-1])
    for r in rows:
        print("  ".join(str(r[c]).ljust(w) for c, w in zip(cols[:-1], widths)) + "  " + str(r["loads"]))
    return 0
