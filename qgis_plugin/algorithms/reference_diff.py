"""``swppp:reference_diff``: what changed between two versions of a reference layer, as a layer."""

from qgis.core import (
    QgsProcessing,
    QgsProcessingOutputNumber,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterVectorDestination,
)

from .reference_import import ReferenceAlgorithm

__all__ = ["ReferenceDiffAlgorithm"]

HELP = """<p>Compares two stored versions of a reference layer (by default the current one and \
the one before it), as <code>swppp reference diff</code> does: waters newly listed and \
delisted (features added and removed for other layers), pollutants added or removed, other \
fields changed, and geometries moved by more than the profile's tolerance. OUTPUT is a layer \
with one feature per change (field <code>change</code>); OUTPUT_JSON the same as JSON.</p>"""

COUNTS = (
    ("ADDED_COUNT", "Features newly listed / added"),
    ("REMOVED_COUNT", "Delisted / removed"),
    ("CHANGED_COUNT", "Features changed"),
)


class ReferenceDiffAlgorithm(ReferenceAlgorithm):
    FROM_VERSION = "FROM_VERSION"
    TO_VERSION = "TO_VERSION"
    OUTPUT = "OUTPUT"

    def name(self):
        return "reference_diff"

    def displayName(self):
        return self.tr("Compare reference layer versions")

    def shortHelpString(self):
        return self.tr(HELP)

    def initAlgorithm(self, config=None):
        self.add_target()
        for name, label in (
            (self.FROM_VERSION, "Older version (default: the one before)"),
            (self.TO_VERSION, "Newer version (default: the current one)"),
        ):
            self.addParameter(
                QgsProcessingParameterNumber(
                    name, self.tr(label), QgsProcessingParameterNumber.Type.Integer, optional=True, minValue=1
                )
            )
        self.addParameter(
            QgsProcessingParameterVectorDestination(
                self.OUTPUT, self.tr("Changes"), QgsProcessing.SourceType.TypeVectorAnyGeometry
            )
        )
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_JSON,
                self.tr("Changes (JSON)"),
                self.tr("JSON files (*.json)"),
                optional=True,
                createByDefault=False,
            )
        )
        for name, label in COUNTS:
            self.addOutput(QgsProcessingOutputNumber(name, self.tr(label)))

    def processAlgorithm(self, parameters, context, feedback):
        import json

        from analysis.io.files import write_text
        from analysis.reference.operations import diff_reference, write_diff_layer

        where = self.target(parameters, context)
        versions = {
            name: (
                self.parameterAsInt(parameters, name, context)
                if parameters.get(name) not in (None, "")
                else None
            )
            for name in (self.FROM_VERSION, self.TO_VERSION)
        }
        output = self.parameterAsOutputLayer(parameters, self.OUTPUT, context)
        json_path = self.parameterAsFileOutput(parameters, self.OUTPUT_JSON, context)
        with self.analysis_run(parameters, context, feedback) as inputs:
            diff = diff_reference(
                where["layer"],
                where["target"],
                schema=where["schema"],
                old=versions[self.FROM_VERSION],
                new=versions[self.TO_VERSION],
                profile=inputs["profile"],
            )
            inputs["progress"].step(0.8, "writing the changes")
            write_diff_layer(diff, output)
            if json_path:
                write_text(json_path, json.dumps(diff.to_dict(), indent=2, default=str))
        for line in diff.table():
            feedback.pushInfo(line)
        kinds = [c.kind for c in diff.changes]
        results = {
            self.OUTPUT: output,
            "ADDED_COUNT": sum(k in ("newly listed", "added") for k in kinds),
            "REMOVED_COUNT": sum(k in ("delisted", "removed") for k in kinds),
            "CHANGED_COUNT": kinds.count("changed"),
        }
        if json_path:
            results[self.OUTPUT_JSON] = json_path
        return results
