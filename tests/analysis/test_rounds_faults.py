"""Review rounds under faults (issue 35, "Must hold"): a save killed with SIGKILL in the middle
of its transaction leaves the file as it was; two saves at once take turns, the second told; a
save that cannot get the file in time is refused by name. Real processes, a real file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

import analysis.io.geopackage as geopackage
from analysis.cli import main
from analysis.rounds.contract import DECISIONS_TABLE, FINDINGS_TABLE, ROUNDS_TABLE

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and fork: POSIX")

# A save run in a child process that stops at one step of its transaction (the module's
# between_statements hook), says so on stdout, and waits there (to be killed, or to hold the
# file for a while and go on).
SAVE = """
import os, sys, time
import analysis.rounds.record as record
stop, hold = sys.argv[1], sys.argv[2]
def between(step):
    if step == stop:
        print("AT " + step, flush=True)
        if hold.replace(".", "").isdigit():
            time.sleep(float(hold))
        else:  # until the test says go (a file made), 120 s at most
            waited = time.monotonic()
            while not os.path.exists(hold) and time.monotonic() - waited < 120:
                time.sleep(0.05)
record.between_statements = between
from analysis.cli import main
sys.exit(main(["review", *sys.argv[3:]]))
"""

DECISIONS = """reviewer = "A. Reviewer"
[[decision]]
finding = 10
decision = "override"
reason = "recorded since"
"""


def state(path):
    """What the file holds: its rounds, findings and decisions, and SQLite's integrity check."""
    with closing(sqlite3.connect(path)) as con:
        return (
            con.execute(f"SELECT count(*) FROM {ROUNDS_TABLE}").fetchone()[0],
            con.execute(f"SELECT count(*) FROM {FINDINGS_TABLE}").fetchone()[0],
            con.execute(f"SELECT count(*) FROM {DECISIONS_TABLE}").fetchone()[0],
            con.execute("PRAGMA integrity_check").fetchone()[0],
        )


def start_save(stop, hold, *args):
    child = subprocess.Popen(
        [sys.executable, "-c", SAVE, stop, str(hold), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    line = child.stdout.readline()  # the child is inside its transaction at ``stop``
    assert line.strip() == f"AT {stop}", (line, child.stderr.read() if child.poll() is not None else "")
    return child


@pytest.fixture
def project(data_copy, tmp_path, capsys):
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    file = tmp_path / "project.gpkg"
    decisions = tmp_path / "d.toml"
    decisions.write_text(DECISIONS, encoding="utf-8")
    assert main(["review", str(site), "--reference", str(reference), "--round", str(file), "--quiet"]) == 1
    capsys.readouterr()
    return site, reference, file, decisions


@pytest.mark.parametrize("stop", ["round", "finding 5", "carried decision 10", "decision 10", "commit"])
def test_a_save_killed_mid_transaction_leaves_the_previous_state(project, tmp_path, stop):
    site, reference, file, decisions = project
    before = state(file)
    assert before[:3] == (1, 31, 0)
    if stop == "carried decision 10":  # round 2 carries round 1's decision: give it one first
        done = subprocess.run(
            [sys.executable, "-m", "analysis.cli", "review", site, "--reference", reference, "--round", file,
             "--decisions", decisions, "--quiet"],
            cwd=ROOT, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        before = state(file)
    child = start_save(
        stop, 120, site, "--reference", reference, "--round", file, "--decisions", decisions,
        "--json", tmp_path / "killed.json",
    )  # fmt: skip
    os.kill(child.pid, signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert state(file) == before  # (its hot journal rolled back by this first reader)
    # And the file takes the next save as if nothing had happened.
    done = subprocess.run(
        [sys.executable, "-m", "analysis.cli", "review", site, "--reference", reference, "--round", file,
         "--json", tmp_path / "next.json", "--quiet"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert json.loads((tmp_path / "next.json").read_text())["round"]["number"] == before[0] + 1
    assert state(file)[0] == before[0] + 1


def test_two_saves_at_once_take_turns_and_the_second_is_told(project, tmp_path):
    """The first save holds its transaction until the second is seen waiting for the file;
    then it commits, and the second records the round after it, told so."""
    site, reference, file, decisions = project
    go = tmp_path / "go"
    first = start_save(
        "finding 1", go, site, "--reference", reference, "--round", file, "--json", tmp_path / "first.json"
    )
    second = subprocess.Popen(
        [sys.executable, "-m", "analysis.cli", "review", str(site), "--reference", str(reference), "--round",
         str(file), "--json", str(tmp_path / "second.json"), "--quiet"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    said = []
    for line in second.stderr:  # until it says it waits (or ends)
        said.append(line)
        if "waiting for another process to finish with" in line:
            break
    go.touch()
    rest, err = second.communicate(timeout=120)
    err = "".join(said) + err
    first.communicate(timeout=120)
    assert first.returncode == 1 and second.returncode == 1, err
    assert "waiting for another process to finish with" in err
    one = json.loads((tmp_path / "first.json").read_text())["round"]
    two = json.loads((tmp_path / "second.json").read_text())["round"]
    assert (one["number"], two["number"]) == (2, 3) and two["previous"] == 2
    assert "another save recorded round 2" in err and "this review is round 3" in err
    assert state(file)[:2] == (3, 93)


def test_a_save_that_cannot_get_the_file_in_time_is_refused_by_name(project, tmp_path, capsys, monkeypatch):
    site, reference, file, _ = project
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sqlite3, sys, time\n"
         "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
         "con.execute('BEGIN IMMEDIATE'); print('HELD', flush=True); time.sleep(60)\n",
         str(file)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "HELD"
        monkeypatch.setattr(geopackage, "STORE_BUSY_TIMEOUT_S", 2.0)
        started = time.monotonic()
        status = main(["review", str(site), "--reference", str(reference), "--round", str(file),
                       "--json", str(tmp_path / "r.json")])  # fmt: skip
        _, err = capsys.readouterr()
    finally:
        holder.kill()
        holder.communicate()
    assert status == 2
    assert "another save held this review file too long; this round was not recorded" in err
    assert str(file) in err and "Fix:" in err
    assert time.monotonic() - started < 60
    assert not (tmp_path / "r.json").exists()
    assert state(file)[:3] == (1, 31, 0)
