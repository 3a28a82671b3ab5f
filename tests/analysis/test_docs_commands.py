"""Every fenced command in README.md and docs/ runs as pasted on a fresh clone (issue 34, item 2).

Each fenced block says what it is by its info string:

- ``sh``: commands a user pastes. Run here, as pasted, in a fresh copy of the checkout (so what
  they write lands beside the copy's own ``test_data/``), with the venv's ``swppp`` first on the
  PATH (``scripts/setup.sh`` puts it there: ``/usr/local/bin/swppp``). A command may end with
  exit status 1 ("ran, and a finding is ``fail``", as README.md documents it); 2 or more (bad
  input, an internal error, 127 "command not found") fails the block.
- ``sh network``: needs the network or downloads; the next fenced block of the same file must be
  its offline twin, an ``sh`` block that runs on shipped files.
- ``sh ci``: the README's two commands and their variants: ``.ci/run`` runs the test command;
  ``bash scripts/demo.sh`` is run here from the checkout itself.
- ``text`` (synopses, trees, diagrams), ``toml`` (each must parse), ``python`` (run, from the
  checkout).

The commands are Debian 12's, on the host's QGIS venv: they run on that stack only (the other
releases' root filesystems and the PyPI venv skip them and say why).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.profile import tomllib

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
KINDS = ("sh", "sh network", "sh ci", "text", "toml", "python")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
# The copy a block runs in: the checkout without what a fresh clone has not got.
NOT_COPIED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "__pycache__",
    "*.egg-info",
    ".pytest_cache",
    ".hypothesis",
    ".mypy_cache",
    ".ruff_cache",
)
# Exit status 1 from a command is "ran, a finding is fail"; 2 or more stops the block, named.
STRICT = "trap 's=$?; if [ $s -ge 2 ]; then echo \"exit $s: $BASH_COMMAND\" >&2; exit $s; fi' ERR\n"


def _blocks():
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((path.relative_to(ROOT).as_posix(), line, match.group(1).strip(), match.group(2)))
    return found


BLOCKS = _blocks()


def _ids(blocks):
    return [f"{path}:{line}" for path, line, _, _ in blocks]


def _on_the_documented_stack() -> str:
    """Why the commands cannot run here ("" where they can): Debian 12's QGIS venv only."""
    if os.environ.get("SWPPP_QGIS_RELEASE", "3.22") != "3.22":
        return "the documented commands are Debian 12's (QGIS 3.22); this is another release"
    if Path(sys.prefix).name != "qgis" or not (Path(sys.prefix) / "bin" / "swppp").exists():
        return "the documented commands run on the QGIS venv (.venv/qgis); this is another one"
    return ""


def test_the_docs_have_blocks_to_check():
    kinds = {kind for _, _, kind, _ in BLOCKS}
    assert {"sh", "sh network", "sh ci", "text", "toml", "python"} <= kinds, kinds


@pytest.mark.parametrize(("path", "line", "kind", "body"), BLOCKS, ids=_ids(BLOCKS))
def test_every_block_says_what_it_is(path, line, kind, body):
    assert kind in KINDS, (
        f"{path}:{line}: a fenced block tagged {kind!r}; tag it one of "
        f"{', '.join(KINDS)} (this test's docstring says what each means)"
    )


def test_every_network_block_has_an_offline_twin():
    for i, (path, line, kind, _) in enumerate(BLOCKS):
        if kind == "sh network":
            twin = BLOCKS[i + 1] if i + 1 < len(BLOCKS) else None
            assert twin is not None and twin[0] == path and twin[2] == "sh", (
                f"{path}:{line}: a block needing the network must be followed by its offline "
                f"twin (an sh block on shipped files)"
            )


@pytest.mark.parametrize(
    ("path", "line", "kind", "body"),
    [b for b in BLOCKS if b[2] == "toml"],
    ids=_ids([b for b in BLOCKS if b[2] == "toml"]),
)
def test_toml_blocks_parse(path, line, kind, body):
    tomllib.loads(body)


def test_ci_runs_the_readme_test_command():
    ci = [body for path, _, kind, body in BLOCKS if path == "README.md" and kind == "sh ci"]
    assert ci and "bash scripts/test.sh" in ci[0] and "bash scripts/demo.sh" in ci[0]
    assert "exec bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _run(script: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "SWPPP_PACKAGE"))}
    env["PATH"] = f"{Path(sys.prefix) / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    # The copy's own package, not the one the venv was installed from (a worktree's checkout
    # is tested, not the main checkout the editable install points to).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(cwd), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        ["bash", "-c", STRICT + script],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def _said(result) -> str:
    return (
        f"exit {result.returncode}\n--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
    )


SH_FILES = sorted({path for path, _, kind, _ in BLOCKS if kind == "sh"})


@pytest.mark.parametrize("path", SH_FILES)
def test_sh_blocks_run_as_pasted(path, tmp_path):
    """A file's blocks run in order in one fresh copy (a later one may read an earlier's output)."""
    why = _on_the_documented_stack()
    if why:
        pytest.skip(why)
    clone = tmp_path / "clone"
    shutil.copytree(ROOT, clone, ignore=NOT_COPIED, symlinks=True)
    (clone / ".venv").symlink_to(ROOT / ".venv")
    for where, line, kind, body in BLOCKS:
        if kind != "sh" or where != path:
            continue
        result = _run(body, clone)
        assert result.returncode in (0, 1), f"{path}:{line}:\n{body}\n{_said(result)}"
        assert "Traceback" not in result.stderr, f"{path}:{line}:\n{_said(result)}"


@pytest.mark.parametrize(
    ("path", "line", "kind", "body"),
    [b for b in BLOCKS if b[2] == "python"],
    ids=_ids([b for b in BLOCKS if b[2] == "python"]),
)
def test_python_blocks_run(path, line, kind, body):
    result = subprocess.run(
        [sys.executable, "-c", body], cwd=ROOT, text=True, capture_output=True, timeout=300, check=False
    )
    assert result.returncode == 0, f"{path}:{line}:\n{_said(result)}"


def test_the_demo_command_runs_and_swppp_is_on_the_path():
    why = _on_the_documented_stack()
    if why:
        pytest.skip(why)
    result = _run("bash scripts/demo.sh", ROOT)
    assert result.returncode == 0, _said(result)
    assert "demo: review ran" in result.stdout and (ROOT / "build/demo/report.html").exists()
    if os.geteuid() == 0:  # setup.sh links it as root (the README's setting)
        found = shutil.which("swppp", path="/usr/local/bin")
        assert found and Path(found).resolve().exists(), "setup.sh did not put swppp on the PATH"
