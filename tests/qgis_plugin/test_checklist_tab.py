"""The checklist tab: tick, note, keep in the QGIS project, reload, write the file."""

import json

import pytest

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]


@pytest.fixture
def items(staged_plugin):
    from analysis.review import review_paths
    from tests.conftest import TEST_DATA

    return review_paths(TEST_DATA / "variants" / "contents_no_soils_receiving_waters.gpkg").to_dict()[
        "checklist"
    ]


@pytest.fixture
def tab_class(staged_plugin):
    from swppp_review.checklist_tab import ChecklistTab

    return ChecklistTab


def test_tick_note_save_and_reload_from_the_project(qgis_new_project, tab_class, items, tmp_path):
    from qgis.core import QgsProject

    from analysis.checklist.contents import read_confirmations

    project = QgsProject.instance()
    tab = tab_class()
    tab.show_checklist(items)
    assert tab.table.rowCount() == len(items) == 35
    tab.reviewer.setText("R. Levi")
    tab.set_confirmed("B(3)", note="Soils <described> in report section 3 & appendix")
    tab.set_confirmed("B(13)", note="Forest Brook")
    tab.set_confirmed("B(13)", confirmed=False)  # changed their mind
    confirmations = tab.confirmations()
    assert [(c["item"], c["reviewer"], c["note"]) for c in confirmations] == [
        ("B(3)", "R. Levi", "Soils <described> in report section 3 & appendix")
    ]
    tab.save_to_project(project)

    path = tmp_path / "review.qgs"
    assert project.write(str(path))
    project.clear()
    assert project.read(str(path))
    reloaded = tab_class()
    assert reloaded.load_from_project(project) == 1
    reloaded.show_checklist(items)  # items shown after loading: the ticks wait for them
    assert reloaded.confirmations() == confirmations
    assert reloaded.reviewer.text() == "R. Levi"

    written = reloaded.write_confirmations_file(tmp_path / "confirmations.json")
    assert [c.to_dict() for c in read_confirmations(written)] == confirmations


def test_loading_ticks_the_items_already_shown(qgis_new_project, tab_class, items):
    from qgis.core import QgsProject

    project = QgsProject.instance()
    first = tab_class()
    first.show_checklist(items)
    first.reviewer.setText("A. Engineer")
    first.set_confirmed("H", note="copy in the trailer")
    first.save_to_project(project)
    second = tab_class()
    second.show_checklist(items)
    assert second.confirmations() == []
    second.load_from_project(project)
    assert second.confirmations() == first.confirmations()
    changes = []
    second.confirmationsChanged.connect(lambda: changes.append(1))
    second.set_confirmed("H", confirmed=False)
    assert second.confirmations() == [] and changes


def test_a_tick_without_a_reviewer_is_kept_but_not_written(qgis_new_project, tab_class, items, tmp_path):
    from qgis.core import QgsProject

    project = QgsProject.instance()
    tab = tab_class()
    tab.show_checklist(items)
    tab.set_confirmed("B(3)", note="seen")
    tab.save_to_project(project)  # saving on every tick works before the name is typed
    with pytest.raises(ValueError, match="names no reviewer"):
        tab.write_confirmations_file(tmp_path / "c.json")
    assert not (tmp_path / "c.json").exists()
    later = tab_class()
    later.show_checklist(items)
    later.load_from_project(project)
    later.reviewer.setText("R. Levi")
    assert [(c["item"], c["reviewer"]) for c in later.confirmations()] == [("B(3)", "R. Levi")]


def test_a_review_result_already_confirmed_comes_ticked(tab_class, staged_plugin):
    from analysis.review import review_paths
    from tests.conftest import TEST_DATA

    checklist = review_paths(
        TEST_DATA / "variants" / "contents_complete.gpkg",
        confirmations=TEST_DATA / "checklist" / "confirmations.json",
    ).to_dict()["checklist"]
    tab = tab_class()
    tab.show_checklist(json.loads(json.dumps(checklist)))
    assert [(c["item"], c["date"]) for c in tab.confirmations()] == [
        ("B(5)", "2027-03-02"),
        ("H", "2027-03-02"),
    ]


def test_a_damaged_project_entry_is_refused_with_its_name(qgis_new_project, tab_class):
    from qgis.core import QgsProject
    from swppp_review.checklist_tab import KEY, SCOPE

    project = QgsProject.instance()
    project.writeEntry(SCOPE, KEY, "{not json")
    try:
        with pytest.raises(ValueError, match="swppp_review/checklist/confirmations is not valid JSON"):
            tab_class().load_from_project(project)
    finally:
        project.removeEntry(SCOPE, KEY)


def test_the_panel_opens_over_a_damaged_project_entry_and_says_it(
    qgis_new_project, qgis_iface, staged_plugin
):
    """The panel reads the project when it is built and on every project read: a damaged entry
    is said in its status line, never raised out of the constructor or a Qt slot."""
    from qgis.core import QgsProject
    from swppp_review.checklist_tab import KEY, SCOPE
    from swppp_review.panel import ReviewPanel

    project = QgsProject.instance()
    project.writeEntry(SCOPE, KEY, "{not json")
    try:
        panel = ReviewPanel(qgis_iface)
        assert "swppp_review/checklist/confirmations is not valid JSON" in panel.status.text()
        assert "tick the items again" in panel.status.text()
        panel.unload()
        panel.deleteLater()
    finally:
        project.removeEntry(SCOPE, KEY)
