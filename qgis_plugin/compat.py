"""What differs between the QGIS releases the plugin supports (3.22 to 3.44), in one place.

Tested on 3.22 (Debian 12), 3.40 LTR (Debian 13) and 3.44 (Debian testing); the rest of the
plugin asks this module instead of testing versions itself.

- Layer filters of a ``QgsMapLayerComboBox``: ``QgsMapLayerProxyModel.Filter``/``Filters`` up to
  3.32, ``Qgis.LayerFilter``/``Qgis.LayerFilters`` from 3.34 (3.40 no longer has
  ``QgsMapLayerProxyModel.Filters``).
- Distance and render units: ``QgsUnitTypes.DistanceUnit``/``RenderUnit`` up to 3.28,
  ``Qgis.DistanceUnit``/``Qgis.RenderUnit`` from 3.30; and
  a CRS in US survey feet reports ``DistanceFeet`` in 3.22 but ``FeetUSSurvey`` from 3.30 (which
  has the survey foot as a unit of its own). ``is_feet`` and ``metres_per_unit`` compare what a
  unit means, never one enum value.
- Fonts of layout items: ``QgsLayoutItemLabel.setFont`` is deprecated from 3.24 (its text format,
  ``setTextFormat``), ``QgsLayoutItemLegend.setStyleFont`` from 3.30 (its styles' text formats):
  ``set_label_font``, ``set_legend_font``.
- A Processing parameter's list of field names: ``parameterAsFields`` is deprecated from 3.32
  (``parameterAsStrings``): ``parameter_as_strings``.
- pyproj 3.7 (Debian 13's, beside QGIS 3.40) crashes QGIS when a task thread uses it a second
  time: ``keep_pyproj_context``, called by every algorithm as it ends.
"""

import ctypes

from qgis.core import Qgis, QgsMapLayerProxyModel, QgsUnitTypes

__all__ = [
    "LAYER_FILTER",
    "layer_filters",
    "DISTANCE_FEET",
    "DISTANCE_METERS",
    "RENDER_POINTS",
    "is_feet",
    "metres_per_unit",
    "qgis_version",
    "keep_pyproj_context",
    "pyproj_needs_kept_context",
    "set_label_font",
    "set_legend_font",
    "parameter_as_strings",
]

# The enum holding VectorLayer, PolygonLayer, PointLayer, LineLayer, HasGeometry, ...
LAYER_FILTER = getattr(Qgis, "LayerFilter", QgsMapLayerProxyModel)
_LAYER_FILTERS = getattr(Qgis, "LayerFilters", None) or QgsMapLayerProxyModel.Filters

_DISTANCE_UNIT = getattr(Qgis, "DistanceUnit", None)
if _DISTANCE_UNIT is not None and hasattr(_DISTANCE_UNIT, "Feet"):  # 3.30+
    DISTANCE_FEET = _DISTANCE_UNIT.Feet  # the international foot (0.3048 m)
    DISTANCE_METERS = _DISTANCE_UNIT.Meters
else:
    DISTANCE_FEET = QgsUnitTypes.DistanceFeet
    DISTANCE_METERS = QgsUnitTypes.DistanceMeters

_RENDER_UNIT = getattr(Qgis, "RenderUnit", None)
if _RENDER_UNIT is not None and hasattr(_RENDER_UNIT, "Points"):  # 3.30+
    RENDER_POINTS = _RENDER_UNIT.Points
else:
    RENDER_POINTS = QgsUnitTypes.RenderPoints


def qgis_version():
    """This QGIS as ``(major, minor)``, e.g. ``(3, 40)``."""
    number = Qgis.versionInt() if hasattr(Qgis, "versionInt") else Qgis.QGIS_VERSION_INT
    return number // 10000, number // 100 % 100


def layer_filters(*names):
    """The layer filter flags combining ``names`` (``"VectorLayer"``, ``"PolygonLayer"``, ...),
    of the type this QGIS's ``QgsMapLayerComboBox.setFilters`` takes."""
    flags = _LAYER_FILTERS()
    for name in names:
        flags |= getattr(LAYER_FILTER, name)
    return flags


def metres_per_unit(unit):
    """How many metres one ``unit`` (a distance unit of either enum) is."""
    return QgsUnitTypes.fromUnitToUnitFactor(unit, DISTANCE_METERS)


def is_feet(unit):
    """Whether ``unit`` is a foot of any kind (international, US survey, British, Clarke's,
    Indian): what a CRS's map units in feet read as in every release."""
    # Every foot is within 0.5 mm of the international one (QGIS's own factor for it).
    return abs(metres_per_unit(unit) - metres_per_unit(DISTANCE_FEET)) < 0.0005


def _with_font(text_format, font):
    """``text_format`` given ``font`` as the deprecated ``setFont(QFont)`` calls give it: the
    font, and its size in points when it has one."""
    text_format.setFont(font)
    if font.pointSizeF() > 0:
        text_format.setSize(font.pointSizeF())
        text_format.setSizeUnit(RENDER_POINTS)
    return text_format


def set_label_font(label, font):
    """Draw the layout label ``label`` in ``font`` (a ``QFont``, size in points)."""
    if hasattr(label, "setTextFormat"):  # 3.24+
        label.setTextFormat(_with_font(label.textFormat(), font))
    else:
        label.setFont(font)


def set_legend_font(legend, component, font):
    """Draw the layout legend ``legend``'s ``component`` (title, group, symbol label, ...) in
    ``font`` (a ``QFont``, size in points)."""
    style = legend.style(component)
    if hasattr(style, "setTextFormat"):  # 3.30+
        style.setTextFormat(_with_font(style.textFormat(), font))
        legend.setStyle(component, style)
    else:
        legend.setStyleFont(component, font)


def parameter_as_strings(algorithm, parameters, name, context):
    """The list of strings (field names) the Processing parameter ``name`` holds."""
    if hasattr(algorithm, "parameterAsStrings"):  # 3.32+
        return algorithm.parameterAsStrings(parameters, name, context)
    return algorithm.parameterAsFields(parameters, name, context)


# pyproj's PROJ contexts kept alive for the threads that made them (keep_pyproj_context).
_KEPT_PYPROJ_CONTEXTS: list[object] = []


def pyproj_needs_kept_context():
    """Whether this pyproj frees a thread's PROJ context under QGIS's task threads.

    pyproj 3.7 keeps one PROJ context per thread in thread-specific storage, owned by a
    ``threading.local``. A QGIS task runs in a thread Python did not make: its Python thread state,
    and the ``threading.local`` with it, ends when the task returns, which frees the context while
    the thread's storage still points to it; the next task on that pooled thread that uses pyproj
    (geopandas does, for every CRS) crashes QGIS (pyproj issue 1509, fixed in 3.8 by pull 1541).
    """
    try:
        import pyproj
        from pyproj import _context
    except ImportError:
        return False
    parts = []
    for piece in pyproj.__version__.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return (3, 7) <= tuple(parts) < (3, 8) and hasattr(_context, "get_context_manager")


def keep_pyproj_context():
    """Keep this thread's pyproj PROJ context alive for the rest of the session, where the
    pyproj in use would otherwise free it under the thread (``pyproj_needs_kept_context``).

    One context per pooled thread at most: the next task on the same thread finds it and uses it.
    """
    if not pyproj_needs_kept_context():
        return
    from pyproj import _context

    # pyproj 3.7's alone (pyproj_needs_kept_context checked it is there)
    get_context_manager = getattr(_context, "get_context_manager", None)
    manager = get_context_manager() if get_context_manager is not None else None
    if manager is not None and all(kept is not manager for kept in _KEPT_PYPROJ_CONTEXTS):
        _KEPT_PYPROJ_CONTEXTS.append(manager)
        # Never freed, not even as Python ends: by then QGIS has closed PROJ (exitQgis), and
        # destroying a context of another thread's then crashes the exit.
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(manager))
