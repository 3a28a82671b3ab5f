"""Issue 34, item 1: the plugin's unload leaves nothing behind that outlives it.

What outlives the plugin is QGIS's: the project, the main window, the map canvas, the message
bar, the task manager and a review's task. After ``unload()`` (five times over, a review
running each time) none of their signals has one receiver more than before the plugin was
loaded (the panel's own widgets go with it: Qt disconnects what a deleted object received), the
running task reports to nothing of the panel's (and keeps what it reads until it is deleted),
and a new project reaches no unloaded handler.
"""

import gc
import time
import weakref

import pytest
from qgis.core import QgsApplication, QgsProject
from qgis.PyQt.QtCore import QCoreApplication, QEvent, QMetaMethod

from tests.qgis_plugin.ifaces import Iface

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]


def receivers(qobject):
    """``{signal: number of receivers}`` for every signal ``qobject``'s class declares."""
    meta = qobject.metaObject()
    counts = {}
    for index in range(meta.methodCount()):
        method = meta.method(index)
        if method.methodType() != QMetaMethod.MethodType.Signal:
            continue
        name = bytes(method.name()).decode()
        signal = getattr(qobject, name, None)
        if signal is not None and hasattr(signal, "connect"):
            counts[name] = qobject.receivers(signal)
    return counts


def outliving(iface):
    """What outlives the plugin, by name."""
    return {
        "project": QgsProject.instance(),
        "layer tree": QgsProject.instance().layerTreeRoot(),
        "main window": iface.mainWindow(),
        "map canvas": iface.mapCanvas(),
        "message bar": iface.messageBar(),
        "task manager": QgsApplication.taskManager(),
    }


def settle(seconds=120):
    """Deleted-later objects deleted; the task manager's tasks over (a cancelled review ends)."""
    deadline = time.monotonic() + seconds
    while QgsApplication.taskManager().countActiveTasks():
        assert time.monotonic() < deadline, "the cancelled review did not end"
        QgsApplication.processEvents()
        time.sleep(0.02)
    for _ in range(3):
        QgsApplication.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def test_unload_leaves_no_receiver_on_what_outlives_the_plugin(
    staged_plugin, swppp_plugin, qgis_iface, data_copy, tmp_path
):
    QgsProject.instance().clear()
    settle()
    before = {name: receivers(obj) for name, obj in outliving(qgis_iface).items()}
    site = data_copy("demo_site.gpkg")
    for round_ in range(5):
        iface = Iface(qgis_iface)
        plugin = staged_plugin.classFactory(iface)
        # The session's provider is registered already (QGIS refuses a second "swppp"): shared.
        plugin.provider = swppp_plugin.provider
        plugin.initGui()
        plugin.panel_action.trigger()
        panel = plugin.panel
        # The measure sees the panel: it follows the project while it lives.
        assert receivers(QgsProject.instance())["readProject"] > before["project"]["readProject"]
        panel.site_file.setFilePath(str(site))
        panel.output_folder.setFilePath(str(tmp_path / f"results{round_}"))
        panel.run()
        assert panel.is_running(), panel.status.text()
        task, context = panel._run[:2]
        context = weakref.ref(context)
        assert task.receivers(task.executed) == 1

        plugin.provider = None
        plugin.unload()
        # The task runs on (cancelled) in the task manager; nothing of the panel's hears it.
        assert task.receivers(task.executed) == 0
        assert not panel.is_running()
        del panel, task
        gc.collect()
        # Until the task manager deletes the task (not before the event loop runs), the task
        # reads its context: it lives on, without the panel; then it goes.
        assert context() is not None
        settle()
        gc.collect()
        assert context() is None

        assert iface.docks == [] and iface.menu == [] and iface.toolbar == []
        after = {name: receivers(obj) for name, obj in outliving(qgis_iface).items()}
        assert {
            name: {s: (before[name][s], n) for s, n in counts.items() if n != before[name][s]}
            for name, counts in after.items()
        } == {name: {} for name in after}
        # A new project reaches no handler of the unloaded plugin (a deleted panel's handler
        # would raise, and PyQt aborts QGIS on an exception in a slot).
        QgsProject.instance().clear()
        QgsApplication.processEvents()
