"""Files written whole or not at all (analysis.io.files): the one way every writer stages."""

import os
import stat

import pytest

from analysis.errors import OutputError
from analysis.io.files import discard, publish, stage, staged, write_all, write_text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_write_text_writes_the_whole_text_with_a_new_files_permissions(tmp_path):
    target = write_text(tmp_path / "sub" / "notice.html", "<p>é</p>\n")
    assert target.read_text(encoding="utf-8") == "<p>é</p>\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()
    assert sorted(p.name for p in target.parent.iterdir()) == ["notice.html"]


def test_staged_publishes_only_when_the_block_completes(tmp_path):
    target = tmp_path / "layer.gpkg"
    target.write_text("old")
    with pytest.raises(RuntimeError), staged(target) as temp:
        assert temp.parent == tmp_path and temp.name.startswith(".layer.")
        temp.write_text("half")
        raise RuntimeError("the writer failed midway")
    assert target.read_text() == "old"  # untouched
    assert [p.name for p in tmp_path.iterdir()] == ["layer.gpkg"]  # no staged file left
    with staged(target) as temp:
        temp.write_text("new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["layer.gpkg"]


def test_write_all_writes_none_when_one_writer_fails_midway(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.html"

    def half_then_fail(temp):
        temp.write_text("<html>")
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError) as caught:
        write_all({first: lambda temp: temp.write_text("{}"), None: None, second: half_then_fail})
    assert str(second) in str(caught.value) and "nothing was written" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_write_all_moves_every_output_in_once_all_worked(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.csv"
    written = write_all(
        {first: lambda temp: temp.write_text("{}"), second: lambda temp: temp.write_text("x\n1\n")}
    )
    assert written == [first, second]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.csv"]


def test_write_text_into_an_unwritable_place_is_an_output_error_naming_the_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OutputError, match="could not write .*out.json"):
        write_text(blocker / "out.json", "{}")


def test_stage_publish_and_discard_for_a_file_laid_out_before_the_others(tmp_path):
    target = tmp_path / "report.pdf"
    temp = stage(target)
    assert temp.exists() and temp.suffix == ".pdf" and temp.name.startswith(".report.")
    temp.write_bytes(b"%PDF")
    assert publish(temp, target) == target and target.read_bytes() == b"%PDF"
    assert not temp.exists()
    other = stage(target)
    discard(other)
    discard(other)  # already gone: no error
    discard(None)
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]
