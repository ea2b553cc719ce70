"""The package's shape, read from its source with ``ast`` (nothing is imported): import cycles between styleval's
modules, functions longer than 80 lines, functions with more than 8 parameters, and private names imported from
another styleval package.

    .venv/bin/python studies/maintenance/code_shape.py [--list]

Every import counts, deferred ones inside functions included (they are still a dependency). A parameter is any
argument but ``self``/``cls`` (``*args`` and ``**kwargs`` count one each). A private name is a module or name
starting with ``_`` (dunders excepted) imported from a styleval module outside the importer's own top-level package.
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
LONG_LINES = 80
MANY_PARAMETERS = 8


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def absolute(importer: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute module an ``ImportFrom`` names (relative imports resolved against the importer)."""
    if not level:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def parse_all(src: Path = SRC) -> dict[str, tuple[Path, ast.Module]]:
    """Every module under ``src`` (a folder holding the ``styleval`` package), parsed."""
    return {module_name(p, src): (p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(src.rglob("*.py"))}


def import_graph(trees: dict[str, tuple[Path, ast.Module]]) -> dict[str, set[str]]:
    """Module -> the styleval modules it imports (``from pkg import mod`` counts as importing ``pkg.mod``)."""
    graph: dict[str, set[str]] = {m: set() for m in trees}
    for name, (path, tree) in trees.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = absolute(name, is_package, node.level, node.module)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in trees else base for a in node.names]
            for target in targets:
                while target and target not in trees:  # `import a.b.c` of a name inside a module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def functions(trees: dict[str, tuple[Path, ast.Module]]) -> list[tuple[str, int, int]]:
    """(qualified name, lines, parameters) of every function and method."""
    out = []
    for name, (_, tree) in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
                count = len([p for p in params if p.arg not in ("self", "cls")])
                count += (a.vararg is not None) + (a.kwarg is not None)
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                out.append((f"{name}:{node.lineno}:{node.name}", lines, count))
    return out


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private_imports(trees: dict[str, tuple[Path, ast.Module]]) -> list[str]:
    """``module:line: target name`` for each private name reached from another top-level styleval package: imported
    (``from styleval.lm.loading import _load``, ``from ..stats._validate import check``) or read as an attribute of
    an imported module (``from ..lm import loading`` then ``loading._load``)."""
    out = []
    for name, (path, tree) in trees.items():
        is_package = path.name == "__init__.py"
        own = name.split(".")[:2]
        modules: dict[str, str] = {}  # local name -> a styleval module of another package
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = absolute(name, is_package, node.level, node.module)
                if not base.startswith("styleval") or base.split(".")[:2] == own:
                    continue
                for alias in node.names:
                    parts = [*base.split("."), alias.name]
                    if any(_private(p) for p in parts):
                        out.append(f"{name}:{node.lineno}: {base} {alias.name}")
                    elif f"{base}.{alias.name}" in trees:
                        modules[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("styleval") and alias.name.split(".")[:2] != own:
                        if any(_private(p) for p in alias.name.split(".")):
                            out.append(f"{name}:{node.lineno}: {alias.name}")
                        elif alias.asname:
                            modules[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                    and _private(node.attr)):
                out.append(f"{name}:{node.lineno}: {modules[node.value.id]} {node.attr}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list each finding, not only the counts")
    args = ap.parse_args(argv)
    trees = parse_all()
    found = cycles(import_graph(trees))
    funcs = functions(trees)
    long = sorted((f for f in funcs if f[1] > LONG_LINES), key=lambda f: -f[1])
    many = sorted((f for f in funcs if f[2] > MANY_PARAMETERS), key=lambda f: -f[2])
    private = private_imports(trees)
    print(f"modules: {len(trees)}, functions: {len(funcs)}")
    print(f"import cycles: {len(found)} (modules in them: {sum(len(c) for c in found)})")
    print(f"functions over {LONG_LINES} lines: {len(long)}")
    print(f"functions over {MANY_PARAMETERS} parameters: {len(many)}")
    print(f"private names imported across packages: {len(private)}")
    if args.list:
        for c in found:
            print("cycle:", " ".join(c))
        for f in long:
            print(f"long: {f[0]} ({f[1]} lines)")
        for f in many:
            print(f"parameters: {f[0]} ({f[2]})")
        for p in private:
            print("private:", p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
