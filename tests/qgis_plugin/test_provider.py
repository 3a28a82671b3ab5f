"""The staged plugin registers the ``swppp`` provider and its algorithms' contract names."""

import configparser
from pathlib import Path

import pytest
from qgis.core import QgsApplication, QgsProcessingOutputNumber

# Every test here runs against the staged plugin's registered provider.
pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

# CONTRACT.md, "Processing algorithms": swppp:review's inputs and outputs.
CONTRACT_PARAMETERS = {
    "SITE",
    "PROJECT_LAYER",
    "SITE_BOUNDARY_LAYER",
    "DISTURBANCE_LAYER",
    "SMP_LAYER",
    "EASEMENT_LAYER",
    "DISCHARGE_POINT_LAYER",
    "PUBLIC_ROW_LAYER",
    "LAYOUT_SCALE_LAYER",
    "REFERENCE",
    "PROFILE",
    "SHEETS",
    "OUTPUT_JSON",
    "OUTPUT_HTML",
    "OUTPUT_PDF",
    "OUTPUT_FINDINGS",
    "OUTPUT_LAYOUT",  # issue 34 item 13: the report layout, for QGIS's layout designer
    # CONTRACT.md "Hydrology inputs and API", extending the roles
    "DRAINAGE_AREA_LAYER",
    "SOILS_LAYER",
    "LAND_COVER_PRE_LAYER",
    "LAND_COVER_POST_LAYER",
    "HYDROLOGY_CLAIMS_LAYER",
    # CONTRACT.md "SWPPP contents checklist": its optional layers and the reviewer's confirmations
    "ESC_PRACTICE_LAYER",
    "SUBMISSION_LAYER",
    "CONTRACTOR_CERTIFICATION_LAYER",
    "GUARANTEE_LAYER",
    "CONFIRMATIONS",
    # issue 7: the layers' own field names, mapped to the contract's (the panel's field combos)
    "FIELD_MAP",
    # issue 4: reference layers chosen from the project instead of REFERENCE
    "WETLANDS_LAYER",
    "IMPAIRED_WATERS_LAYER",
    "TMDL_WATERSHEDS_LAYER",
    "CATCHMENTS_LAYER",
    # issue 35: the review recorded as the next round of the review file, who decides
    "ROUND_FILE",
    "REVIEWER",
    "COMPARE_TO",  # the round compared with (issue 35 item 4)
}
NUMBER_OUTPUTS = {
    "EXIT_STATUS",
    "DISTURBED_ACRES",
    "PASS_COUNT",
    "FAIL_COUNT",
    "WARN_COUNT",
    "INFO_COUNT",
    "NEEDS_REVIEW_COUNT",
    "NOT_APPLICABLE_COUNT",
}


def test_provider_is_registered(swppp_plugin, staged_plugin):
    provider = QgsApplication.processingRegistry().providerById("swppp")
    assert provider is swppp_plugin.provider
    assert provider.id() == "swppp"
    assert provider.name() == "SWPPP Review"
    assert not provider.icon().isNull()
    metadata = configparser.ConfigParser()
    metadata.read(Path(staged_plugin.PLUGIN_DIR) / "metadata.txt", encoding="utf-8")
    assert provider.versionInfo() == metadata["general"]["version"]


def test_review_algorithm_exists_with_the_contract_parameters():
    algorithm = QgsApplication.processingRegistry().algorithmById("swppp:review")
    assert algorithm is not None
    assert {p.name() for p in algorithm.parameterDefinitions()} == CONTRACT_PARAMETERS
    for definition in algorithm.parameterDefinitions():
        assert (definition.name() == "PROFILE") != bool(definition.flags() & definition.FlagOptional), (
            definition.name()
        )
    assert algorithm.parameterDefinition("PROFILE").defaultValue() == "kiryas_joel"
    numbers = {o.name() for o in algorithm.outputDefinitions() if isinstance(o, QgsProcessingOutputNumber)}
    assert numbers == NUMBER_OUTPUTS | {"ROUND"}
    assert algorithm.shortHelpString() and algorithm.displayName()


def test_letter_algorithm_exists_with_its_names():
    from qgis.core import QgsProcessingOutputString

    algorithm = QgsApplication.processingRegistry().algorithmById("swppp:letter")
    assert algorithm is not None
    assert {p.name() for p in algorithm.parameterDefinitions()} == {
        "REVIEW_FILE",
        "ROUND",
        "REVIEWER",
        "DATE",
        "PROFILE",
        "OUTPUT_HTML",
        "OUTPUT_PDF",
        "OUTPUT_DOCX",
    }
    outputs = {o.name(): type(o) for o in algorithm.outputDefinitions()}
    assert outputs["SUMMARY"] is QgsProcessingOutputString
    assert {"ROUND", "COMMENTS", "OUTPUT_HTML", "OUTPUT_PDF", "OUTPUT_DOCX"} <= set(outputs)
    review = QgsApplication.processingRegistry().algorithmById("swppp:review")
    assert isinstance(review.outputDefinition("COMPARISON"), QgsProcessingOutputString)


def test_every_algorithm_is_its_own_instance(swppp_plugin):
    for algorithm in swppp_plugin.provider.algorithms():
        copy = algorithm.create()
        assert type(copy) is type(algorithm) and copy is not algorithm
        assert algorithm.name() == algorithm.name().lower()


def test_map_scale_algorithm_exists_with_the_contract_names():
    algorithm = QgsApplication.processingRegistry().algorithmById("swppp:map_scale")
    assert algorithm is not None
    assert {p.name() for p in algorithm.parameterDefinitions()} == {
        "LAYOUTS",
        "SITE",
        "LAYOUT_SCALE_LAYER",
        "PROFILE",
        "SHEETS",
        "OUTPUT_JSON",
    }
    numbers = {o.name() for o in algorithm.outputDefinitions() if isinstance(o, QgsProcessingOutputNumber)}
    assert numbers == NUMBER_OUTPUTS - {"DISTURBED_ACRES"}
    assert algorithm.shortHelpString() and algorithm.displayName()


def test_help_texts_state_the_default_profiles_numbers(swppp_plugin):
    """Each algorithm's help is filled from the rules profile: no ``{p.`` field is left."""
    texts = {a.name(): (a.displayName(), a.shortHelpString()) for a in swppp_plugin.provider.algorithms()}
    assert not [name for name, text in texts.items() if "{" in "".join(text)]
    assert texts["phasing"][0] == "Disturbance phasing (5 acres at any one time)"
    assert "not more than 5 acres disturbed at any one time" in texts["phasing"][1]
    assert "1 inch = 100 feet or larger" in texts["map_scale"][1]
    assert "every 7 days" in texts["inspections"][1] and "(kiryas_joel)" in texts["inspections"][1]
