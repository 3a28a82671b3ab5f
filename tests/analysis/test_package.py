"""The library's own promises: no QGIS or Qt inside it, one version from metadata.txt."""

import ast
import configparser
from pathlib import Path

import pytest

import analysis

PACKAGE = Path(analysis.__file__).resolve().parent
FORBIDDEN = ("qgis", "PyQt5", "PyQt6", "PySide2", "PySide6", "sip")


@pytest.mark.parametrize("module", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_analysis_imports_no_qgis_or_qt(module):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    ]
    assert not [name for name in imported if name.split(".")[0] in FORBIDDEN]


def test_version_is_the_plugin_metadata_version():
    metadata = configparser.ConfigParser()
    metadata.read(PACKAGE.parent / "metadata.txt", encoding="utf-8")
    assert analysis.__version__ == metadata.get("general", "version")


def test_profiles_ship_inside_the_package():
    assert (PACKAGE / "profiles" / "kiryas_joel.toml").is_file()


MODULES = {
    ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    for p in PACKAGE.rglob("*.py")
}


def _imports_of(module_path: Path) -> set[str]:
    """Every ``analysis`` module a module imports when it runs, at any level (function-level
    imports too; not those only a type checker reads)."""
    relative = module_path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    package = parts[:-1]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    found = set()
    tree = ast.parse(module_path.read_text(encoding="utf-8"))
    # Imports under ``if TYPE_CHECKING:`` never run (annotations only): they make no cycle.
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from pkg import module`` depends on the module; ``from module import name`` on it.
            submodules = {f"{target}.{a.name}" for a in node.names}
            found |= {m for m in submodules if m in MODULES} or {target}
    return found


def _module_graph() -> dict[str, set[str]]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return {
        name: {m for m in _imports_of(path) if m in modules and m != name} for name, path in modules.items()
    }


def test_analysis_has_no_import_cycles():
    """No cycle among analysis's modules, counting imports inside functions (which hide one)."""
    graph = _module_graph()
    # A package's __init__ that only documents its modules imports none of them.
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt) :] + [nxt] if nxt in stack else [node, nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_analysis_never_imports_the_plugin():
    """The library reaches the plugin (the PDF writer) only through a registered entry point."""
    offenders = {
        name: sorted(m for m in _imports_of(path) if m.split(".")[0] in ("qgis_plugin", "swppp_review"))
        for name, path in ((p.stem, p) for p in PACKAGE.rglob("*.py"))
    }
    assert not {k: v for k, v in offenders.items() if v}
    sources = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))
    assert "sys.path.append" not in sources and "sys.path.insert" not in sources


def test_the_pdf_writer_is_registered_where_the_plugin_is_installed():
    from importlib.metadata import entry_points

    found = entry_points()
    group = (
        found.select(group="swppp_review.pdf_writers")
        if hasattr(found, "select")
        else found.get("swppp_review.pdf_writers", ())
    )
    assert [e.value for e in group] == ["qgis_plugin.report_layout:standalone_pdf_report"]
