"""``swppp:map_scale``: site map scale (SWPPP B(2)) of print layouts, plan sheets and stated scales."""

from qgis.core import (
    QgsProcessing,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorLayer,
)

from analysis.profile import help_text
from analysis.siteplan.contract import layer_spec

from ..layouts import layout_names
from .base import GPKG_FILTER, SwpppAlgorithm, role_parameter

__all__ = ["MapScaleAlgorithm"]

# sheet, scale_denominator (required); drawing (optional: site_map or location_map)
STATED_FIELDS = tuple(f.name for f in layer_spec("layout_scale").fields if f.column_required)
DRAWING = "drawing"

HELP = """<p>Checks that every site map is drawn at 1 inch = {p.site_map_scale.feet_per_inch:g} \
feet or larger (SWPPP B(2)): scale denominator no more than the rules profile's limit \
(1:{p.site_map_scale.max_scale_denominator:g}). Figures shown are the default rules profile's \
({p.name}).</p>
<ul>
<li><b>Print layouts</b> of the current project: one finding per map item, \
<i>layout:&lt;name&gt;/&lt;item&gt;</i>, with QGIS's own scale for it. A layout without a map \
item is <i>needs_review</i>. LAYOUTS picks layouts by name (separated by ';'); empty reads them \
all.</li>
<li><b>Plan sheets</b> (SHEETS: georeferenced GeoTIFF or GeoPDF): the ground size of a pixel \
(from the sheet's transform and CRS unit) times its resolution (TIFF resolution tags, the PDF's \
DPI) gives feet per inch. A sheet whose resolution is unknown is <i>needs_review</i>.</li>
<li><b>Stated scales</b>: the site plan's <i>layout_scale</i> table (sheet, scale_denominator), \
from SITE or LAYOUT_SCALE_LAYER.</li>
</ul>
<p>The full review (swppp:review) runs the same check on all the project's layouts.</p>"""


class MapScaleAlgorithm(SwpppAlgorithm):
    LAYOUTS = "LAYOUTS"
    LAYOUT_SCALE_LAYER = role_parameter("layout_scale")
    READS_LAYOUTS = True  # the layouts named in LAYOUTS, or all
    SITE_REQUIRED = False  # the site plan only brings its stated scales

    def __init__(self):
        super().__init__()
        self._stated = None  # (DataFrame, labels) read from LAYOUT_SCALE_LAYER

    def name(self):
        return "map_scale"

    def displayName(self):
        return self.tr("Site map scale")

    def shortHelpString(self):
        return help_text(self.tr(HELP))

    def initAlgorithm(self, config=None):
        self.addParameter(
            QgsProcessingParameterString(
                self.LAYOUTS,
                self.tr("Print layouts to check (names separated by ';'; empty: all)"),
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterFile(
                self.SITE,
                self.tr("Site plan GeoPackage (for its layout_scale table)"),
                behavior=QgsProcessingParameterFile.Behavior.File,
                fileFilter=GPKG_FILTER,
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterVectorLayer(
                self.LAYOUT_SCALE_LAYER,
                self.tr("Or layer: stated sheet scales (table)"),
                [QgsProcessing.SourceType.TypeVector],
                optional=True,
            )
        )
        self.add_profile_parameter()
        self.add_sheets_parameter()
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_JSON,
                self.tr("Result (JSON)"),
                self.tr("JSON files (*.json)"),
                optional=True,
                createByDefault=False,
            )
        )
        self.add_count_outputs()

    def layout_filter(self, parameters, context):
        text = self.parameterAsString(parameters, self.LAYOUTS, context)
        names = [name.strip() for name in (text or "").split(";") if name.strip()]
        return names or None

    def checkParameterValues(self, parameters, context):
        ok, message = super().checkParameterValues(parameters, context)
        if not ok:
            return ok, message
        known = layout_names(context.project())
        unknown = [name for name in self.layout_filter(parameters, context) or () if name not in known]
        if unknown:
            return False, self.tr(
                "No print layout named {unknown} in the project (its layouts: {known})."
            ).format(
                unknown=", ".join(f"'{n}'" for n in unknown),
                known=", ".join(f"'{n}'" for n in known) or self.tr("none"),
            )
        layer = self.parameterAsVectorLayer(parameters, self.LAYOUT_SCALE_LAYER, context)
        missing = [name for name in STATED_FIELDS if layer is not None and name not in _field_names(layer)]
        if missing:
            return False, self.tr(
                "Layer '{layer}' ({source}): the stated-scales table lacks the field(s) {missing}. "
                "Fix: give a table with sheet and scale_denominator (the site plan's "
                "layout_scale)."
            ).format(layer=layer.name(), source=layer.source(), missing=", ".join(missing))
        return True, ""

    def prepareAlgorithm(self, parameters, context, feedback):
        # Main thread: the project's layouts and the stated-scales layer are read here.
        self.read_layouts(parameters, context, feedback)
        layer = self.parameterAsVectorLayer(parameters, self.LAYOUT_SCALE_LAYER, context)
        self._stated = stated_scales(layer) if layer is not None else None
        self._site_path = self.parameterAsFile(parameters, self.SITE, context) or None
        return True

    def processAlgorithm(self, parameters, context, feedback):
        # Imported on first run, not at QGIS start-up: it loads pandas, shapely and pyproj.
        from analysis.checks.map_scale import MapScaleCheck, check_site_map_scale, read_sheets
        from analysis.profile import load_profile
        from analysis.report.outputs import write_json
        from analysis.siteplan.plan import load_site_plan

        json_path = self.parameterAsFileOutput(parameters, self.OUTPUT_JSON, context) or None
        with self.analysis_run(parameters, context, feedback) as inputs:
            progress = inputs["progress"]
            rules = load_profile(inputs["profile"])
            sheets = read_sheets(inputs["sheets"], progress)
            stated, labels = self._stated or (None, ())
            if inputs["site"]:
                progress.step(0.1, "reading the site plan's layout_scale table")
                plan = load_site_plan(inputs["site"], rules)
                stated = plan.layer("layout_scale")
                labels = plan.labels("layout_scale") if stated is not None else ()
            progress.step(0.8, "checking site map scales")
            findings, scales = check_site_map_scale(
                sheets, stated, inputs["layout_maps"], rules, stated_labels=labels
            )
            result = MapScaleCheck(profile=rules, findings=findings, scales=scales)
            progress.check_canceled()
            if json_path:
                write_json(result, json_path)
        for finding in result.findings:
            feedback.pushInfo(f"{finding.status.upper()}: {finding.message}")
        results = self.count_results(result)
        if json_path:
            results[self.OUTPUT_JSON] = json_path
        return results


def _field_names(layer):
    """Lower-case field name -> the layer's own spelling (names match case-insensitively)."""
    return {field.name().lower(): field.name() for field in layer.fields()}


def stated_scales(layer):
    """A QGIS table's ``sheet`` and ``scale_denominator`` rows, and their feature labels."""
    import pandas as pd

    fields = _field_names(layer)
    rows, labels = [], []
    for feature in layer.getFeatures():
        sheet, denominator = feature[fields["sheet"]], feature[fields["scale_denominator"]]
        sheet = None if _is_null(sheet) else str(sheet)
        drawing = feature[fields[DRAWING]] if DRAWING in fields else None
        rows.append(
            {
                "sheet": sheet,
                "scale_denominator": None if _is_null(denominator) else denominator,
                DRAWING: None if _is_null(drawing) else str(drawing),
            }
        )
        labels.append(f"layout_scale:{sheet}" if sheet else f"layout_scale:#{feature.id()}")
    return pd.DataFrame(rows, columns=[*STATED_FIELDS, DRAWING]), labels


def _is_null(value):
    return value is None or (hasattr(value, "isNull") and value.isNull())
