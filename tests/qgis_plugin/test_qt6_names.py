"""Every Qt name the plugin uses is one PyQt6 (QGIS 4) has too; every QGIS enum is named scoped.

What this checks, and against what (no QGIS 4 build is in Debian, so nothing runs on one here):

- every ``from qgis.PyQt.<module> import <name>`` and every attribute chain rooted at such a name
  (``Qt.ItemDataRole.UserRole``, ``QMessageBox.StandardButton.Yes``, ``QDate.fromString``) resolves
  in Debian's PyQt6 (``python3-pyqt6``, run in ``/usr/bin/python3``: QGIS 4's ``qgis.PyQt.<module>``
  is ``PyQt6.<module>``) AND in this QGIS's ``qgis.PyQt`` (PyQt5): the scoped forms work in both;
  an import inside ``try`` with an ``except ImportError`` fallback counts if one of its
  alternatives resolves in each;
- no ``exec_()``/``print_()`` (PyQt6 has only ``exec()``/``print()``), and nothing imports PyQt5
  or PyQt6 directly (``qgis.PyQt`` is the one that follows QGIS's Qt);
- every attribute chain rooted at a name from ``qgis.core``/``qgis.gui``/... resolves in the
  installed QGIS (3.22), and an enum member is named through its enum (``QgsFeatureSink.Flag.
  FastInsert``, not ``QgsFeatureSink.FastInsert``) wherever 3.22 accepts that form: QGIS 4's
  bindings take only the scoped form. Whether QGIS 4 still has each QGIS name is NOT checked.

Files: the plugin (qgis_plugin/), scripts/qgis_screenshot.py and these tests (tests/qgis_plugin/).
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, with python3-pyqt6 (scripts/setup.sh)
QGIS_MODULES = ("qgis.core", "qgis.gui", "qgis.analysis", "qgis.processing")
# Names QGIS's own qgis.PyQt wrapper adds to PyQt6's module (python/PyQt/PyQt6/QtCore.py).
QGIS_PYQT_ADDITIONS = {"QtCore": {"NULL"}}
REMOVED_IN_PYQT6 = {"exec_": "exec", "print_": "print"}
# QGIS enums whose home moved between the releases the plugin supports (to Qgis.* in 3.30 and
# 3.34): qgis_plugin/compat.py (issue 17) names them for each release, so they are exempt from
# the scoped-form rule (they must still resolve). compat.py itself holds every release's names.
RELEASE_DEPENDENT = ("QgsMapLayerProxyModel.", "QgsUnitTypes.Distance")
COMPAT = Path("qgis_plugin") / "compat.py"

RESOLVE_IN_PYQT6 = r"""
import importlib, json, sys
try:
    import PyQt6.QtCore
except ImportError as err:
    sys.exit("no PyQt6 in %s (%s): install Debian's python3-pyqt6 (scripts/setup.sh lists it)"
             % (sys.executable, err))
out = []
for module, dotted in json.load(sys.stdin):
    try:
        obj = importlib.import_module("PyQt6." + module)
    except ImportError as err:
        out.append("PyQt6.%s: %s" % (module, err))
        continue
    missing = None
    for i, part in enumerate(dotted.split(".")):
        if not hasattr(obj, part):
            missing = ".".join(dotted.split(".")[:i + 1])
            break
        obj = getattr(obj, part)
    out.append(missing)
print(json.dumps(out))
"""


def checked_files():
    files = sorted((ROOT / "qgis_plugin").rglob("*.py"))
    files.append(ROOT / "scripts" / "qgis_screenshot.py")
    files += sorted((ROOT / "tests" / "qgis_plugin").glob("*.py"))
    return files


def chain_of(node):
    """``(root name, [attr, ...])`` for ``A.b.c``, or None where the chain is not rooted at a
    name (a call's result, a subscript)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, parts[::-1]
    return None


def _handles_import_error(handler):
    names = handler.type
    if names is None:
        return True
    listed = names.elts if isinstance(names, ast.Tuple) else [names]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in listed)


class Uses:
    """The Qt and QGIS names one file uses, each with its line."""

    def __init__(self, path):
        self.path = path
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        self.qt = {}  # local name -> (Qt module, imported name)
        self.qgis = {}  # local name -> (qgis module, imported name)
        self.imports = []  # (line, [alternatives: (Qt module, name)])
        self.qt_chains = []  # (line, Qt module, "Name.attr...")
        self.qgis_chains = []  # (line, qgis module, "Name.attr...")
        self.problems = []  # (line, text)
        alternatives = {}  # id(ImportFrom node) -> the try's group
        for node in ast.walk(tree):
            if isinstance(node, ast.Try) and any(_handles_import_error(h) for h in node.handlers):
                group = []
                for stmt in node.body + [s for h in node.handlers for s in h.body]:
                    if isinstance(stmt, ast.ImportFrom):
                        alternatives[id(stmt)] = group
        groups = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node, alternatives, groups)
        self.imports.extend(groups.values())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in REMOVED_IN_PYQT6:
                text = f"{node.attr}() is PyQt5's; PyQt6 has only {REMOVED_IN_PYQT6[node.attr]}(): use that"
                self.problems.append((node.lineno, text))
            if isinstance(node, ast.Attribute) and not isinstance(
                getattr(node, "parent", None), ast.Attribute
            ):
                found = chain_of(node)
                if found is None:
                    continue
                root, parts = found
                if root in self.qt:
                    module, name = self.qt[root]
                    self.qt_chains.append((node.lineno, module, ".".join([name] + parts)))
                elif root in self.qgis:
                    module, name = self.qgis[root]
                    self.qgis_chains.append((node.lineno, module, ".".join([name] + parts)))
            for child in ast.iter_child_nodes(node):
                child.parent = node

    def _import(self, node, alternatives, groups):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in ("PyQt5", "PyQt6"):
                    text = f"import {alias.name}: import from qgis.PyQt instead"
                    self.problems.append((node.lineno, text))
            return
        module = node.module or ""
        if module.split(".")[0] in ("PyQt5", "PyQt6"):
            text = f"from {module} import ...: import from qgis.PyQt instead"
            self.problems.append((node.lineno, text))
        elif module.startswith("qgis.PyQt."):
            qt_module = module[len("qgis.PyQt.") :]
            for alias in node.names:
                self.qt[alias.asname or alias.name] = (qt_module, alias.name)
                group = alternatives.get(id(node))
                key = (id(group), alias.name) if group is not None else (id(node), alias.name)
                _, options = groups.setdefault(key, (node.lineno, []))
                options.append((qt_module, alias.name))
        elif module in QGIS_MODULES:
            for alias in node.names:
                self.qgis[alias.asname or alias.name] = (module, alias.name)


def resolve(obj, dotted):
    """The object ``dotted`` names under ``obj``, and the first part that is missing (or None)."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if not hasattr(obj, part):
            return None, ".".join(parts[: i + 1])
        obj = getattr(obj, part)
    return obj, None


def in_pyqt6(queries):
    """For each ``(Qt module, dotted name)``: None where PyQt6 has it, else the missing part."""
    completed = subprocess.run(
        [SYSTEM_PYTHON, "-c", RESOLVE_IN_PYQT6],
        input=json.dumps(queries),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr.strip()
    answers = json.loads(completed.stdout)
    return [
        None if answer and dotted.split(".")[0] in QGIS_PYQT_ADDITIONS.get(module, ()) else answer
        for (module, dotted), answer in zip(queries, answers)
    ]


def in_pyqt5(module, dotted):
    """None where this QGIS's qgis.PyQt (PyQt5) has ``dotted``, else the missing part."""
    return resolve(importlib.import_module("qgis.PyQt." + module), dotted)[1]


def qt_problems(uses):
    """``(line, text)`` for each Qt name of ``uses`` that PyQt6 or this QGIS's PyQt5 lacks."""
    problems = list(uses.problems)
    queries = sorted(
        {(m, n) for _, options in uses.imports for m, n in options} | {(m, d) for _, m, d in uses.qt_chains}
    )
    answers = dict(zip(queries, in_pyqt6([list(q) for q in queries]))) if queries else {}
    for line, options in uses.imports:
        shown = " or ".join(f"qgis.PyQt.{m}.{n}" for m, n in options)
        if all(answers[(m, n)] for m, n in options):
            problems.append((line, f"{shown}: PyQt6 has no such name"))
        if all(in_pyqt5(m, n) for m, n in options):
            problems.append((line, f"{shown}: this QGIS's PyQt5 has no such name"))
    for line, module, dotted in uses.qt_chains:
        if answers[(module, dotted)]:
            text = (
                f"{dotted}: PyQt6 has no {answers[(module, dotted)]} (use the scoped form, "
                "e.g. Qt.ItemDataRole.UserRole)"
            )
            problems.append((line, text))
        elif in_pyqt5(module, dotted):
            problems.append((line, f"{dotted}: this QGIS's PyQt5 has no {in_pyqt5(module, dotted)}"))
    return problems


def qgis_problems(uses):
    """``(line, text)`` for each QGIS name of ``uses`` this QGIS lacks or that names an enum
    member unscoped where this QGIS takes the scoped form."""
    problems = []
    if uses.path.resolve() == (ROOT / COMPAT).resolve():
        return problems
    for line, module, dotted in uses.qgis_chains:
        obj, missing = resolve(importlib.import_module(module), dotted)
        if missing:
            problems.append((line, f"{dotted}: this QGIS has no {missing}"))
            continue
        parts = dotted.split(".")
        if dotted.startswith(RELEASE_DEPENDENT):
            continue
        enum = type(obj)
        if len(parts) < 2 or type(enum).__name__ not in ("enumtype", "EnumType", "EnumMeta"):
            continue
        parent, _ = resolve(importlib.import_module(module), ".".join(parts[:-1]))
        if parent is enum or getattr(enum, parts[-1], None) != obj:
            continue  # scoped already, or the enum does not take the scoped form in this QGIS
        scoped = ".".join(parts[:-1] + [enum.__name__, parts[-1]])
        if resolve(importlib.import_module(module), scoped)[1] is None:
            problems.append((line, f"{dotted}: name the enum, {scoped} (QGIS 4 takes only that)"))
    return problems


def report(path, problems):
    relative = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return [f"{relative}:{line}: {text}" for line, text in sorted(problems)]


@pytest.mark.parametrize("path", checked_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_qt_and_qgis_names_are_ones_qgis_4_takes(path, qgis_app):
    uses = Uses(path)
    found = report(path, qt_problems(uses) + qgis_problems(uses))
    assert not found, "\n".join(found)


def test_the_checker_finds_unscoped_and_pyqt5_only_names(tmp_path, qgis_app):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from qgis.PyQt.QtCore import Qt\n"
        "from qgis.PyQt.QtWidgets import QMessageBox, QAction\n"
        "from qgis.core import QgsFeatureSink\n"
        "import PyQt5.QtCore\n"
        "role = Qt.UserRole\n"
        "ok = Qt.ItemDataRole.UserRole\n"
        "box = QMessageBox()\n"
        "box.exec_()\n"
        "flag = QgsFeatureSink.FastInsert\n"
        "try:\n"
        "    from qgis.PyQt.QtGui import QShortcut\n"
        "except ImportError:\n"
        "    from qgis.PyQt.QtWidgets import QShortcut\n",
        encoding="utf-8",
    )
    uses = Uses(sample)
    found = "\n".join(report(sample, qt_problems(uses) + qgis_problems(uses)))

    assert "sample.py:2: qgis.PyQt.QtWidgets.QAction: PyQt6 has no such name" in found
    assert "sample.py:4: import PyQt5.QtCore: import from qgis.PyQt instead" in found
    assert "sample.py:5: Qt.UserRole: PyQt6 has no Qt.UserRole" in found
    assert "sample.py:6" not in found
    assert "sample.py:8: exec_() is PyQt5's" in found
    assert ("sample.py:9: QgsFeatureSink.FastInsert: name the enum, QgsFeatureSink.Flag.FastInsert") in found
    assert "QShortcut" not in found  # one of the alternatives resolves in each
    assert len(found.splitlines()) == 5, found
