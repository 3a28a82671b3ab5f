"""Layers, not folders: which part of ``analysis`` may import which (docs/DESIGN.md, "The layers").

A node is a subpackage (``analysis/checks``) or a top-level module (``analysis/profile.py``);
an edge is any ``import`` or ``from ... import`` in its source, at any level (an import inside a
function is a dependency too, only a later one). ``python tests/analysis/test_layers.py``
prints the graph's cycles (strongly connected components) and the edges that break the order.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "analysis"
PLUGIN = ROOT / "qgis_plugin"

# The allowed order, lowest first: a node imports only nodes of its own layer or of a layer
# below it (and, within a layer, without a cycle). A new subpackage or top-level module gets
# its place here.
LAYERS: tuple[tuple[str, ...], ...] = (
    # the foundation: errors, values, units, dates, geometry, findings, the rules profile
    (
        "about.py",
        "errors.py",
        "limits.py",
        "values.py",
        "markup.py",
        "threads.py",
        "crs.py",
        "units.py",
        "dates.py",
        "geometry.py",
        "overlay.py",
        "findings.py",
        "progress.py",
        "profile.py",
        "tr55.py",
        "dependencies.py",
    ),
    ("io",),  # reading and writing files: vector layers, CSV tables, sheets
    ("charts.py",),  # charts (written through io)
    ("siteplan",),  # what a site plan is, and loading it
    ("phasing",),  # a phasing plan from any source, its schedule, the disturbed faces
    ("reference",),  # reference layers: contract, read, import, store
    ("judge",),  # the engine: sites judged against the reference (evidence, decision)
    ("checks",),  # the chapter's checks on a site plan (Check, CheckResult)
    ("records",),  # construction-phase records and enforcement
    ("checklist",),  # the SWPPP contents checklist, certifications, guarantees
    ("screen",),  # many sites against the reference
    ("registry.py",),  # every check the review runs, in its order
    ("review.py",),  # the review: a loop over the registry
    ("rounds",),  # review rounds: a project's reviews kept, decided, carried and compared
    ("report",),  # the review's outputs
    ("cli",),  # the swppp command
    ("__init__.py",),  # the package: its lazy names
)
# Not even through a layer's order: the checks judge, they do not read files or write outputs.
# The engine neither: it measures, decides and words; its adapters (checks, screen) read.
FORBIDDEN = {"checks": ("io", "report", "cli"), "judge": ("io",)}


def _node(module: str) -> str | None:
    """The node a dotted ``analysis`` module belongs to (None: outside ``analysis``)."""
    parts = module.split(".")
    if parts[0] != "analysis":
        return None
    if len(parts) == 1:
        return "__init__.py"
    return parts[1] if (PACKAGE / parts[1]).is_dir() else f"{parts[1]}.py"


def _imported(path: Path, root: Path) -> list[tuple[str, int]]:
    """``(dotted module, line)`` for every import in ``path`` (relative ones resolved)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "analysis":  # from analysis import checks: the subpackage named
                found += [(f"analysis.{alias.name}", node.lineno) for alias in node.names]
            else:
                found.append((target, node.lineno))
    return found


def import_graph() -> dict[str, dict[str, list[str]]]:
    """node -> {imported node: ["module:line", ...]} for every ``analysis`` source file."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT)
        source = _node(".".join(rel.with_suffix("").parts).removesuffix(".__init__")) or "__init__.py"
        graph[source]  # a node that imports nothing is still a node
        for module, line in _imported(path, ROOT):
            target = _node(module)
            if target is not None and target != source:
                graph[source][target].append(f"{rel}:{line}")
    return graph


def cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _layer_of() -> dict[str, int]:
    return {node: number for number, layer in enumerate(LAYERS) for node in layer}


def upward_edges(graph) -> list[str]:
    """Each import of a node from a higher layer than its own, with where it is."""
    layer = _layer_of()
    return [
        f"{source} -> {target} ({', '.join(where)})"
        for source, targets in sorted(graph.items())
        for target, where in sorted(targets.items())
        if layer.get(target, -1) > layer.get(source, len(LAYERS))
    ]


def test_every_node_has_its_place_in_the_layers():
    layer = _layer_of()
    assert sorted(set(import_graph()) - set(layer)) == [], "place it in LAYERS"
    assert sorted(set(layer) - set(import_graph())) == [], "LAYERS names a node that is gone"


def test_no_cycle_between_subpackages():
    found = cycles(import_graph())
    assert not found, "import cycles between subpackages: " + "; ".join(" <-> ".join(c) for c in found)


def test_each_layer_imports_only_the_layers_below_it():
    assert upward_edges(import_graph()) == []


def test_the_checks_read_no_files_and_write_no_outputs():
    graph = import_graph()
    for source, targets in FORBIDDEN.items():
        found = {t: graph[source][t] for t in targets if t in graph[source]}
        assert not found, f"analysis/{source} imports {found}"


def test_the_plugin_never_imports_the_command_line():
    """The plugin and the CLI are two front ends on the library: neither goes through the other."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(PLUGIN.rglob("*.py"))
        for module, line in _imported(path, ROOT)
        if module == "analysis.cli" or module.startswith("analysis.cli.")
    ]
    assert found == []


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    """The measure itself: an import inside a function and ``from .. import x`` both count."""
    package = tmp_path / "analysis"
    (package / "checks").mkdir(parents=True)
    (package / "io").mkdir()
    (package / "checks" / "a.py").write_text("def f():\n    from ..io import vector\n")
    (package / "io" / "vector.py").write_text("from analysis.checks.a import f\n")
    edges = {m for path in package.rglob("*.py") for m, _ in _imported(path, tmp_path)}
    assert edges == {"analysis.io", "analysis.checks.a"}
    graph = {"checks": {"io": ["x"]}, "io": {"checks": ["y"]}, "report": {"io": ["z"]}}
    assert cycles(graph) == [["checks", "io"]]


if __name__ == "__main__":
    graph = import_graph()
    if "-v" in sys.argv:
        for source, targets in sorted(graph.items()):
            for target, where in sorted(targets.items()):
                print(f"{source} -> {target}: {len(where)}")
    found = cycles(graph)
    print(f"{len(graph)} nodes, {sum(len(t) for t in graph.values())} edges, {len(found)} cycle(s)")
    for component in found:
        inside = [
            f"  {s} -> {t}: {', '.join(graph[s][t])}" for s in component for t in component if t in graph[s]
        ]
        print(f"cycle of {len(component)}: {', '.join(component)}", *inside, sep="\n")
    print("imports against the layer order:", *upward_edges(graph) or ["none"], sep="\n  ")
