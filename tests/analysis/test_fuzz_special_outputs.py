"""An output naming a file that is not a regular file (``/dev/null``, a named pipe) is written
through, never replaced (issue 36, data destroyed: found this session, when ``swppp review ...
--json /dev/null`` replaced the machine's ``/dev/null`` with a regular file: every output is
staged beside its target and moved onto it, and a move onto a device replaces the device)."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.io.files import write_text

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "test_data" / "demo_site.gpkg"


def _reading(fifo: Path) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as pipe:
            got.append(pipe.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_destroyed_new_a_named_pipe_output_is_written_through(tmp_path, capsys):
    fifo = tmp_path / "review.json"
    os.mkfifo(fifo)
    reader, got = _reading(fifo)
    status = main(["review", str(SITE), "--json", str(fifo), "--quiet"])
    reader.join(timeout=60)
    assert status in (0, 1), capsys.readouterr().err
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still the pipe, not a file put in its place
    assert json.loads(got[0])["site"]
    assert [p.name for p in tmp_path.iterdir()] == ["review.json"]  # nothing staged left


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_destroyed_new_the_writer_every_output_uses_writes_through_a_pipe(tmp_path):
    fifo = tmp_path / "out.txt"
    os.mkfifo(fifo)
    reader, got = _reading(fifo)
    write_text(fifo, "whole")
    reader.join(timeout=10)
    assert got == [b"whole"] and stat.S_ISFIFO(fifo.stat().st_mode)


def test_destroyed_new_dev_null_stays_a_device(capsys):
    null = Path(os.devnull)
    if not null.exists() or stat.S_ISREG(null.stat().st_mode):
        pytest.skip(f"{null} is not a device here")
    before = null.stat()
    try:
        assert main(["review", str(SITE), "--json", str(null), "--quiet"]) in (0, 1)
        after = null.stat()
    finally:  # a failure here must not break the machine's /dev/null for everything after
        if stat.S_ISREG(null.stat().st_mode) and os.geteuid() == 0:
            null.unlink()
            os.mknod(null, 0o666 | stat.S_IFCHR, before.st_rdev)
            os.chmod(null, 0o666)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
