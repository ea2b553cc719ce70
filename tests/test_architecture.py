"""The package's shape: no import cycle but the metric registry's, the core free of training and the web app
(import-linter contracts in pyproject.toml, run by .ci/run), nothing in src/ reaching scripts/ or studies/, and
studies using public names only."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
grimp = pytest.importorskip("grimp")

#: The registry loads every built-in metric module, and each registers itself with the registry: that one cycle
#: is by design (metric families import ``registry.register``; ``registry.available`` imports the families).
REGISTRY_CYCLE = "styleval.metrics.registry"


def test_no_import_cycle_but_the_registry():
    graph = grimp.build_graph("styleval", cache_dir=None)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    cycles = [c for c in code_shape().cycles(edges) if REGISTRY_CYCLE not in c]  # Tarjan's components
    assert cycles == []


def python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def imported_modules(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every import statement."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level:
            out.append((node.lineno, node.module or "", [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names]
    return out


def test_src_never_imports_scripts_or_studies():
    bad = [f"{p.relative_to(ROOT)}:{line}: {module}" for p in python_files("src")
           for line, module, _ in imported_modules(p) if module.split(".")[0] in {"scripts", "studies", "benchmarks"}]
    assert bad == []


def test_studies_use_public_names_only():
    bad = []
    for p in python_files("studies"):
        for line, module, names in imported_modules(p):
            if not module.startswith("styleval"):
                continue
            private = [part for part in module.split(".") + names if part.startswith("_") and part != "__version__"]
            if private:
                bad.append(f"{p.relative_to(ROOT)}:{line}: {module} {names}")
    assert bad == []


def code_shape():
    """The AST checker of ``studies/maintenance/code_shape.py`` (which also counts the figures of the package's
    shape): one implementation of "private name crossing packages" for the study and for this test."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("code_shape", ROOT / "studies" / "maintenance" / "code_shape.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_private_name_crosses_packages():
    """import-linter contracts speak of modules, not of the names inside them, so this walks every module's AST: no
    ``_name`` (module, function, constant) of one top-level styleval package is imported or read as an attribute
    by another package."""
    shape = code_shape()
    assert shape.private_imports(shape.parse_all(ROOT / "src")) == []


def test_the_private_name_check_finds_each_way_of_crossing(tmp_path):
    shape = code_shape()
    files = {
        "styleval/__init__.py": "",
        "styleval/lm/__init__.py": "",
        "styleval/lm/_impl.py": "X = 1\n",
        "styleval/lm/loading.py": "def _load(): ...\ndef load(): ...\n",
        "styleval/lm/inside.py": "from ._impl import X\nfrom .loading import _load\n",  # same package: allowed
        "styleval/training/__init__.py": "",
        "styleval/training/a.py": "from ..lm.loading import _load\n",
        "styleval/training/b.py": "from styleval.lm._impl import X\n",
        "styleval/training/c.py": "from ..lm import loading\n\n\ndef f():\n    return loading._load()\n",
        "styleval/training/d.py": "import styleval.lm._impl\n",
        "styleval/training/e.py": "from ..lm.loading import load\nfrom ..lm import loading\nloading.load()\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = shape.private_imports(shape.parse_all(tmp_path))
    assert sorted(found) == ["styleval.training.a:1: styleval.lm.loading _load",
                             "styleval.training.b:1: styleval.lm._impl X",
                             "styleval.training.c:5: styleval.lm.loading _load",
                             "styleval.training.d:1: styleval.lm._impl"]
