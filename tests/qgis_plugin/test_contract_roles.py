"""The plugin's site-plan parameters and the panel's roles are the library's contract, declared once."""

import pytest
from qgis.core import QgsApplication, QgsProcessingException

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]


def test_review_parameters_and_panel_roles_are_the_contracts_layers(staged_plugin):
    from swppp_review.panel_mapping import role_specs

    from analysis.siteplan.contract import SITE_PLAN_LAYERS  # the plugin's bundled copy

    algorithm = QgsApplication.processingRegistry().algorithmById("swppp:review")
    layer_parameters = {p.name() for p in algorithm.parameterDefinitions() if p.name().endswith("_LAYER")}
    contract = [spec.name for spec in SITE_PLAN_LAYERS]
    reference = {"WETLANDS_LAYER", "IMPAIRED_WATERS_LAYER", "TMDL_WATERSHEDS_LAYER", "CATCHMENTS_LAYER"}
    assert layer_parameters - reference == {f"{name.upper()}_LAYER" for name in contract}
    specs = role_specs(type(algorithm))
    assert [role for role, *_ in specs] == contract
    for (role, parameter, label, _filters, fields), spec in zip(specs, SITE_PLAN_LAYERS):
        assert (parameter, label, fields) == (f"{role.upper()}_LAYER", spec.label, spec.field_names)
        assert algorithm.parameterDefinition(parameter).description().endswith(spec.label)


def test_hydrology_takes_the_contracts_hydrology_layers(staged_plugin):
    from analysis.siteplan.contract import layers_of

    algorithm = QgsApplication.processingRegistry().algorithmById("swppp:hydrology")
    taken = {p.name() for p in algorithm.parameterDefinitions() if p.name().endswith("_LAYER")}
    assert taken == {f"{s.name.upper()}_LAYER" for s in layers_of("hydrology")}


@pytest.mark.parametrize(
    "text, said",
    [
        ('{"disturbance.colour": "X"}', "key 'disturbance.colour': 'colour' is not a field"),
        ('{"culvert.size": "X"}', "not 'role.field'"),
        ("{", "FIELD_MAP is not valid JSON"),
    ],
)
def test_field_map_is_read_by_the_library_and_refused_as_processing_errors(staged_plugin, text, said):
    from swppp_review.algorithms.base import parse_field_map

    with pytest.raises(QgsProcessingException, match=said):
        parse_field_map(text, ["project", "disturbance"])
    assert parse_field_map('{"disturbance.PHASE": "PHASE_NO"}', ["disturbance"]) == {
        "disturbance": {"phase": "PHASE_NO"}
    }
