"""``styleval models``: every model styleval uses: the assets installed from PyPI (catalog) and the models shipped
inside the package (style, preservation, acceptability), each with its size, content hash and whether it loads;
shipped models also with what they are for and a held-out figure from their card."""
from __future__ import annotations

import argparse
import json
import os

from ..errors import StyleEvalError
from ..models import catalog as cat


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the installed and shipped models: size, content hash, use, whether they "
                                      "load")
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
            get_dim = getattr(enc, "get_embedding_dimension", None) or getattr(enc, "get_sentence_embedding_dimension",
                                                                               None)
            dim = get_dim() if get_dim is not None else "?"
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


def _uses(kind: str, name: str, card: dict) -> str:
    """What a shipped model is for: the metrics whose default it is, or (style classifiers) model=auto."""
    import inspect

    from ..metrics import registry as metrics
    from ..models import registry

    users = []
    for metric, cls in sorted(metrics.available().items()):
        param = inspect.signature(cls.__init__).parameters.get("model")
        if param is not None and param.default == name:
            users.append(metric)
    if users:
        return f"{', '.join(users)} (its default model)"
    if kind == registry.STYLE and card.get("kind") == "classifier":
        return f"style_accuracy, style_probability, style_emd: model=auto for {'/'.join(card.get('labels', []))}"
    if kind == registry.PRESERVATION:
        return f"preservation:model={name}"
    return f"model={name}"


def _try_load_shipped(kind: str, name: str) -> str:
    from ..models import registry

    try:
        if kind == registry.STYLE:
            from ..style_models import load_style_model

            model = load_style_model(name)
            return f"yes ({model.kind}: {', '.join(model.labels)})"
        if kind == registry.PRESERVATION:
            from ..preservation.pretrained import load_preservation_model

            load_preservation_model(name)
            return "yes (encoders load on first use)"
        from ..acceptability.model import load_acceptability

        load_acceptability(name)
        return "yes (the LM loads on first use)"
    except StyleEvalError as exc:
        return f"no: {exc}"
    except Exception as exc:  # report any load failure as a row, not a crash
        return f"no: {type(exc).__name__}: {exc}"


def shipped_rows(no_hash: bool, no_load: bool) -> list[dict]:
    """One row per model shipped inside the package: name, kind, size, hash, use, held-out figure, loads."""
    from ..models import cards, registry

    rows = []
    for kind in registry.SHIPPED:
        for name, folder in registry.shipped(kind).items():
            card = cards.read_card(folder, kind)
            row = {"name": name, "kind": kind, "source": "shipped", "path": str(folder),
                   "version": str(card.get("version", "")), "size": _fmt_size(_size(folder)), "sha256": "",
                   "for": _uses(kind, name, card), "held_out": cards.held_out_headline(card),
                   "human_judgments": cards.human_figure_lines(card),
                   "loads": "not checked" if no_load else _try_load_shipped(kind, name)}
            if not no_hash:
                from ..models.hashing import content_hash

                row["sha256"] = content_hash(folder)[:12]
            rows.append(row)
    return rows


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
    shipped = shipped_rows(args.no_hash, args.no_load)
    if args.json:
        for row in rows + shipped:
            print(json.dumps(row))
        return 0
    print("installed from PyPI (the catalog):")
    _print_table(rows, ("name", "kind", "source", "size", "sha256", "loads"))
    print("\nshipped inside the package (each folder's README.md is its card; `styleval metrics NAME` quotes its "
          "figures on human judgments):")
    _print_table(shipped, ("name", "kind", "version", "size", "sha256", "loads"),
                 extra=(("for", "for"), ("held_out", "held out")))
    return 0


def _print_table(rows: list[dict], cols: tuple[str, ...], extra: tuple[tuple[str, str], ...] = ()) -> None:
    """Columns padded to their widest cell, the last one left ragged; ``extra`` fields on indented lines below."""
    widths = [max(len(str(r[c])) for r in rows + [dict(zip(cols, cols))]) for c in cols[:-1]]
    print("  ".join(c.ljust(w) for c, w in zip(cols[:-1], widths)) + "  " + cols[-1])
    for r in rows:
        print("  ".join(str(r[c]).ljust(w) for c, w in zip(cols[:-1], widths)) + "  " + str(r[cols[-1]]))
        for key, label in extra:
            if r.get(key):
                print(f"    {label}: {r[key]}")
