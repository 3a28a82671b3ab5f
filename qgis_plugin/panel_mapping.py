"""Project layers mapped to the site plan's roles, field by field, and kept in the project.

A CAD import or a county layer rarely carries the contract's layer and field names: the
reviewer picks, per role, a layer of the open project and, per contract field, the layer's
field that holds it. The mapping becomes ``swppp:review``'s ``*_LAYER`` parameters and its
``FIELD_MAP``, and is written into the project (``QgsProject.writeEntry``) so it comes back
with the project.
"""

import json

from qgis.core import QgsProcessing, QgsProject
from qgis.gui import QgsCollapsibleGroupBox, QgsFieldComboBox, QgsMapLayerComboBox
from qgis.PyQt.QtCore import pyqtSignal
from qgis.PyQt.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from .compat import layer_filters

__all__ = ["RoleMappingWidget", "role_specs", "PROJECT_SCOPE", "MAPPING_KEY", "REFERENCE_MAPPING_KEY"]

PROJECT_SCOPE = "swppp_review"
MAPPING_KEY = "layer_mapping"
REFERENCE_MAPPING_KEY = "reference_layer_mapping"

# Processing's layer types as the layer combo box's filters (named: compat.layer_filters).
_FILTERS = {
    QgsProcessing.SourceType.TypeVector: "VectorLayer",
    QgsProcessing.SourceType.TypeVectorPolygon: "PolygonLayer",
    QgsProcessing.SourceType.TypeVectorPoint: "PointLayer",
    QgsProcessing.SourceType.TypeVectorLine: "LineLayer",
    QgsProcessing.SourceType.TypeVectorAnyGeometry: "HasGeometry",
}


def role_specs(algorithm_class, reference=False):
    """``(role, parameter, label, layer filter, contract fields)`` for each role of an algorithm.

    The roles, labels and fields come from the site-plan contract
    (``analysis.siteplan.contract``) through the algorithm's parameters, so the panel offers
    exactly what ``swppp:review`` takes. ``reference=True``
    gives the reference-layer roles instead, with no field choices (FIELD_MAP covers the site
    plan's layers only; reference layers carry the contract's names, ``swppp reference import
    --map`` makes them so).
    """
    from analysis.siteplan.contract import SPECS

    out = []
    roles = algorithm_class.REFERENCE_ROLE_LAYERS if reference else algorithm_class.ROLE_LAYERS
    for role, parameter, label, types in roles:
        filters = layer_filters(*(_FILTERS[kind] for kind in types))
        out.append((role, parameter, label, filters, () if reference else SPECS[role].field_names))
    return out


class RoleMappingWidget(QWidget):
    """One layer combo box per role and, under it, one field combo box per contract field.

    A field combo left empty means "the field of the contract's name". ``changed`` is emitted on
    every choice the user makes (not while a saved mapping is being restored).
    """

    changed = pyqtSignal()

    def __init__(self, specs, parent=None, key=MAPPING_KEY, hint=None):
        super().__init__(parent)
        self._specs = specs
        self._key = key  # the project entry it is kept under
        self._layers = {}  # role -> QgsMapLayerComboBox
        self._fields: dict[str, dict] = {}  # role -> {contract field: QgsFieldComboBox}
        self._restoring = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        hint = QLabel(
            hint
            or self.tr(
                "Choose the project's layer for each part of the site "
                "plan, and the field holding each of its attributes where "
                "it is named differently."
            )
        )
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self._boxes = {}  # role -> (group box, its label)
        for role, _parameter, label, filters, fields in specs:
            box = QgsCollapsibleGroupBox(self.tr(label))
            self._boxes[role] = (box, self.tr(label))
            box.setObjectName(f"role_{role}")
            form = QFormLayout(box)
            layers = QgsMapLayerComboBox(box)
            layers.setObjectName(f"layer_{role}")
            layers.setFilters(filters)
            layers.setAllowEmptyLayer(True)
            layers.setLayer(None)
            form.addRow(self.tr("Layer"), layers)
            self._layers[role] = layers
            self._fields[role] = {}
            for field in fields:
                combo = QgsFieldComboBox(box)
                combo.setObjectName(f"field_{role}_{field}")
                combo.setAllowEmptyFieldName(True)
                combo.fieldChanged.connect(self._emit_changed)
                form.addRow(field, combo)
                self._fields[role][field] = combo
            layers.layerChanged.connect(lambda layer, r=role: self._layer_chosen(r, layer))
            layout.addWidget(box)
        layout.addStretch(1)

    # Choices ------------------------------------------------------------------------------
    def layer_combo(self, role):
        return self._layers[role]

    def field_combo(self, role, field):
        return self._fields[role][field]

    def set_layer(self, role, layer):
        self._layers[role].setLayer(layer)
        self._layer_chosen(role, layer)  # also when the combo already showed it

    def set_field(self, role, field, source):
        self._fields[role][field].setField(source or "")

    def _layer_chosen(self, role, layer):
        box, label = self._boxes[role]
        # The choice shows in the title, so it reads with the group collapsed.
        box.setTitle(
            f"{label}: {layer.name()}" if layer is not None else self.tr("{label}: none").format(label=label)
        )
        for field, combo in self._fields[role].items():
            combo.setLayer(layer)
            if layer is not None and not self._restoring:
                # The contract's own name, in any case, where the layer has it.
                same = [n for n in layer.fields().names() if n.lower() == field]
                combo.setField(same[0] if same else "")
        self._emit_changed()

    def _emit_changed(self, *_args):
        if not self._restoring:
            self.changed.emit()

    # What the algorithm takes -------------------------------------------------------------
    def chosen_layers(self):
        """``{role: layer}`` for every role with a layer."""
        return {
            role: combo.currentLayer()
            for role, combo in self._layers.items()
            if combo.currentLayer() is not None
        }

    def field_map(self):
        """``{"role.field": "source field"}`` where the chosen field is not the contract's name."""
        out = {}
        for role in self.chosen_layers():
            for field, combo in self._fields[role].items():
                source = combo.currentField()
                if source and source.lower() != field:
                    out[f"{role}.{field}"] = source
        return out

    def parameters(self):
        """The ``*_LAYER`` parameters and ``FIELD_MAP`` of ``swppp:review``."""
        by_role = {role: parameter for role, parameter, *_ in self._specs}
        params = {by_role[role]: layer for role, layer in self.chosen_layers().items()}
        field_map = self.field_map()
        if field_map:
            params["FIELD_MAP"] = json.dumps(field_map, sort_keys=True)
        return params

    # Kept in the project ------------------------------------------------------------------
    def state(self):
        """The mapping as JSON-able data: ``{role: {"layer": id, "name": name, "fields": {...}}}``."""
        out = {}
        for role, layer in self.chosen_layers().items():
            fields = {
                field: combo.currentField()
                for field, combo in self._fields[role].items()
                if combo.currentField()
            }
            out[role] = {"layer": layer.id(), "name": layer.name(), "fields": fields}
        return out

    def set_state(self, state):
        """Restore a mapping; a layer no longer in the project (by id, then name) is left empty."""
        project = QgsProject.instance()
        self._restoring = True
        try:
            for role in self._layers:
                entry = (state or {}).get(role) or {}
                layer = project.mapLayer(entry.get("layer", "")) if entry else None
                if layer is None and entry.get("name"):
                    named = project.mapLayersByName(entry["name"])
                    layer = named[0] if named else None
                self._layers[role].setLayer(layer)
                self._layer_chosen(role, layer)
                for field, combo in self._fields[role].items():
                    combo.setField((entry.get("fields") or {}).get(field, "") if layer else "")
        finally:
            self._restoring = False

    def save_to_project(self, project=None):
        (project or QgsProject.instance()).writeEntry(
            PROJECT_SCOPE, self._key, json.dumps(self.state(), sort_keys=True)
        )

    def load_from_project(self, project=None):
        text, found = (project or QgsProject.instance()).readEntry(PROJECT_SCOPE, self._key, "")
        if not found or not text:
            return False
        try:
            self.set_state(json.loads(text))
        except ValueError:  # a hand-edited project: start from an empty mapping
            return False
        return True
