"""The QGIS interface the plugin tests give the plugin."""


class Iface:
    """pytest-qgis's iface with the removal half of what the plugin adds (QGIS has both)."""

    def __init__(self, stub):
        self._stub = stub
        self.docks, self.menu, self.toolbar = [], [], []

    def __getattr__(self, name):
        return getattr(self._stub, name)

    def addDockWidget(self, area, dock):
        self.docks.append(dock)

    def removeDockWidget(self, dock):
        self.docks.remove(dock)

    def addPluginToMenu(self, menu, action):
        self.menu.append(action)

    def removePluginMenu(self, menu, action):
        self.menu.remove(action)

    def addToolBarIcon(self, action):
        self.toolbar.append(action)

    def removeToolBarIcon(self, action):
        self.toolbar.remove(action)
