"""Installs the analysis's missing dependencies into the QGIS profile, with QGIS's own Python."""

import contextlib
import html
import json
import os
import queue
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import ClassVar

from qgis.core import Qgis, QgsApplication, QgsMessageLog, QgsTask
from qgis.PyQt.QtCore import QCoreApplication
from qgis.PyQt.QtWidgets import QMessageBox, QPushButton

__all__ = [
    "FOLDER_NAME",
    "InstallError",
    "InstallTask",
    "dependency_folder",
    "use_dependency_folder",
    "host_geos",
    "find_python",
    "pip_command",
    "command_text",
    "check_with",
    "install",
    "describe",
    "message_with_install_button",
    "confirmation_box",
]

TITLE = "SWPPP Review"
FOLDER_NAME = "swppp_review_deps"
BUTTON_NAME = "swpppInstallDependencies"


def tr(text):
    return QCoreApplication.translate("SwpppReview", text)


class InstallError(Exception):
    """The installation failed; the message says what ran and what it printed last."""


def dependency_folder():
    """The folder the plugin's dependencies go into, in the current QGIS profile.

    In the profile, not in the plugin's folder (a plugin update replaces that), and only
    for QGIS: other Python programs do not see it. ``use_dependency_folder`` puts it first on
    ``sys.path`` when the plugin starts, so what is installed there is used after a restart.

    Returns
    -------
    pathlib.Path
        ``QgsApplication.qgisSettingsDirPath()/python/swppp_review_deps`` (may not exist yet).
    """
    return Path(QgsApplication.qgisSettingsDirPath()) / "python" / FOLDER_NAME


def use_dependency_folder(folder=None):
    """Put the dependency folder at the front of ``sys.path``, once, where it exists.

    At the front so its shapely 2 wins over an older one of the system; called before the
    dependencies are checked or imported.

    Returns
    -------
    str or None
        The folder put on ``sys.path`` (or already there), None when it does not exist.
    """
    folder = str(folder or dependency_folder())
    if not os.path.isdir(folder):
        return None
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return folder


def host_geos():
    """The (major, minor) GEOS version this QGIS links."""
    return (Qgis.geosVersionMajor(), Qgis.geosVersionMinor())


def find_python():
    """The Python interpreter of this QGIS (the one running the plugin), as a program to run.

    Inside QGIS ``sys.executable`` is not reliable: embedded Python guesses it from ``PATH``, so
    under Debian's QGIS it can name a different Python altogether (measured: pyenv's
    ``python3`` shim, while QGIS runs ``/usr/bin/python3.11``), or QGIS itself (``qgis-bin.exe``
    on Windows). The interpreter belongs to ``sys.base_prefix``: ``bin/python3.X`` there on
    Linux and macOS (QGIS.app's Python.framework), ``python.exe`` there on Windows (OSGeo4W's
    ``apps/Python3X``), then ``python3.exe`` beside ``qgis-bin.exe`` (OSGeo4W's ``bin``), then
    ``sys.executable`` and ``python3.X`` on ``PATH``. The first that exists and is this very
    Python (the same version and ``sys.base_prefix``: another Python 3.X would install wheels
    this one may not load) is the one.

    Returns
    -------
    str or None
        The interpreter's path, None where none is found.
    """
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    base = Path(sys.base_prefix)
    beside = Path(sys.executable).parent if sys.executable else None
    candidates = [
        base / "bin" / f"python{version}",
        base / "bin" / "python3",
        base / "python.exe",
        base / "python3.exe",
    ]
    if beside is not None:
        candidates += [beside / "python3.exe", beside / "python.exe"]
    if sys.executable:
        candidates.append(Path(sys.executable))
    candidates += [Path(p) for p in (shutil.which(f"python{version}"), shutil.which("python3")) if p]
    seen = set()
    for candidate in candidates:
        if candidate in seen or not candidate.is_file():
            continue
        seen.add(candidate)
        if _is_this_python(candidate, version):
            return str(candidate)
    return None


def _is_this_python(python, version):
    """True when ``python`` runs Python ``version`` (major.minor) from this ``sys.base_prefix``."""
    try:
        completed = subprocess.run(
            [
                str(python),
                "-c",
                "import json, sys; print(json.dumps(['%d.%d' % sys.version_info[:2], sys.base_prefix]))",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            **_no_window(),
        )
        found_version, prefix = json.loads(completed.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return False
    return found_version == version and os.path.normcase(os.path.realpath(prefix)) == os.path.normcase(
        os.path.realpath(sys.base_prefix)
    )


def pip_command(python, target, specs):
    """The pip command that installs ``specs`` into ``target`` with ``python``.

    ``--no-deps``: ``--target`` makes pip ignore what is installed already, so with the
    dependencies it would bring a second numpy (2.x, which Debian's GDAL bindings cannot use)
    into the folder at the front of ``sys.path``; the specs list everything missing instead.
    ``--only-binary``: a source build would need a compiler and GEOS headers and could link
    another GEOS. ``--target`` also lifts PEP 668's "externally managed" refusal of Debian's
    pip (it guards the system's site-packages, which this does not touch).
    """
    return [
        str(python),
        "-m",
        "pip",
        "install",
        "--target",
        str(target),
        "--upgrade",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--no-warn-script-location",
        "--disable-pip-version-check",
        "--no-input",
        "--progress-bar",
        "off",
        *specs,
    ]


def command_text(command):
    """``command`` as a person types it in this system's shell."""
    if os.name == "nt":
        return subprocess.list2cmdline(command)
    return shlex.join(command)


# Run by the interpreter being checked: which dependencies it still lacks with ``folders`` first
# on its path, as analysis.dependencies.needs says (JSON on stdout).
_CHECK = r"""
import dataclasses, json, sys
folders, plugin_dir, host = json.loads(sys.argv[1])
sys.path[:0] = folders + [plugin_dir]
from analysis.dependencies import needs
print(json.dumps([dataclasses.asdict(n) for n in needs(tuple(host) if host else None)]))
"""


def check_with(python, plugin_dir, folders=(), host=None):
    """What ``python`` lacks for the analysis with ``folders`` at the front of its path.

    Parameters
    ----------
    python : str
        The interpreter to ask.
    plugin_dir : str
        The folder holding the ``analysis`` package (the plugin's folder).
    folders : sequence of str
        Put before everything on that interpreter's ``sys.path``.
    host : tuple of int, optional
        The host's GEOS (major, minor), as for ``analysis.dependencies.needs``.

    Returns
    -------
    list of dict
        One ``analysis.dependencies.Need`` as a dict per missing dependency.
    """
    argument = json.dumps([[str(f) for f in folders], str(plugin_dir), list(host or [])])
    try:
        completed = subprocess.run(
            [str(python), "-c", _CHECK, argument],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            **_no_window(),
        )
    except (OSError, subprocess.SubprocessError) as err:
        raise InstallError(f"could not run {python} to check the dependencies: {err}") from err
    if completed.returncode != 0:
        raise InstallError(f"{python} could not check the dependencies: {_tail(completed.stderr)}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def install(specs, folder, python, plugin_dir, host=None, log=print, is_canceled=None):
    """Install ``specs`` with ``python``'s pip into ``folder``; nothing changes there on failure.

    pip installs into a new folder beside ``folder``; what it installed is checked by
    ``python`` itself (``check_with``: the dependencies with the new folder first on its path);
    only then does the new folder, with what ``folder`` held of other packages, replace
    ``folder`` (two renames). The QgsTask of the "Install…" button calls this, in its thread.

    Parameters
    ----------
    specs : list of str
        pip requirements (``analysis.dependencies.Need.spec``), e.g. ``["shapely>=2,<2.1"]``.
    folder : str or pathlib.Path
        The dependency folder (``dependency_folder()`` inside QGIS).
    python : str
        QGIS's Python interpreter (``find_python()`` inside QGIS).
    plugin_dir : str
        The folder holding the ``analysis`` package, for the check.
    host : tuple of int, optional
        QGIS's GEOS (major, minor): the check then refuses a shapely that would mix two GEOS.
    log : callable
        Called with each line pip prints and each step.
    is_canceled : callable, optional
        Polled while pip runs; when it returns True pip is stopped and nothing is changed.

    Returns
    -------
    list of dict
        What ``python`` still lacks afterwards that pip cannot fix (``spec`` None), if anything.

    Raises
    ------
    InstallError
        pip failed or was cancelled, or what it installed still does not satisfy the analysis.
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{FOLDER_NAME}-new-", dir=folder.parent))
    try:
        command = pip_command(python, staging, specs)
        log(f"Running: {command_text(command)}")
        _run_logged(command, log, is_canceled)
        _keep_other_packages(folder, staging)
        log("Checking what was installed")
        still = check_with(python, plugin_dir, [staging], host)
        unfixed = [n for n in still if n["spec"]]
        if unfixed:
            raise InstallError(
                "after installing {}, {} still lacks: {}".format(
                    ", ".join(specs), python, "; ".join(n["problem"] for n in unfixed)
                )
            )
        try:
            _replace(folder, staging)
        except OSError as err:  # e.g. Windows: a library there is loaded by this QGIS
            raise InstallError(
                f"could not replace {folder} ({err}); close QGIS and run: "
                f"{command_text(pip_command(python, folder, specs))}"
            ) from err
        log(f"Installed {', '.join(specs)} into {folder}")
        return still
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run_logged(command, log, is_canceled):
    """Run ``command``, each output line to ``log``; stop it when ``is_canceled()`` says so."""
    try:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            **_no_window(),
        )
    except OSError as err:
        raise InstallError(f"could not start {command[0]}: {err}") from err
    with process:  # closes pip's output pipe however this ends
        last = _follow(process, log, is_canceled)
    if process.returncode != 0:
        hint = ""
        if any("No module named pip" in line for line in last):
            hint = (
                "\nThis Python has no pip: install it (Debian/Ubuntu: the package "
                "python3-pip; OSGeo4W: python3-pip in the OSGeo4W installer)."
            )
        raise InstallError(
            f"pip failed (exit status {process.returncode}): "
            f"{command_text(command)}\n" + "\n".join(last) + hint
        )


def _follow(process, log, is_canceled):
    """Each line ``process`` prints to ``log`` until it ends; the last lines, for an error."""
    lines: queue.Queue[str] = queue.Queue()

    def read():
        for text in process.stdout:
            lines.put(text)

    # A reader thread, so that cancelling does not wait for pip's next line.
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    last: list[str] = []
    while True:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            if is_canceled is not None and is_canceled():
                process.kill()
                process.wait()
                reader.join(5)  # the pipe is at its end now; closed only after the reader
                raise InstallError("installation cancelled; nothing was changed") from None
            if process.poll() is not None and not reader.is_alive() and lines.empty():
                return last
            continue
        line = line.rstrip()
        last = (last + [line])[-12:]
        log(line)


def _keep_other_packages(folder, staging):
    """Copy into ``staging`` what ``folder`` holds of packages not installed again now.

    pip's ``--target --upgrade`` would leave an older ``*.dist-info`` beside the new one; here a
    distribution installed again replaces all of its old entries.
    """
    if not folder.is_dir():
        return
    new_dists = {_dist_of(p.name) for p in staging.glob("*.dist-info")}
    for entry in folder.iterdir():
        if (staging / entry.name).exists() or _dist_of(entry.name) in new_dists:
            continue
        if entry.is_dir():
            shutil.copytree(entry, staging / entry.name, symlinks=True)
        else:
            shutil.copy2(entry, staging / entry.name)


def _dist_of(name):
    """The normalised distribution name of a ``*.dist-info`` folder name, else None."""
    if not name.endswith(".dist-info"):
        return None
    return name[: -len(".dist-info")].rsplit("-", 1)[0].replace("-", "_").lower()


def _replace(folder, staging):
    """Swap ``staging`` in as ``folder`` by two renames; the old folder is removed after."""
    old = None
    if folder.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{FOLDER_NAME}-old-", dir=folder.parent))
        old.rmdir()
        os.replace(folder, old)
    try:
        os.replace(staging, folder)
    except OSError:
        if old is not None:
            os.replace(old, folder)  # put the previous folder back as it was
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _tail(text, lines=8):
    return "\n".join(text.strip().splitlines()[-lines:])


def _no_window():
    """On Windows, no console window flashing up for each subprocess."""
    if sys.platform == "win32":  # the flag exists there only
        return {"creationflags": subprocess.CREATE_NO_WINDOW}
    return {}


class InstallTask(QgsTask):
    """``install`` in QGIS's task manager, its output in the message log (tag SWPPP Review).

    ``on_done(ok, text)`` is called on the main thread when it ends: ``text`` says what was
    installed or why it failed.
    """

    def __init__(self, specs, folder, python, plugin_dir, host, on_done):
        super().__init__(tr("SWPPP Review: installing {}").format(", ".join(specs)), QgsTask.Flag.CanCancel)
        self.specs, self.folder, self.python = list(specs), Path(folder), python
        self.plugin_dir, self.host, self.on_done = plugin_dir, host, on_done
        self.text = ""

    def run(self):
        def log(line):  # QgsMessageLog may be used from any thread
            QgsMessageLog.logMessage(line, TITLE, Qgis.MessageLevel.Info)

        try:
            still = install(
                self.specs,
                self.folder,
                self.python,
                self.plugin_dir,
                self.host,
                log=log,
                is_canceled=self.isCanceled,
            )
        except InstallError as err:
            self.text = str(err)
            return False
        except Exception as err:  # noqa: BLE001 - said in the message bar, never a traceback
            self.text = f"{type(err).__name__}: {err}"
            return False
        self.text = tr("Installed {specs} into {folder}. Restart QGIS to use SWPPP Review.").format(
            specs=", ".join(self.specs), folder=self.folder
        )
        if still:
            self.text += " " + tr("Still needed: {}.").format(
                "; ".join(f"{n['problem']}: {n['instead']}" for n in still)
            )
        return True

    def finished(self, ok):
        QgsMessageLog.logMessage(
            self.text, TITLE, Qgis.MessageLevel.Success if ok else Qgis.MessageLevel.Critical
        )
        self.on_done(ok, self.text)


def describe(found, host, gui=False, folder=None, python=None):
    """The startup message for the missing dependencies ``found``, and the install it offers.

    Parameters
    ----------
    found : list of analysis.dependencies.Need
        What QGIS's Python lacks (``needs(host_geos=host)``).
    host : tuple of int
        QGIS's GEOS (major, minor).
    gui : bool
        For the message bar, beside an "Install…" button; otherwise (qgis_process) the message
        names the folder and the pip command to run by hand.
    folder, python : optional
        The dependency folder and QGIS's interpreter (``dependency_folder()``,
        ``find_python()`` when not given).

    Returns
    -------
    tuple
        ``(message, offer)``: None, None when nothing is missing; ``offer`` is None where pip
        cannot fix it, else a dict of ``specs``, ``folder``, ``python`` and ``host``.
    """
    if not found:
        return None, None
    message = tr("SWPPP Review needs {needed}.").format(needed="; ".join(n.problem for n in found))
    folder = Path(folder or dependency_folder())
    loaded = {n.name: _loaded_elsewhere(n.name, folder) for n in found if n.spec}
    for name, location in loaded.items():
        if location:
            # Installing again would not help: Python uses the module it has imported already.
            message += " " + tr(
                "{name} is installed in {folder}, but QGIS had loaded another "
                "{name} from {location} before SWPPP Review started (another "
                "plugin or a startup script): disable that, then restart "
                "QGIS."
            ).format(name=name, folder=folder, location=location)
    for need in found:
        if need.spec is None:
            message += " " + tr("For {name}, {instead}.").format(name=need.name, instead=need.instead)
    specs = [n.spec for n in found if n.spec and not loaded[n.name]]
    if any(loaded.values()) and not specs:
        return message, None
    python = python or (find_python() if specs else None)
    if not specs or python is None:
        if specs:
            message += " " + tr(
                "Install {specs} with pip of the Python QGIS runs (OSGeo4W Shell on Windows)."
            ).format(specs=" ".join(specs))
        return message + " " + tr("Then restart QGIS."), None
    if gui:
        message += " " + tr(
            "Install… puts {specs} in {folder} for this QGIS profile. Then restart QGIS."
        ).format(specs=", ".join(specs), folder=folder)
    else:
        message += " " + tr(
            "To install it for this QGIS profile, run:\n{command}\nThen restart QGIS."
        ).format(command=command_text(pip_command(python, folder, specs)))
    return message, {"specs": specs, "folder": folder, "python": python, "host": host}


def _loaded_elsewhere(name, folder):
    """Where module ``name`` was imported from, if not from ``folder`` though ``folder`` has it.

    The distribution and import names agree for everything the installer offers.
    """
    module = sys.modules.get(name)
    location = getattr(module, "__file__", None)
    if not location or not any(folder.glob(f"{name}-*.dist-info")):
        return None
    try:
        inside = os.path.commonpath([os.path.realpath(location), os.path.realpath(folder)])
    except ValueError:  # another drive on Windows
        inside = ""
    return None if inside == os.path.realpath(folder) else os.path.dirname(location)


class InstallOffer:
    """The message bar item with the "Install…" button, and what its click needs: held by the
    plugin for as long as the item is shown (a handler only Qt referenced was freed, and a
    click crashed QGIS 3.22); :meth:`close` disconnects the button and removes the item."""

    def __init__(self, bar, message, specs, folder, python, plugin_dir, host):
        self.bar, self.specs, self.folder, self.python = bar, specs, folder, python
        self.plugin_dir, self.host = plugin_dir, host
        self.task = None  # kept referenced: a QgsTask only Python holds is deleted otherwise
        # The message bar shows HTML: "shapely>=2,<2.1" would lose "<2.1 ..." as a tag.
        self.item = bar.createMessage(TITLE, html.escape(message))
        self.button = QPushButton(tr("Install…"), self.item)
        self.button.setObjectName(BUTTON_NAME)
        self.item.layout().addWidget(self.button)
        self.button.clicked.connect(self.clicked)
        bar.pushWidget(self.item, Qgis.MessageLevel.Critical)

    def clicked(self):
        # The question's parent is the main window: a child of the bar took its red style.
        box = confirmation_box(self.bar.window(), self.specs, self.folder, self.python)
        try:
            if box.exec() != QMessageBox.StandardButton.Yes:
                return
        finally:
            box.deleteLater()
        self.button.setEnabled(False)
        self.task = InstallTask(self.specs, self.folder, self.python, self.plugin_dir, self.host, self.done)
        QgsApplication.taskManager().addTask(self.task)
        self.bar.pushMessage(
            TITLE,
            html.escape(
                tr("Installing {}… (progress in the Log Messages panel, tab SWPPP Review)").format(
                    ", ".join(self.specs)
                )
            ),
            level=Qgis.MessageLevel.Info,
            duration=10,
        )

    def done(self, ok, text):
        with contextlib.suppress(RuntimeError):  # the item is gone (closed while installing)
            self.button.setEnabled(not ok)
        self.bar.pushMessage(
            TITLE,
            html.escape(text),
            level=Qgis.MessageLevel.Success if ok else Qgis.MessageLevel.Critical,
            duration=0,
        )
        self.task = None

    # Installs under way when their offer was closed, held until the task manager deletes the
    # task (a QgsTask subclass only Python held would be freed while pip runs).
    _installing: ClassVar[dict] = {}

    def close(self):
        """Disconnect the button and take the item off the bar (the plugin's unload). An install
        under way finishes (it was asked for) and says so in the bar (QGIS's)."""
        with contextlib.suppress(RuntimeError, TypeError):  # already gone with the bar
            self.button.clicked.disconnect(self.clicked)
            self.bar.popWidget(self.item)
        task, self.task = self.task, None
        if task is not None:
            key = id(task)
            InstallOffer._installing[key] = task
            task.destroyed.connect(lambda *_: InstallOffer._installing.pop(key, None))


def message_with_install_button(bar, message, specs, folder, python, plugin_dir, host):
    """Push ``message`` to the message bar ``bar`` with an "Install…" button.

    The button asks for confirmation (``confirmation_box``), then installs ``specs`` into
    ``folder`` in a background task and says when to restart QGIS.

    Returns
    -------
    InstallOffer
        Keep it for as long as the item is shown (``.item``; its button's object name is
        ``swpppInstallDependencies``); ``close()`` removes it.
    """
    return InstallOffer(bar, message, specs, folder, python, plugin_dir, host)


def confirmation_box(parent, specs, folder, python):
    """The (not yet shown) question listing exactly what will be installed, where and how."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        TITLE,
        tr("Install these packages for SWPPP Review?"),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setInformativeText(
        tr(
            "{packages}\n\ninto the folder\n{folder}\n\nof this QGIS profile, with pip of QGIS's "
            "Python ({python}), from the package index pip is set up to use. Other Python "
            "programs are not affected. Restart QGIS afterwards."
        ).format(packages="\n".join(specs), folder=folder, python=python)
    )
    box.setDetailedText(command_text(pip_command(python, folder, specs)))
    return box
