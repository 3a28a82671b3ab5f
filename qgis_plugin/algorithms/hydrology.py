"""``swppp:hydrology``: TR-55 runoff before and after development, per drainage area and storm."""

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterVectorDestination,
)

from analysis.profile import help_text

from .base import SwpppAlgorithm, count_output

__all__ = ["HydrologyAlgorithm"]

HELP = """<p>NRCS TR-55 (1986) hydrology of a site plan (SWPPP D(4), D(5)): for each drainage \
area, the composite curve number from soils (hydrologic soil group) x land cover before and after \
development (TR-55 Tables 2-2a and 2-2c), runoff depth and volume for each design storm of the \
rules profile, peak discharge by TR-55's graphical method within its limits (Tc \
{p.hydrology.tc_hours_range[0]:g} to {p.hydrology.tc_hours_range[1]:g} h, CN \
{p.hydrology.cn_range[0]:g} to {p.hydrology.cn_range[1]:g}), and the water quality volume (NYS \
Design Manual). Where the plan states its own figures (hydrology_claims), each is compared with \
these.</p>
<p>Give a GeoPackage (SITE) with the layers drainage_area, soils, land_cover_pre, land_cover_post \
(and optionally hydrology_claims), or those layers one by one. An NLCD land-cover raster may stand \
in for either land-cover layer. Outputs: the curve-number layer (drainage area x soil x cover \
pieces with their CN) and the table (CSV) per drainage area and storm. Design rainfall comes from \
the profile, with its source. Figures shown are the default rules profile's ({p.name}).</p>"""


class HydrologyAlgorithm(SwpppAlgorithm):
    LAND_COVER_PRE_RASTER = "LAND_COVER_PRE_RASTER"
    LAND_COVER_POST_RASTER = "LAND_COVER_POST_RASTER"
    OUTPUT_CN = "OUTPUT_CN"
    OUTPUT_TABLE = "OUTPUT_TABLE"

    ROLE_LAYERS = SwpppAlgorithm.HYDROLOGY_ROLE_LAYERS

    def name(self):
        return "hydrology"

    def displayName(self):
        return self.tr("Hydrology before and after development (TR-55)")

    def shortHelpString(self):
        return help_text(self.tr(HELP))

    def initAlgorithm(self, config=None):
        self.add_inputs(reference=False, sheets=False)
        for name, label in (
            (self.LAND_COVER_PRE_RASTER, "Or NLCD raster: land cover before"),
            (self.LAND_COVER_POST_RASTER, "Or NLCD raster: land cover after"),
        ):
            self.addParameter(QgsProcessingParameterRasterLayer(name, self.tr(label), optional=True))
        self.addParameter(
            QgsProcessingParameterVectorDestination(
                self.OUTPUT_CN,
                self.tr("Curve numbers"),
                QgsProcessing.SourceType.TypeVectorPolygon,
                optional=True,
                createByDefault=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_TABLE,
                self.tr("Runoff and peaks per drainage area and storm (CSV)"),
                self.tr("CSV files (*.csv)"),
                optional=True,
                createByDefault=False,
            )
        )
        for status in ("warn", "needs_review"):
            self.addOutput(
                QgsProcessingOutputNumber(
                    count_output(status), self.tr("Findings with status {}").format(status)
                )
            )

    def no_site_message(self):
        return self.tr(
            "Give SITE (a GeoPackage with the hydrology layers) or at least "
            "DRAINAGE_AREA_LAYER, SOILS_LAYER and the land cover layers (or rasters)."
        )

    def processAlgorithm(self, parameters, context, feedback):
        from analysis.checks.hydrology import hydrology_paths
        from analysis.report.outputs import write_hydrology_outputs

        rasters = {}
        for condition, name in (("pre", self.LAND_COVER_PRE_RASTER), ("post", self.LAND_COVER_POST_RASTER)):
            layer = self.parameterAsRasterLayer(parameters, name, context)
            if layer is not None:
                rasters[condition] = layer.source()
        cn_path = self.parameterAsOutputLayer(parameters, self.OUTPUT_CN, context) or None
        table_path = self.parameterAsFileOutput(parameters, self.OUTPUT_TABLE, context) or None
        with self.analysis_run(parameters, context, feedback) as inputs:
            result = hydrology_paths(inputs["site"], inputs["profile"], rasters, inputs["progress"])
            inputs["progress"].check_canceled()
            write_hydrology_outputs(result, cn_path=cn_path, table_path=table_path)
        results = {self.OUTPUT_CN: cn_path, self.OUTPUT_TABLE: table_path}
        for status in ("warn", "needs_review"):
            results[count_output(status)] = sum(f.status == status for f in result.findings)
        return {k: v for k, v in results.items() if v is not None}
