"""Writing files whole or not at all: each staged beside its target, moved in once complete."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Optional
from collections.abc import Iterator, Mapping

from ..errors import OutputError

__all__ = ["stage", "publish", "discard", "staged", "write_all", "write_text"]


def stage(target: str | Path) -> Path:
    """An empty hidden file beside ``target`` (its folder made) to be written in its place."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix,
                                    dir=target.parent)
    os.close(handle)
    return Path(temp)


def publish(temp: str | Path, target: str | Path) -> Path:
    """Move a finished staged file onto ``target``, with the permissions a new file gets."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temp, 0o666 & ~umask)  # mkstemp made it private
    os.replace(temp, target)
    return Path(target)


def discard(temp: Optional[str | Path]) -> None:
    """Remove a staged file that will not be published (no error where it is already gone)."""
    if temp:
        Path(temp).unlink(missing_ok=True)


@contextlib.contextmanager
def staged(target: str | Path) -> Iterator[Path]:
    """A staged path for ``target``: published when the block ends, removed if it raises.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> with staged(folder / "a.txt") as temp:
    ...     _ = temp.write_text("whole")
    >>> (folder / "a.txt").read_text(), [p.name for p in folder.iterdir()]
    ('whole', ['a.txt'])
    """
    temp = stage(target)
    try:
        yield temp
        publish(temp, target)
    finally:
        discard(temp)


def _refused(target: Optional[str | Path], err: OSError) -> OutputError:
    return OutputError(f"could not write {target} ({err.strerror or err}); nothing was written. "
                       "Choose a file path in a folder you can write to")


def write_all(writers: Mapping[Optional[str | Path], Callable[[Path], object]]) -> list[Path]:
    """Run each writer (target -> ``write(staged_path)``; None targets skipped) on a file staged
    beside its target, and move them all in once every one worked: all or none.

    An ``OSError`` becomes an :class:`OutputError` naming the file; nothing is left behind.
    """
    done = []
    target = None
    try:
        for target, write in writers.items():
            if target is None:
                continue
            target = Path(target)
            done.append((stage(target), target))
            write(done[-1][0])
        for temp, target in done:
            publish(temp, target)
    except OSError as err:
        raise _refused(target, err) from None
    finally:
        for temp, _ in done:
            discard(temp)
    return [target for _, target in done]


def write_text(path: str | Path, text: str) -> Path:
    """Write one text file (UTF-8) under its name only once it is complete."""
    return write_all({path: lambda temp: temp.write_text(text, encoding="utf-8")})[0]
