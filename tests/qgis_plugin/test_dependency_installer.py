"""Missing dependencies: the plugin names them, and its installer makes it work after a restart.

The end-to-end test starts Debian's ``qgis_process.bin`` without the QGIS venv on the path (so
QGIS's Python has Debian's shapely 1.8), runs the installer's own ``install`` (real pip, from
PyPI) into that fresh profile's folder, and starts ``qgis_process`` again.
"""

import html
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.qgis

QGIS_PROCESS = Path("/usr/bin/qgis_process.bin")
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, the one QGIS embeds: shapely 1.8


@pytest.fixture(scope="module")
def installer(staged_plugin):
    from swppp_review import dependency_installer

    return dependency_installer


@pytest.fixture(scope="module")
def host():
    from qgis.core import Qgis

    return (Qgis.geosVersionMajor(), Qgis.geosVersionMinor())


@pytest.fixture(scope="module")
def debian_shapely_1():
    """Skips unless Debian's Python has shapely 1.x (what the plugin must refuse)."""
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import shapely; print(shapely.__version__)"],
        check=False,
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0 or not probe.stdout.startswith("1."):
        pytest.skip(f"{SYSTEM_PYTHON} has no shapely 1.x: nothing would be missing in QGIS")
    return probe.stdout.strip()


@pytest.fixture(scope="module")
def pypi():
    """Skips, saying why, where pip, as this user configures it (pip.conf, PIP_* variables: the
    installer's own pip names no index), cannot list shapely's releases (asked once)."""
    try:
        listed = subprocess.run(
            [SYSTEM_PYTHON, "-m", "pip", "index", "versions", "shapely"],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"{SYSTEM_PYTHON} -m pip cannot be run: {err}")
    if listed.returncode != 0 or "2." not in listed.stdout:
        pytest.skip(
            "pip as configured on this machine cannot list shapely's releases: "
            + (listed.stderr.strip().splitlines() or ["no output"])[-1]
        )


def answer_question(choice, seen=None, tries=50):
    """Click ``choice`` (a ``QMessageBox.StandardButton`` name) in the installer's question once
    it shows, giving the box to ``seen`` first. The question's parent is the bar's window, which
    in a test is no shown window: Qt may name no active modal widget, so it is also looked for
    among the windows. Never raises (an exception in a timer's slot aborts QGIS)."""
    from qgis.PyQt.QtCore import QTimer
    from qgis.PyQt.QtWidgets import QApplication, QMessageBox

    def attempt(left):
        shown = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
        box = QApplication.activeModalWidget() or (shown[0] if shown else None)
        if not isinstance(box, QMessageBox):
            if left:
                QTimer.singleShot(100, lambda: attempt(left - 1))
            return
        if seen is not None:
            seen(box)
        box.button(getattr(QMessageBox.StandardButton, choice)).click()

    QTimer.singleShot(100, lambda: attempt(tries))


def test_the_installers_pip_uses_the_users_own_configuration(installer, tmp_path):
    """No index, no isolation: pip reads where to install from as the user set it up."""
    command = installer.pip_command(SYSTEM_PYTHON, tmp_path, ["shapely>=2,<2.1"])
    assert command[:4] == [SYSTEM_PYTHON, "-m", "pip", "install"]
    assert not {
        "-i",
        "--index-url",
        "--extra-index-url",
        "--no-index",
        "--isolated",
        "--find-links",
        "-f",
        "--config-file",
    } & set(command)
    assert command[-1] == "shapely>=2,<2.1"


@pytest.fixture
def fresh_qgis(staged_plugin, tmp_path):
    """``(run, folder)``: qgis_process.bin in a new profile, the plugin enabled, Debian's Python
    as it is (no venv on PYTHONPATH); ``folder`` is that profile's dependency folder."""
    if not QGIS_PROCESS.is_file():
        pytest.skip(f"{QGIS_PROCESS} is not installed")
    config = tmp_path / "qgis"
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "QGIS_CUSTOM_CONFIG_PATH": str(config),
        "QGIS_PLUGINPATH": str(Path(staged_plugin.PLUGIN_DIR).parent),
        "PROJ_DATA": "/usr/share/proj",
        "QT_QPA_PLATFORM": "offscreen",
    }
    env.pop("PYTHONPATH", None)

    def run(*args):
        completed = subprocess.run(
            [str(QGIS_PROCESS), *args], env=env, check=False, capture_output=True, text=True, timeout=600
        )
        assert completed.returncode >= 0, f"qgis_process crashed:\n{completed.stderr}"
        return completed

    enabled = run("plugins", "enable", "swppp_review")
    assert enabled.returncode == 0, enabled.stdout + enabled.stderr
    return run, config / "profiles" / "default" / "python" / "swppp_review_deps"


def test_qgis_without_shapely_2_names_it_and_works_after_the_install(
    fresh_qgis, installer, staged_plugin, host, debian_shapely_1, pypi, data_copy, tmp_path
):
    from analysis.dependencies import shapely_spec

    run, folder = fresh_qgis
    before = run("list")
    assert before.returncode == 0, before.stderr
    assert "swppp:review" not in before.stdout  # the provider is not registered
    logged = before.stdout + before.stderr
    assert f"shapely >= 2.0 (found {debian_shapely_1})" in logged
    # The command to run by hand: QGIS's own interpreter (not a python3 found first on PATH),
    # pip into this profile's folder.
    python = installer.find_python()
    assert Path(python).parent == Path(sys.base_prefix) / "bin"
    assert f"{python} -m pip install --target {folder} --upgrade" in logged
    needs = installer.check_with(SYSTEM_PYTHON, staged_plugin.PLUGIN_DIR, [], host)
    specs = [n["spec"] for n in needs]
    assert specs == [shapely_spec(host)]  # "shapely>=2,<2.1" for Debian 12's GEOS 3.11
    assert all(spec in logged for spec in specs)

    lines = []
    assert (
        installer.install(specs, folder, SYSTEM_PYTHON, staged_plugin.PLUGIN_DIR, host, log=lines.append)
        == []
    )
    assert any(line.startswith("Successfully installed shapely-2.") for line in lines)
    assert next(p.name for p in folder.glob("shapely-*.dist-info")).startswith("shapely-2.")
    assert not list(folder.glob("numpy*"))  # --no-deps: Debian's numpy 1 stays the one used

    listed = run("list")
    assert "swppp:review" in listed.stdout, listed.stderr
    assert "SWPPP Review needs" not in listed.stdout + listed.stderr
    result = tmp_path / "r.json"
    review = run("run", "swppp:review", "--", f"SITE={data_copy('demo_site.gpkg')}", f"OUTPUT_JSON={result}")
    assert review.returncode == 0, review.stdout + review.stderr
    assert json.loads(result.read_text(encoding="utf-8"))["measurements"]["disturbed_acres"] > 0


def test_a_failed_or_cancelled_install_changes_nothing(installer, staged_plugin, host, pypi, tmp_path):
    from analysis.dependencies import shapely_spec

    folder = tmp_path / "deps"
    fitting = shapely_spec(host)  # "shapely>=2,<2.1" for Debian 12's GEOS 3.11
    installer.install([fitting], folder, SYSTEM_PYTHON, staged_plugin.PLUGIN_DIR, host, log=lambda line: None)
    before = sorted(p.name for p in folder.iterdir())

    with pytest.raises(installer.InstallError, match="pip failed"):  # no such release
        installer.install(
            ["shapely>=2,<2.0"], folder, SYSTEM_PYTHON, staged_plugin.PLUGIN_DIR, host, log=lambda line: None
        )
    with pytest.raises(installer.InstallError, match="cancelled"):
        installer.install(
            [fitting],
            folder,
            SYSTEM_PYTHON,
            staged_plugin.PLUGIN_DIR,
            host,
            log=lambda line: None,
            is_canceled=lambda: True,
        )

    assert sorted(p.name for p in folder.iterdir()) == before
    assert [p.name for p in folder.parent.iterdir()] == ["deps"]  # no staging folder left


def test_a_shapely_mixing_two_geos_is_not_accepted_as_installed(installer, staged_plugin, pypi, tmp_path):
    """shapely 2.1 carries GEOS 3.13: the check after pip refuses it for QGIS's GEOS 3.11."""
    folder = tmp_path / "deps"
    with pytest.raises(installer.InstallError, match="would mix"):
        installer.install(
            ["shapely>=2.1,<2.2"],
            folder,
            SYSTEM_PYTHON,
            staged_plugin.PLUGIN_DIR,
            (3, 11),
            log=lambda line: None,
        )
    assert not folder.exists()


def test_the_message_bar_offers_install_and_the_question_lists_packages_and_folder(
    installer, qgis_app, qgis_new_project, tmp_path
):
    from qgis.gui import QgsMessageBar
    from qgis.PyQt.QtWidgets import QMessageBox, QPushButton

    from analysis.dependencies import Need

    found = [Need("shapely", "shapely >= 2.0 (found 1.8.5)", "shapely>=2,<2.1")]
    folder, python = tmp_path / "swppp_review_deps", installer.find_python()
    message, offer = installer.describe(found, (3, 11), gui=True, folder=folder, python=python)
    bar = QgsMessageBar()
    installer.message_with_install_button(bar, message, plugin_dir=str(tmp_path), **offer)

    item = bar.currentItem()
    shown = html.unescape(item.text())  # the bar shows HTML: the text is escaped
    assert "shapely >= 2.0 (found 1.8.5)" in shown and str(folder) in shown
    assert "Install… puts shapely>=2,<2.1 in" in shown and "restart QGIS" in shown
    assert "<2.1" not in item.text()  # else the bar would take "<2.1 in ..." for a tag
    button = item.findChild(QPushButton, "swpppInstallDependencies")
    assert button is not None and button.text() == "Install…" and button.isEnabled()

    box = installer.confirmation_box(bar, offer["specs"], folder, python)
    assert "shapely>=2,<2.1" in box.informativeText() and str(folder) in box.informativeText()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    assert box.detailedText().startswith(f"{python} -m pip install --target {folder}")


def test_the_plugins_install_button_survives_and_asks_in_a_readable_dialog(
    staged_plugin, installer, qgis_app, tmp_path
):
    """Issue 34, item 1: the plugin pushed the item and dropped it, so the button's handler was
    freed and a click crashed QGIS 3.22. The plugin keeps the offer; after a garbage collection a
    click still asks, in a question parented by the main window (a child of the red bar took its
    style), and unload takes the item off the bar."""
    import gc

    from qgis.gui import QgsMessageBar
    from qgis.PyQt.QtWidgets import QMainWindow, QPushButton

    from analysis.dependencies import Need

    class Iface:  # QGIS's main window and its message bar, as the plugin meets them
        def __init__(self):
            self.window = QMainWindow()
            self.bar = QgsMessageBar(self.window)
            self.window.setCentralWidget(self.bar)

        def messageBar(self):
            return self.bar

        def mainWindow(self):
            return self.window

    found = [Need("shapely", "shapely >= 2.0 (found 1.8.5)", "shapely>=2,<2.1")]
    folder, python = tmp_path / "swppp_review_deps", installer.find_python()
    message, offer = installer.describe(found, (3, 11), gui=True, folder=folder, python=python)
    iface = Iface()
    plugin = staged_plugin.classFactory(iface)
    plugin._show(message, offer)
    gc.collect()
    bar = iface.messageBar()
    button = bar.currentItem().findChild(QPushButton, "swpppInstallDependencies")
    asked = []

    answer_question(
        "Cancel",
        lambda box: asked.append((box.parent() is not bar, box.parent() is bar.window(), box.styleSheet())),
    )
    button.click()
    assert asked == [(True, True, "")] and button.isEnabled()  # cancelled: nothing installed
    assert not folder.exists()
    plugin.unload()
    assert plugin.install_offer is None
    assert all(i.findChild(QPushButton, "swpppInstallDependencies") is None for i in bar.items())


def test_nothing_pip_can_fix_is_said_without_an_offer(installer, qgis_app, host):
    from analysis.dependencies import Need, needs

    found = [
        Need(
            "pyproj",
            "pyproj >= 3.4 (not installed)",
            None,
            "install your distribution's package (e.g. python3-pyproj)",
        )
    ]
    message, offer = installer.describe(found, (3, 11), gui=True)
    assert offer is None
    assert "python3-pyproj" in message and "restart QGIS" in message
    assert installer.describe(needs(host_geos=host), host) == (None, None)  # this QGIS: all there


def test_install_button_asks_then_installs_in_a_task_and_says_restart(
    installer, staged_plugin, host, qgis_app, pypi, tmp_path
):
    """The whole GUI path: Install…, Yes in the question, the QgsTask, the message to restart.

    What is offered is what Debian's Python lacks (shapely 1.8 on Debian 12); where the
    distribution's shapely 2 lacks nothing (Debian 13, testing), the same offer of the shapely
    fitting this QGIS's GEOS, so that the path runs on every release."""
    from qgis.core import QgsApplication
    from qgis.gui import QgsMessageBar
    from qgis.PyQt.QtWidgets import QPushButton

    from analysis.dependencies import Need, shapely_spec

    folder = tmp_path / "profile" / "python" / "swppp_review_deps"
    found = [Need(**n) for n in installer.check_with(SYSTEM_PYTHON, staged_plugin.PLUGIN_DIR, [], host)]
    found = found or [Need("shapely", "shapely >= 2.0", shapely_spec(host))]
    message, offer = installer.describe(found, host, gui=True, folder=folder, python=SYSTEM_PYTHON)
    bar = QgsMessageBar()
    logged = []
    QgsApplication.messageLog().messageReceived.connect(
        lambda text, tag, level: logged.append(text) if tag == "SWPPP Review" else None
    )
    # Kept, as the plugin keeps it: the button's handler is the offer's (dropped, no click).
    install_offer = installer.message_with_install_button(
        bar, message, plugin_dir=staged_plugin.PLUGIN_DIR, **offer
    )
    item = install_offer.item
    asked = []

    answer_question("Yes", lambda box: asked.append(box.informativeText()))
    item.findChild(QPushButton, "swpppInstallDependencies").click()
    deadline = time.monotonic() + 300
    while "Restart QGIS" not in bar.currentItem().text() and time.monotonic() < deadline:
        qgis_app.processEvents()
        time.sleep(0.05)

    assert offer["specs"][0] in asked[0] and str(folder) in asked[0]
    assert html.unescape(bar.currentItem().text()).startswith(f"Installed {offer['specs'][0]} into {folder}")
    assert any(line.startswith("Successfully installed shapely-2.") for line in logged)
    assert next(p.name for p in folder.glob("shapely-*.dist-info")).startswith("shapely-2.")


def test_an_install_under_way_finishes_after_its_offer_is_closed(
    installer, staged_plugin, host, qgis_app, pypi, tmp_path
):
    """Issue 34, item 1: the plugin's unload closes the offer while pip may be running. The
    install that was asked for finishes (its task held until the task manager deletes it, not
    freed with the offer) and says so in QGIS's message bar; nothing is held afterwards."""
    import gc

    from qgis.core import QgsApplication
    from qgis.gui import QgsMessageBar
    from qgis.PyQt.QtCore import QCoreApplication, QEvent

    from analysis.dependencies import Need, shapely_spec

    folder = tmp_path / "profile" / "python" / "swppp_review_deps"
    found = [Need("shapely", "shapely >= 2.0", shapely_spec(host))]
    message, offer = installer.describe(found, host, gui=True, folder=folder, python=SYSTEM_PYTHON)
    bar = QgsMessageBar()
    install_offer = installer.message_with_install_button(
        bar, message, plugin_dir=staged_plugin.PLUGIN_DIR, **offer
    )
    answer_question("Yes")
    install_offer.button.click()
    assert install_offer.task is not None  # pip is running
    install_offer.close()
    del install_offer
    gc.collect()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (
        bar.currentItem() is None or "Restart QGIS" not in bar.currentItem().text()
    ):
        qgis_app.processEvents()
        time.sleep(0.05)
    assert bar.currentItem() is not None, "the install said nothing"
    assert html.unescape(bar.currentItem().text()).startswith(f"Installed {offer['specs'][0]} into {folder}")
    assert next(p.name for p in folder.glob("shapely-*.dist-info")).startswith("shapely-2.")
    while QgsApplication.taskManager().countActiveTasks():
        qgis_app.processEvents()
    for _ in range(3):
        qgis_app.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert installer.InstallOffer._installing == {}


def test_the_qgis_venv_pins_the_shapely_the_installer_would_install(host):
    """The QGIS venv of scripts/setup.sh and analysis.dependencies state one rule for this QGIS's
    GEOS: on Debian 12 (QGIS 3.22) the venv pins pip's shapely the installer would install; in a
    release's root filesystem (3.40, 3.44) it adds no shapely: the distribution's is used."""
    import shapely

    from analysis.dependencies import shapely_spec

    requirements = Path(__file__).resolve().parents[2] / "requirements"
    in_rootfs = os.environ.get("SWPPP_QGIS_RELEASE", "3.22") != "3.22"
    used = requirements / ("qgis-debian.txt" if in_rootfs else "qgis.txt")
    pinned = [
        line.strip() for line in used.read_text(encoding="utf-8").splitlines() if line.startswith("shapely")
    ]
    if in_rootfs:
        assert pinned == []
        assert Path(shapely.__file__).is_relative_to("/usr/lib/python3/dist-packages")
    else:
        assert pinned == [shapely_spec(host)]


def test_the_distributions_own_stack_is_judged_by_what_works(
    fresh_qgis, installer, staged_plugin, host, data_copy, tmp_path
):
    """QGIS's own Python with only the distribution's packages, as a reviewer installs it: on
    Debian 12 (QGIS 3.22) shapely 1.8 is refused with the pip requirement that fits QGIS's GEOS;
    on Debian 13 (3.40, shapely 2.1) and testing (3.44, shapely "0+unknown") it is accepted,
    nothing is offered, and qgis_process reviews the demo."""
    from analysis.dependencies import shapely_spec

    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import shapely; print(shapely.__version__)"],
        check=True,
        capture_output=True,
        text=True,
    )
    distribution_shapely = probe.stdout.strip()
    found = installer.check_with(SYSTEM_PYTHON, staged_plugin.PLUGIN_DIR, [], host)
    run, _folder = fresh_qgis
    listed = run("list")
    logged = listed.stdout + listed.stderr
    if distribution_shapely.startswith("1."):
        assert [n["spec"] for n in found] == [shapely_spec(host)]
        assert "swppp:review" not in listed.stdout
        assert f"shapely >= 2.0 (found {distribution_shapely})" in logged
        return
    assert found == []  # nothing missing, nothing offered for pip
    assert "swppp:review" in listed.stdout, logged
    assert "SWPPP Review needs" not in logged
    result = tmp_path / "r.json"
    review = run("run", "swppp:review", "--", f"SITE={data_copy('demo_site.gpkg')}", f"OUTPUT_JSON={result}")
    assert review.returncode == 0, review.stdout + review.stderr
    assert json.loads(result.read_text(encoding="utf-8"))["measurements"]["disturbed_acres"] > 0


def test_a_module_loaded_before_the_plugin_is_named_instead_of_installing_again(
    installer, qgis_app, tmp_path
):
    """Another plugin imported its shapely first: the folder's copy cannot be used this session,
    and installing it again would not change that."""
    import shapely

    from analysis.dependencies import Need

    folder = tmp_path / "swppp_review_deps"
    (folder / f"shapely-{shapely.__version__}.dist-info").mkdir(parents=True)  # as pip leaves it
    found = [Need("shapely", "shapely >= 2.0 (found 1.8.5)", "shapely>=2,<2.1")]
    message, offer = installer.describe(
        found, (3, 11), gui=True, folder=folder, python=installer.find_python()
    )
    assert offer is None
    assert f"QGIS had loaded another shapely from {Path(shapely.__file__).parent}" in message
    (folder / f"shapely-{shapely.__version__}.dist-info").rmdir()  # not installed there: offered
    assert installer.describe(found, (3, 11), gui=True, folder=folder, python=installer.find_python())[1][
        "specs"
    ] == ["shapely>=2,<2.1"]
