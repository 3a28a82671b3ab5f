"""Issue 35 in QGIS: swppp:review's COMPARE_TO and COMPARISON, the panel's comparison after two
rounds of the shipped demo, and ROUND_FILE refused where an output would land on it."""

import pytest
from qgis.core import QgsProcessingException, QgsProcessingOutputLayerDefinition

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]


def run(parameters, feedback=None):
    import processing

    return processing.run("swppp:review", parameters, feedback=feedback)


@pytest.mark.parametrize("form", ["path", "ogr", "definition"])
@pytest.mark.parametrize("exists", [False, True])
def test_round_file_as_an_output_is_refused(data_copy, tmp_path, form, exists):
    site = data_copy("demo_site.gpkg")
    review_file = tmp_path / "review.gpkg"
    if exists:
        run({"SITE": str(site), "ROUND_FILE": str(review_file)})
    before = review_file.read_bytes() if exists else None
    value = {
        "path": str(review_file),
        "ogr": f"ogr:dbname='{review_file}' table=\"findings\" (geom)",
        "definition": QgsProcessingOutputLayerDefinition(str(review_file)),
    }[form]
    with pytest.raises(QgsProcessingException) as raised:
        run({"SITE": str(site), "ROUND_FILE": str(review_file), "OUTPUT_FINDINGS": value})
    assert "ROUND_FILE" in str(raised.value) and "OUTPUT_FINDINGS" in str(raised.value), str(raised.value)
    assert (review_file.read_bytes() if exists else review_file.exists()) == (before if exists else False)
