"""The hostile-input suite's totals by class: how many cases of each class there are and how many
failed (a failing ``crash`` case is a crash, a failing ``wrong`` case a silent wrong answer, and so on).

    .venv/qgis/bin/python scripts/fuzz_totals.py            the analysis cases and, where QGIS
                                                            imports, the plugin's
    .venv/plain/bin/python scripts/fuzz_totals.py --no-qgis the analysis cases only

Every case of the suite (``tests/*/test_fuzz*.py``) is named by its class and the issue's item:
``<class>-<item>-<what>`` as a parameter id, or ``test_<class>_<item>_<what>`` as a function
(docs/TESTING.md, "The hostile-input suite"). Cases of round 1 (``tests/analysis/test_fuzz.py``)
predate the classes and are counted as ``round 1``. Exit status 1 where any case failed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ("destroyed", "crash", "wrong", "injection", "fault")
_CLASS = re.compile(rf"(?:^|[\[_-])({'|'.join(CLASSES)})[-_]")


def case_class(name: str) -> str:
    """The class a test's name or id gives it; "round 1" for the suite's first cases.

    >>> case_class("test_refused[crash-5-nested-toml-map]"), case_class("test_fault_sigterm_import")
    ('crash', 'fault')
    >>> case_class("test_refused[empty-phase-name]")
    'round 1'
    """
    found = _CLASS.search(name)
    return found.group(1) if found else "round 1"


def run(python: str, files: list[Path], qgis: bool) -> list[tuple[str, str]]:
    """(test name, outcome) of each case in ``files``, run by ``python``'s pytest."""
    if not files:
        return []
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "junit.xml"
        plugins = [] if qgis else ["-p", "no:pytest_qgis"]
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        subprocess.run(
            [python, "-m", "pytest", "-p", "no:cacheprovider", *plugins, "-q", f"--junitxml={report}"]
            + [str(f) for f in files],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        if not report.exists():
            sys.exit(f"fuzz_totals: pytest wrote no report for {', '.join(f.name for f in files)}")
        cases = []
        for case in ET.parse(report).iter("testcase"):
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error"):
                    outcome = "failed"
                elif child.tag == "skipped":
                    outcome = "skipped"
            cases.append((case.get("name", ""), outcome))
        return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-qgis", action="store_true", help="leave out the plugin's cases")
    args = parser.parse_args(argv)
    cases = run(sys.executable, sorted((ROOT / "tests/analysis").glob("test_fuzz*.py")), qgis=False)
    if not args.no_qgis:
        cases += run(sys.executable, sorted((ROOT / "tests/qgis_plugin").glob("test_fuzz*.py")), qgis=True)
    totals: dict[str, Counter] = {}
    for name, outcome in cases:
        totals.setdefault(case_class(name), Counter())[outcome] += 1
    print(f"{'class':<10} {'cases':>6} {'passed':>7} {'failed':>7} {'skipped':>8}")
    for name in (*CLASSES, "round 1"):
        if name in totals:
            count = totals[name]
            passed, failed, skipped = count["passed"], count["failed"], count["skipped"]
            print(f"{name:<10} {sum(count.values()):>6} {passed:>7} {failed:>7} {skipped:>8}")
    failed = sum(count["failed"] for count in totals.values())
    print(f"{len(cases)} cases, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
