"""Writing files whole or not at all: each staged beside its target, moved in once complete."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Callable, Optional

from ..errors import OutputError

__all__ = [
    "stage",
    "publish",
    "discard",
    "staged",
    "write_all",
    "write_text",
    "same_file",
    "sweep",
    "publish_new",
]


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file: the same existing file (links, case-insensitive file
    systems and ``..`` included), or the same resolved path where either does not exist yet.

    >>> same_file("a/../b.json", "b.json"), same_file("a.json", "b.json")
    (True, False)
    """
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.normcase(a.resolve()) == os.path.normcase(b.resolve())


_MARK = "swppp-"  # staged files are named .<stem>.swppp-<pid>-<random><suffix>


def stage(target: str | Path) -> Path:
    """An empty hidden file beside ``target`` (its folder made) to be written in its place.

    Its name carries this process's id: a run that was killed while writing left its staged
    files behind, and the next run staging beside the same target removes them (:func:`sweep`).
    """
    target = Path(target)
    if _through(target):  # staged in the temporary folder: /dev is no place for files
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.{_MARK}{os.getpid()}-")
        os.close(handle)
        return Path(temp)
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep(target)
    handle, temp = tempfile.mkstemp(
        prefix=f".{target.stem}.{_MARK}{os.getpid()}-", suffix=target.suffix, dir=target.parent
    )
    os.close(handle)
    return Path(temp)


def _through(target: Path) -> bool:
    """Whether ``target`` is written through rather than replaced: an existing file that is
    not a regular file (``/dev/null``, a named pipe, a terminal). Replacing one would put a
    regular file in its place (for ``/dev/null``, for every program on the machine)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def sweep(target: str | Path) -> list[Path]:
    """Remove the staged files of ``target`` left by processes that no longer run (POSIX; on
    Windows a process's id cannot be asked safely, and nothing is removed). Returns them."""
    target = Path(target)
    if os.name != "posix" or not target.parent.is_dir():
        return []
    removed = []
    for temp in target.parent.glob(f".{glob.escape(target.stem)}.{_MARK}*{glob.escape(target.suffix)}"):
        pid = temp.name[len(target.stem) + len(_MARK) + 2 :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            temp.unlink(missing_ok=True)
            removed.append(temp)
    return removed


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: asks only whether the process exists (POSIX)
    except ProcessLookupError:
        return False
    except OSError:  # exists, another user's
        return True
    return True


def publish(temp: str | Path, target: str | Path) -> Path:
    """Move a finished staged file onto ``target``, with the permissions a new file gets; into
    a target that is not a regular file (``/dev/null``, a named pipe), its bytes are written
    through and the staged file removed."""
    if _through(Path(target)):
        with open(temp, "rb") as source, open(target, "wb") as sink:
            shutil.copyfileobj(source, sink)
        discard(temp)
        return Path(target)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temp, 0o666 & ~umask)  # mkstemp made it private
    os.replace(temp, target)
    return Path(target)


def publish_new(temp: str | Path, target: str | Path) -> bool:
    """Move a finished staged file to ``target`` only where no file is there yet: True where it
    was moved; False where another process made ``target`` first (``temp`` is removed either
    way). Two processes creating one new file never replace each other's (a hard link is made
    or refused atomically; where the file system has no hard links, the check and the move are
    as close as they can be)."""
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(temp, 0o666 & ~umask)
        try:
            os.link(temp, target)
        except FileExistsError:
            return False
        except OSError:  # no hard links here (FAT, some network shares)
            if Path(target).exists():
                return False
            os.replace(temp, target)
        return True
    finally:
        discard(temp)


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


def reserve(target: str | Path) -> Path:
    """:func:`stage` ``target`` before the work whose result it will hold is done (an import,
    which commits): a target that cannot be written (its folder unwritable or not a folder,
    the target a folder) is refused here, an :class:`OutputError`, while nothing is written.
    The caller writes the staged file and :func:`publish` es it, or :func:`discard` s it."""
    target = Path(target)
    try:
        if target.is_dir():
            raise IsADirectoryError(21, "it is a folder", str(target))
        return stage(target)
    except OSError as err:
        raise _refused(target, err) from None


def _refused(target: Optional[str | Path], err: OSError) -> OutputError:
    return OutputError(
        f"could not write {target} ({err.strerror or err}); nothing was written. "
        "Choose a file path in a folder you can write to"
    )


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
