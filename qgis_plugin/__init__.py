"""SWPPP Review, the QGIS plugin: entry point and the bundled ``analysis`` package's import path."""

import importlib
import os
import sys

__all__ = ["PLUGIN_DIR", "classFactory", "use_bundled_analysis"]

PLUGIN_DIR = os.path.dirname(os.path.abspath(__file__))


def _is_inside(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives on Windows
        return False


def use_bundled_analysis():
    """Make ``import analysis`` find the copy shipped in this plugin folder.

    Puts the plugin folder on ``sys.path`` once, then imports the (light) top of the package to
    see which copy Python found.

    Returns
    -------
    str or None
        None when the bundled copy is the one in use; otherwise a message for a person saying
        which other ``analysis`` module is in the way.
    """
    if PLUGIN_DIR not in sys.path:
        sys.path.insert(0, PLUGIN_DIR)
    try:
        analysis = importlib.import_module("analysis")
    except ImportError as err:
        return (
            f"SWPPP Review cannot import its analysis package from {PLUGIN_DIR}: {err}. "
            "Reinstall the plugin from its ZIP file."
        )
    location = getattr(analysis, "__file__", None) or repr(analysis)
    if getattr(analysis, "__file__", None) and _is_inside(location, PLUGIN_DIR):
        return None
    # Using a foreign module of the same name would give wrong results or odd tracebacks later.
    return (
        f"SWPPP Review is disabled: another Python module named 'analysis' is already loaded "
        f"(from {location}), so the plugin cannot use its own copy in {PLUGIN_DIR}. "
        "Disable the plugin or script that loads it, then restart QGIS."
    )


def classFactory(iface):
    """Called by QGIS (``iface`` is None under qgis_process)."""
    from .plugin import SwpppReviewPlugin

    return SwpppReviewPlugin(iface)
