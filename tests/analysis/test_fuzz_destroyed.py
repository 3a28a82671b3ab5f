"""No output destroys a file an input reads (issue 36, item 2: destroyed).

Every command, with each of its output options, is pointed at every file its inputs read:
the input itself, a symbolic and a hard link to it, and what is read beside it or through
it (a shapefile's sidecars, a GeoPackage's ``-wal``/``-shm``/``-journal``, GDAL's ``.csvt``,
``.prj``, world file and ``.aux.xml``, the files a ``--map`` file's ``[files]`` and
``[cad] schedule`` name). Each is refused (exit 2, the option and the file named, "same
file") before anything runs: every input's bytes unchanged, nothing made. One rule does it
(``analysis.io.inputs.refuse_outputs_over_inputs``); ``nov`` reads no file beside its record
or profile, and ``test_fuzz.py``'s round-1 cases keep its direct ones.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from analysis.cli import main
from tests.analysis.test_fuzz import DATA, RECORDS, REFERENCE, ROOT, SITE

GPKG = ("", "-wal", "-shm", "-journal")  # a GeoPackage and SQLite's files beside it
SHAPEFILE = ("plan.shp", "plan.shx", "plan.dbf", "plan.prj", "plan.cpg", "plan.qix", "plan.shp.xml")
LINKS = ("alias.dbf", "hard.dbf", "hard.csv")  # -> plan.dbf (symbolic), plan.dbf, project.csv (hard)
SITE_READ = tuple(f"site.gpkg{s}" for s in GPKG)
REF_READ = tuple(f"ref.gpkg{s}" for s in GPKG)
MAP_READ = ("map.toml", "project.csv", "project.csvt", "hard.csv", "sched.csv", "sched.csvt")
PLAN_READ = (*SHAPEFILE, "alias.dbf", "hard.dbf")

# command -> (command line, output options, the files in the inputs' folder it reads)
COMMANDS = {
    "review": (
        ["review", "{in}/site.gpkg", "--reference", "{in}/ref.gpkg", "--profile", "{in}/p.toml",
         "--map", "{in}/map.toml", "--sheet", "{in}/s.tif", "--inspections", "{in}/log.csv",
         "--rain", "{in}/rain.csv", "--quiet"],
        ("--json", "--report", "--findings", "--pdf"),
        (*SITE_READ, *REF_READ, "p.toml", *MAP_READ, "s.tif", "s.tfw", "s.tif.aux.xml",
         "log.csv", "log.csvt", "rain.csv", "rain.prj"),
    ),
    "certification-form": (
        ["certification-form", "--site", "{in}/site.gpkg", "--map", "{in}/map.toml",
         "--output", "{out}/f.html"],
        ("--output", "--json"),
        (*SITE_READ, *MAP_READ),
    ),
    "phasing": (
        ["phasing", "{in}/plan.shp", "--schedule", "{in}/sched.csv", "--profile", "{in}/p.toml", "--quiet"],
        ("--json", "--csv", "--proposal-csv", "--timeline-csv", "--chart"),
        (*PLAN_READ, "sched.csv", "sched.csvt", "p.toml"),
    ),
    "reference-import": (
        ["reference", "import", "wetlands", "{in}/plan.shp", "--reference", "{in}/ref.gpkg"],
        ("--json", "--rejections"),
        (*PLAN_READ, *REF_READ),
    ),
    "reference-status": (["reference", "status", "--reference", "{in}/ref.gpkg"], ("--json",), REF_READ),
    "reference-diff": (
        ["reference", "diff", "wetlands", "--reference", "{in}/ref.gpkg"],
        ("--json", "--output"),
        REF_READ,
    ),
    "inspections": (
        ["inspections", "check", "--log", "{in}/log.csv", "--rain", "{in}/rain.csv",
         "--site", "{in}/site.gpkg", "--map", "{in}/map.toml"],
        ("--json",),
        ("log.csv", "log.csvt", "rain.csv", "rain.prj", *SITE_READ, *MAP_READ),
    ),
    "penalty": (
        ["penalty", "--history", "{in}/h.csv", "--person", "X", "--on", "2027-06-01", "--kind", "civil"],
        ("--json",),
        ("h.csv", "h.csvt"),
    ),
    "screen": (
        ["screen", "{in}/plan.shp", "--reference", "{in}/ref.gpkg"],
        ("--output", "--json"),
        (*PLAN_READ, *REF_READ),
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """The inputs' folder every case copies: real data where a command would read it."""
    import geopandas as gpd

    folder = tmp_path_factory.mktemp("inputs")
    shutil.copyfile(SITE, folder / "site.gpkg")
    shutil.copyfile(REFERENCE, folder / "ref.gpkg")
    shutil.copyfile(ROOT / "analysis" / "profiles" / "kiryas_joel.toml", folder / "p.toml")
    shutil.copyfile(DATA / "sheets" / "sheet_2260_100ft.tif", folder / "s.tif")
    shutil.copyfile(RECORDS / "inspection_log.csv", folder / "log.csv")
    shutil.copyfile(RECORDS / "rain.csv", folder / "rain.csv")
    shutil.copyfile(RECORDS / "history.csv", folder / "h.csv")
    shutil.copyfile(DATA / "cad" / "schedule.csv", folder / "sched.csv")
    gpd.read_file(SITE, layer="project").drop(columns="geometry", errors="ignore").to_csv(
        folder / "project.csv", index=False
    )
    (folder / "map.toml").write_text('[files]\nproject = "project.csv"\n\n[cad]\nschedule = "sched.csv"\n')
    plan = gpd.read_file(SITE, layer="disturbance").rename(columns={"stabilized_date": "stabilized"})
    plan.to_file(folder / "plan.shp")
    for name, text in {
        "plan.shp.xml": "<metadata/>",
        "s.tfw": "100\n0\n0\n-100\n0\n0\n",
        "s.tif.aux.xml": "<PAMDataset/>",
        "log.csvt": "String",
        "rain.prj": "EPSG:4326",
        "h.csvt": "String",
        "project.csvt": "String",
        "sched.csvt": "String",
    }.items():
        (folder / name).write_text(text)
    return folder


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


def _cases():
    for command, (_argv, options, reads) in COMMANDS.items():
        for option in options:
            yield pytest.param(command, option, reads, id=f"destroyed-2-{command}-{option.lstrip('-')}")


@pytest.mark.parametrize(("command", "option", "reads"), list(_cases()))
def test_no_output_lands_on_a_file_an_input_reads(command, option, reads, inputs, tmp_path, capsys):
    folder = tmp_path / "in"
    shutil.copytree(inputs, folder)
    (folder / "alias.dbf").symlink_to(folder / "plan.dbf")
    os.link(folder / "plan.dbf", folder / "hard.dbf")
    os.link(folder / "project.csv", folder / "hard.csv")
    before = _digests(folder)
    names = sorted(p.name for p in folder.iterdir())
    argv = [a.replace("{in}", str(folder)).replace("{out}", str(tmp_path)) for a in COMMANDS[command][0]]
    for read in reads:
        target = folder / read
        try:
            code = main([*argv, option, str(target)])
        except SystemExit as stop:
            code = stop.code
        err = capsys.readouterr().err
        assert code == 2, f"{option} {read}: exit {code}: {err}"
        assert "same file" in err and f"{option} {target}" in err and "Traceback" not in err, err
        assert _digests(folder) == before, f"{option} {read} changed an input"
        assert sorted(p.name for p in folder.iterdir()) == names, f"{option} {read} made a file"


def test_destroyed_2_a_map_file_names_its_files_relative_to_itself(inputs, tmp_path, capsys):
    """``[files]`` is read beside the mapping file, wherever the command runs: the file it
    names there is the one refused (a name relative to the working folder is not)."""
    folder = tmp_path / "in"
    shutil.copytree(inputs, folder)
    (folder / "sub").mkdir()
    (folder / "sub" / "map.toml").write_text('[files]\nproject = "../project.csv"\n')
    before = _digests(folder)
    argv = [
        "certification-form",
        "--site",
        str(folder / "site.gpkg"),
        "--map",
        str(folder / "sub" / "map.toml"),
    ]
    code = main([*argv, "--output", str(folder / "sub" / ".." / "project.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "which --map" in err and "project.csv" in err, err
    assert _digests(folder) == before
