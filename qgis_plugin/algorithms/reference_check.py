"""What ``swppp:condition_a`` and ``swppp:wetlands`` share: one reference-layer check, its outputs."""

from .base import REVIEW_PART, SwpppAlgorithm

__all__ = ["ReferenceCheckAlgorithm"]


class ReferenceCheckAlgorithm(SwpppAlgorithm):
    """One check of the site against the reference layers; a subclass names its ``RULE``, adds
    its outputs in :meth:`add_check_outputs` and fills them in :meth:`check_results`."""

    RULE: str  # each subclass names its rule

    def name(self):
        return self.RULE

    def initAlgorithm(self, config=None):
        self.add_inputs(reference=True, sheets=False)
        self.add_outputs(reports=False)
        self.add_check_outputs()

    def add_check_outputs(self):
        raise NotImplementedError

    def check_results(self, review):
        raise NotImplementedError

    def processAlgorithm(self, parameters, context, feedback):
        # Imported on first run, not at QGIS start-up: it loads geopandas and shapely.
        from analysis.review import review_paths

        with self.analysis_run(parameters, context, feedback) as inputs:
            review = review_paths(
                inputs["site"],
                inputs["reference"],
                inputs["profile"],
                rules=[self.RULE],
                progress=inputs["progress"].sub(0.0, REVIEW_PART),
            )
            results = self.write_results(review, parameters, context, inputs["progress"])
        results.update(self.check_results(review))
        return results
