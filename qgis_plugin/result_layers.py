"""The review's result layers in the project: one styled group, and a finding's features on the map.

The findings GeoPackage holds ``findings``, the plan's changes since a compared round
(``plan_changes``) and the site's ``disturbance``, ``smp`` and ``easement``, each with its
default style stored inside (``analysis.report.layer_style``): loading a layer applies it, so
they open styled here and in any later QGIS session.
"""

from qgis.core import (
    QgsCoordinateTransform,
    QgsExpression,
    QgsFeatureRequest,
    QgsProject,
    QgsRectangle,
    QgsVectorLayer,
)

__all__ = [
    "RESULT_LAYERS",
    "FINDINGS_LAYERS",
    "PLAN_CHANGES_LAYERS",
    "PLAN_CONTEXT",
    "CONTEXT_GROUP",
    "load_result_layers",
    "load_context_layers",
    "remove_group",
    "feature_selection",
    "finding_selection",
    "select_and_zoom",
]

# Top to bottom in the group: verdicts over what they are about.
FINDINGS_LAYERS = ("findings_points", "findings_lines", "findings")
# The plan's changes since the round compared with (analysis.report.findings_layers.PLAN_CHANGES_LAYERS).
PLAN_CHANGES_LAYERS = ("plan_changes_points", "plan_changes_lines", "plan_changes")
RESULT_LAYERS = FINDINGS_LAYERS + PLAN_CHANGES_LAYERS + ("smp", "smp_points", "easement", "disturbance")
PLAN_FID = "plan_fid"  # analysis.report.findings_layers.PLAN_FID: a feature's fid in the reviewed plan
FINDING = "finding"  # analysis.report.findings_layers.FINDING: a finding's number in the review (1, 2, ...)
_ID_FIELDS = {"smp": "smp_id", "smp_points": "smp_id", "easement": "easement_id"}
# The map's context under the results: the plan's layers the findings GeoPackage does not carry,
# and the reference layers (the report's map shows the same).
PLAN_CONTEXT = ("discharge_point", "site_boundary", "public_row", "drainage_area")
CONTEXT_GROUP = "Plan and reference (context)"
_ZOOM_MARGIN = 0.25  # of the larger side, around what is shown; a point gets 100 map units


def remove_group(title, project=None):
    """Remove the group ``title`` (a previous run's results) and its layers from the project."""
    project = project or QgsProject.instance()
    root = project.layerTreeRoot()
    group = root.findGroup(title)
    if group is None:
        return
    project.removeMapLayers([node.layerId() for node in group.findLayers()])
    root.removeChildNode(group)


def load_result_layers(gpkg, title, project=None):
    """Add the GeoPackage's result layers as the group ``title`` at the top of the layer tree.

    A previous group of that title is replaced. Returns ``{layer name: QgsVectorLayer}``.
    """
    from analysis.io.vector import list_layers

    project = project or QgsProject.instance()
    remove_group(title, project)
    present = set(list_layers(gpkg))
    group = project.layerTreeRoot().insertGroup(0, title)
    layers = {}
    for name in RESULT_LAYERS:
        if name not in present:
            continue
        # The constructor loads the layer's default style: the one stored in the GeoPackage.
        layer = QgsVectorLayer(f"{gpkg}|layername={name}", name, "ogr")
        if not layer.isValid():
            continue
        project.addMapLayer(layer, False)
        group.addLayer(layer)
        layers[name] = layer
    return layers


def load_context_layers(title, site=None, reference=None, project=None):
    """Add the plan's context layers (``PLAN_CONTEXT``, from the site plan GeoPackage ``site``)
    and the reference layers (from the reference GeoPackage ``reference``), those present, as
    the subgroup ``CONTEXT_GROUP`` at the bottom of the group ``title`` (the results), styled
    as the report's map; the reference layers drawn where the map shows them (a statewide
    layer is read only where the map is). Returns ``{layer name: QgsVectorLayer}``."""
    from analysis.io.vector import list_layers
    from analysis.reference.contract import REFERENCE_LAYERS

    from .report_layout import style_context_layer

    project = project or QgsProject.instance()
    group = project.layerTreeRoot().findGroup(title)
    if group is None:
        return {}
    wanted = [(site, name) for name in PLAN_CONTEXT] + [(reference, name) for name in REFERENCE_LAYERS]
    present = {path: set(list_layers(path)) for path in {site, reference} if path}
    context = group.addGroup(CONTEXT_GROUP)
    layers = {}
    for path, name in wanted:
        if not path or name not in present[path] or name in layers:
            continue
        layer = QgsVectorLayer(f"{path}|layername={name}", name, "ogr")
        if not layer.isValid():
            continue
        style_context_layer(layer, name)
        project.addMapLayer(layer, False)
        context.addLayer(layer)
        layers[name] = layer
    if not layers:
        group.removeChildNode(context)
    return layers


def _parse(label):
    layer, _, value = str(label).partition(":")
    return layer, value


def feature_selection(features, layers):
    """Which result features a finding's ``features`` (``smp:BR-2``, ``disturbance:3``,
    ``smp:#4``) name: ``{layer name: [feature ids]}``, for the layers loaded."""
    out: dict[str, list] = {}
    for label in features:
        name, value = _parse(label)
        candidates = [n for n in (name, f"{name}_points") if n in layers]
        for candidate in candidates:
            layer = layers[candidate]
            id_field = _ID_FIELDS.get(candidate)
            if value.startswith("#") or id_field is None:
                fid = value.lstrip("#")
                if not fid.isdigit():
                    continue
                expression = QgsExpression.createFieldEqualityExpression(PLAN_FID, int(fid))
            else:
                expression = QgsExpression.createFieldEqualityExpression(id_field, value)
            request = QgsFeatureRequest().setFilterExpression(expression)
            request.setFlags(QgsFeatureRequest.Flag.NoGeometry)
            request.setNoAttributes()
            ids = [f.id() for f in layer.getFeatures(request)]
            if ids:
                out.setdefault(candidate, []).extend(ids)
    return out


def finding_selection(number, layers):
    """The finding's own geometry (the uncovered part, the wetland...): ``{layer: [fids]}`` of
    the findings layers whose ``finding`` is ``number`` (1 for the review's first)."""
    out = {}
    expression = QgsExpression.createFieldEqualityExpression(FINDING, int(number))
    for name in FINDINGS_LAYERS:
        if name in layers:
            request = QgsFeatureRequest().setFilterExpression(expression)
            request.setFlags(QgsFeatureRequest.Flag.NoGeometry)
            request.setNoAttributes()
            ids = [f.id() for f in layers[name].getFeatures(request)]
            if ids:
                out[name] = ids
    return out


def select_and_zoom(canvas, selection, layers, project=None):
    """Select ``selection`` (``{layer name: [fids]}``) in ``layers`` (others cleared) and zoom
    the canvas to them. Returns the extent zoomed to, in the canvas CRS (None: nothing to show)."""
    project = project or QgsProject.instance()
    destination = canvas.mapSettings().destinationCrs()
    boxes = []
    for name, layer in layers.items():
        fids = selection.get(name, [])
        layer.selectByIds(fids)
        if not fids:
            continue
        box = layer.boundingBoxOfSelected()
        if box.isNull():  # selected features without geometry
            continue
        if destination.isValid() and layer.crs() != destination:
            box = QgsCoordinateTransform(layer.crs(), destination, project).transformBoundingBox(box)
        boxes.append(box)
    if not boxes:
        return None
    extent = QgsRectangle(boxes[0])
    for box in boxes[1:]:
        extent.combineExtentWith(box)
    margin = max(extent.width(), extent.height()) * _ZOOM_MARGIN or 100.0
    extent.grow(margin)
    canvas.setExtent(extent)
    canvas.refresh()
    return extent
