"""The print layouts of a QGIS project as plain ``LayoutMap`` records for the map-scale check.

Read on the main thread (``prepareAlgorithm``): layouts and their items are GUI-thread objects.
"""

from qgis.core import QgsCoordinateReferenceSystem, QgsGeometry, QgsLayoutItemMap

__all__ = ["project_layout_maps", "layout_names"]


def layout_names(project):
    """The names of the project's print layouts, in the project's order."""
    if project is None:
        return []
    return [layout.name() for layout in project.layoutManager().printLayouts()]


def project_layout_maps(project, names=None):
    """One ``LayoutMap`` per map item of each print layout of ``project``.

    A layout without a map item gives one record with ``item_id`` None (the check reports it
    ``needs_review``). ``names`` restricts the layouts read (None: all). With no project at
    all (qgis_process run without one) there are no layouts: an empty list, which the check
    reports once ("no print layouts (or no project is open)") beside the other sources.
    """
    if project is None:
        return []
    # Imported here, not at QGIS start-up: it loads pandas, shapely and pyproj.
    from analysis.checks.map_scale import LayoutMap

    records = []
    for layout in project.layoutManager().printLayouts():
        if names is not None and layout.name() not in names:
            continue
        maps = sorted(
            (item for item in layout.items() if isinstance(item, QgsLayoutItemMap)),
            key=lambda item: item.displayName(),
        )
        if not maps:
            records.append(LayoutMap(layout=layout.name(), item_id=None, scale=None))
        records.extend(_record(LayoutMap, layout.name(), item) for item in maps)
    return records


def _record(LayoutMap, layout_name, item):  # noqa: N803 - the class, imported late
    footprint = QgsGeometry.fromQPolygonF(item.visibleExtentPolygon())
    crs = item.crs()
    return LayoutMap(
        layout=layout_name,
        item_id=item.displayName(),
        scale=float(item.scale()),
        footprint_wkt=None if footprint.isEmpty() else footprint.asWkt(),
        crs_wkt=(crs.toWkt(QgsCoordinateReferenceSystem.WktVariant.WKT_PREFERRED) if crs.isValid() else None),
    )
