"""Hostile files for the parsers (issue 36, items 5-9): each refused by name, exit 2, no hang.

Deeply nested TOML, DXF block inserts that expand without end and coordinates no survey gives,
workbooks that inflate to gigabytes or hold formulas without values, CAD layer patterns that
backtrack, raster windows too large to hold. Every hostile file is built here, small on disk.
"""

from __future__ import annotations

import logging
import re
import zipfile
from datetime import date
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from analysis.checks.hydrology import land_cover_from_raster
from analysis.io.vector import read_layer
from analysis.limits import (
    CAD_LAYER_NAME_MAX,
    DXF_MAX_ENTITIES,
    DXF_MAX_INSERT_DEPTH,
    RASTER_MAX_DECIMATION,
    RASTER_MAX_PIXELS,
    TOML_MAX_DEPTH,
    WORKBOOK_MAX_BYTES,
    WORKBOOK_MAX_RATIO,
    WORKBOOK_MAX_ROWS,
)
from tests.analysis.conftest import square
from tests.analysis.test_fuzz import PROFILE, RECORDS, SITE, WBD_MAP, Case, _run
from tests.analysis.test_phasing_cli import write_dxf
from tests.analysis.xlsx import write_xlsx

DEEP = TOML_MAX_DEPTH * 40  # deep enough to exhaust the parser's recursion without the guard


def _nested_value() -> str:
    return "[" * DEEP + "]" * DEEP


def _toml(name: str, text: str, argv: Callable[[Path], list]) -> Callable[[Path], list]:
    def build(folder: Path) -> list:
        (folder / name).write_text(text, encoding="utf-8")
        return argv(folder / name)

    return build


TOML_CASES = [
    Case(
        "crash-5-nested-toml-profile",
        _toml(
            "p.toml",
            PROFILE.read_text(encoding="utf-8") + f"\n[deep]\nx = {_nested_value()}\n",
            lambda p: ["review", SITE, "--profile", p, "--json", "{out}/r.json"],
        ),
        ("p.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
    Case(
        "crash-5-nested-toml-map",
        _toml(
            "m.toml",
            f"x = {_nested_value()}\n",
            lambda p: ["review", SITE, "--map", p, "--json", "{out}/r.json"],
        ),
        ("m.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
    Case(
        "crash-5-nested-toml-inline-tables-nov",
        _toml(
            "v.toml",
            (RECORDS / "violation.toml").read_text(encoding="utf-8")
            + "\nx = "
            + "{a = " * DEEP
            + "1"
            + "}" * DEEP
            + "\n",
            lambda p: ["nov", p, "--output", "{out}/n.html"],
        ),
        ("v.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
    Case(
        "crash-5-nested-toml-reference-mapping",
        _toml(
            "m.toml",
            WBD_MAP + f"\n[deep]\nx = {_nested_value()}\n",
            lambda p: [
                "reference",
                "import",
                "catchments",
                SITE.parent / "reference_sources" / "wbd_huc12.gpkg",
                "--map",
                p,
                "--reference",
                "{out}/ref.gpkg",
                "--quiet",
            ],
        ),
        ("m.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
    Case(
        "crash-5-dotted-keys-deep-map",
        _toml(
            "m.toml",
            "x." + ".".join(f"k{i}" for i in range(DEEP)) + " = 1\n",
            lambda p: ["review", SITE, "--map", p, "--json", "{out}/r.json"],
        ),
        ("m.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
]

CAD = SITE.parent / "cad"


def _phasing(
    folder: Path, cad_layer: str = "C-PHAS-1", pattern: str = "C-PHAS-(\\d+)", schedule=None
) -> list:
    """``swppp phasing`` of a one-square drawing on ``cad_layer``, phases by ``pattern``, dates
    from ``schedule`` (default: a CSV of phase 1)."""
    write_dxf(folder / "d.dxf", [square(1.0).exterior], ["C-LAYER-NAME"])  # GDAL writes <= 255
    dxf = (folder / "d.dxf").read_text(encoding="utf-8")
    (folder / "d.dxf").write_text(dxf.replace("C-LAYER-NAME", cad_layer), encoding="utf-8")
    if schedule is None:
        schedule = folder / "s.csv"
        schedule.write_text("phase,start,stabilized\n1,2026-05-01,2026-09-01\n", encoding="utf-8")
    return [
        "phasing",
        folder / "d.dxf",
        "--phase-from",
        "layer",
        "--pattern",
        pattern,
        "--schedule",
        schedule,
        "--crs",
        "EPSG:2260",
        "--json",
        "{out}/p.json",
        "--quiet",
    ]


EVIL = "C-(x+)+-X"  # backtracks 2^n on C-xxx...x (n x, no -X): a hang at n = 40


def _cad_map(pattern: str) -> Callable[[Path], list]:
    def build(folder: Path) -> list:
        text = (
            '[cad]\ncrs = "EPSG:2260"\nschedule = "schedule.csv"\n[cad.layers]\n'
            f"site_boundary = 'C-PROP'\ndisturbance = '{pattern}'\n"
        )
        (folder / "map.toml").write_text(text, encoding="utf-8")
        (folder / "schedule.csv").write_bytes((CAD / "schedule.csv").read_bytes())
        return ["review", CAD / "plan.dxf", "--map", folder / "map.toml", "--json", "{out}/r.json"]

    return build


REGEX_CASES = [
    Case(
        "crash-8-nested-quantifier-map",
        _cad_map(EVIL),
        ("map.toml", "cad.layers.disturbance", repr(EVIL), "exponential time"),
    ),
    Case(
        "crash-8-ambiguous-alternation-map",
        _cad_map("(C|C-)*PHAS-(\\d+)"),
        ("map.toml", "cad.layers.disturbance", "alternation", "exponential time"),
    ),
    Case(
        "crash-8-nested-quantifier-phasing-pattern",
        lambda folder: _phasing(folder, "C-" + "x" * 40, EVIL),  # on main: 2^40 steps, a hang
        ("--pattern", repr(EVIL), "exponential time"),
    ),
    Case(
        "crash-8-layer-name-too-long",
        lambda folder: _phasing(folder, "C-PHAS-1" + "x" * (CAD_LAYER_NAME_MAX + 1), "C-PHAS-(\\d+)"),
        ("d.dxf", "feature 0", f"at most {CAD_LAYER_NAME_MAX}"),
    ),
]

ROWS = [["phase", "start", "stabilized"], [1, date(2026, 5, 1), date(2026, 9, 1)]]


def _workbook(change: Callable[[str], str], extra: dict | None = None) -> Callable[[Path], list]:
    """``swppp phasing`` with a schedule workbook whose sheet XML is ``change``d and ``extra``
    parts (name: bytes, stored deflated) added: the hostile part built here, small on disk."""

    def build(folder: Path) -> list:
        plain = write_xlsx(folder / "plain.xlsx", ROWS)
        with (
            zipfile.ZipFile(plain) as source,
            zipfile.ZipFile(folder / "s.xlsx", "w", zipfile.ZIP_DEFLATED) as out,
        ):
            for entry in source.infolist():
                data = source.read(entry)
                if entry.filename == "xl/worksheets/sheet1.xml":
                    data = change(data.decode("utf-8")).encode("utf-8")
                out.writestr(entry.filename, data)
            for name, data in (extra or {}).items():
                out.writestr(name, data, compresslevel=9)
        plain.unlink()
        return _phasing(folder, schedule=folder / "s.xlsx")

    return build


def _padded(size: int) -> Callable[[str], str]:
    """The sheet XML padded with ``size`` bytes of blank space: it deflates about 1000 times."""
    return lambda xml: xml.replace("</worksheet>", " " * size + "</worksheet>")


WORKBOOK_CASES = [
    Case(
        "crash-7-xlsx-sheet-inflates-past-the-bound",
        _workbook(_padded(WORKBOOK_MAX_BYTES + 2**20)),
        ("s.xlsx", "inflate", "MiB"),
    ),
    Case(
        "crash-7-xlsx-part-inflates-too-many-times",
        _workbook(lambda xml: xml, extra={"xl/media/pad.bin": bytes(8 * 2**20)}),
        ("s.xlsx", "xl/media/pad.bin", f"more than {WORKBOOK_MAX_RATIO}"),
    ),
    Case(
        "crash-7-xlsx-rows-past-the-bound",
        _workbook(
            lambda xml: xml.replace(
                "</sheetData>",
                f'<row r="{WORKBOOK_MAX_ROWS * 10}"><c r="A{WORKBOOK_MAX_ROWS * 10}"><v>2</v></c></row>'
                "</sheetData>",
            )
        ),
        ("s.xlsx", "Schedule", f"more than the {WORKBOOK_MAX_ROWS}"),
    ),
    Case(
        "wrong-7-formula-dates-without-values",
        _workbook(
            lambda xml: re.sub(
                r'<c r="(B2|C2)" s="1"><v>\d+</v></c>', r'<c r="\1" s="1"><f>TODAY()</f></c>', xml
            )
        ),
        ("s.xlsx", "Schedule!B2, Schedule!C2", "without their values"),
    ),
]


def _dxf(blocks: dict, entities: list) -> str:
    """An ASCII DXF, written by hand: ``blocks`` {name: [entity group codes]}, ``entities`` too."""
    out = [
        "0",
        "SECTION",
        "2",
        "HEADER",
        "9",
        "$ACADVER",
        "1",
        "AC1015",
        "0",
        "ENDSEC",
        "0",
        "SECTION",
        "2",
        "BLOCKS",
    ]
    for name, inside in blocks.items():
        out += ["0", "BLOCK", "8", "0", "2", name, "70", "0", "10", "0", "20", "0", "30", "0", "3", name]
        out += [code for entity in inside for code in entity]
        out += ["0", "ENDBLK", "8", "0"]
    out += ["0", "ENDSEC", "0", "SECTION", "2", "ENTITIES"]
    out += [code for entity in entities for code in entity]
    return "\n".join(out + ["0", "ENDSEC", "0", "EOF"]) + "\n"


def _line(layer: str) -> list:
    return ["0", "LINE", "8", layer, "10", "0", "20", "0", "30", "0", "11", "1", "21", "1", "31", "0"]


def _insert(block: str, copies: int = 1) -> list:
    """An insert of ``block``; ``copies`` > 1: an array insert (MINSERT) of copies x copies."""
    return [
        "0",
        "INSERT",
        "8",
        "0",
        "2",
        block,
        "10",
        "0",
        "20",
        "0",
        "30",
        "0",
        "70",
        str(copies),
        "71",
        str(copies),
    ]


def _boundary(layer: str, handle: str, points) -> list:
    out = ["0", "LWPOLYLINE", "5", handle, "8", layer, "90", str(len(points)), "70", "1"]
    return out + [code for x, y in points for code in ("10", repr(float(x)), "20", repr(float(y)))]


def _drawing(text: str, crs: str = "EPSG:2260") -> Callable[[Path], list]:
    def build(folder: Path) -> list:
        (folder / "d.dxf").write_text(text, encoding="utf-8")
        (folder / "s.csv").write_text("phase,start,stabilized\n1,2026-05-01,2026-09-01\n", encoding="utf-8")
        return [
            "phasing",
            folder / "d.dxf",
            "--phase-from",
            "layer",
            "--pattern",
            "C-PHAS-(\\d+)",
            "--schedule",
            folder / "s.csv",
            "--crs",
            crs,
            "--json",
            "{out}/p.json",
            "--quiet",
        ]

    return build


# B0 a line; each Bn an array of 100 (10 x 10) Bn-1: B4 is 10^8 lines, the file 2 KB
BOMB = _dxf(
    {f"B{n}": [_line("C-PHAS-1") if n == 0 else _insert(f"B{n - 1}", 10)] for n in range(5)}, [_insert("B4")]
)
# C0 a line, each Cn one Cn-1: a chain deeper than the bound, a few entities
CHAIN = _dxf(
    {
        f"C{n}": [_line("C-PHAS-1") if n == 0 else _insert(f"C{n - 1}")]
        for n in range(DXF_MAX_INSERT_DEPTH + 5)
    },
    [_insert(f"C{DXF_MAX_INSERT_DEPTH + 4}")],
)
X0, Y0 = 583_000.0, 913_000.0
FAR = _dxf(
    {},
    [
        _boundary("C-PHAS-1", "1A", [(X0, Y0), (X0 + 200, Y0), (X0 + 200, Y0 + 200), (X0, Y0 + 200)]),
        _boundary("C-PHAS-1", "2B", [(X0, Y0), (1e15, Y0), (X0 + 200, Y0 + 200), (X0, Y0 + 200)]),
    ],
)
CUSTOM_FEET = "+proj=tmerc +lat_0=40 +lon_0=-74 +k=1 +x_0=0 +y_0=0 +ellps=GRS80 +units=us-ft +no_defs"

DRAWING_CASES = [
    Case(
        "crash-6-dxf-nested-inserts-expand-to-1e8",
        _drawing(BOMB),
        ("d.dxf", "the block 'B", f"more than {DXF_MAX_ENTITIES:,} entities"),
    ),
    Case(
        "crash-6-dxf-inserts-nested-too-deep",
        _drawing(CHAIN),
        ("d.dxf", f"more than the {DXF_MAX_INSERT_DEPTH}", "blocks deep"),
    ),
    Case(
        "crash-6-dxf-block-inserts-itself",
        _drawing(_dxf({"L": [_line("C-PHAS-1"), _insert("L")]}, [_insert("L")])),
        ("d.dxf", "the block 'L' inserts itself"),
    ),
    Case(
        "crash-6-dxf-vertex-1e15-custom-crs",
        _drawing(FAR, CUSTOM_FEET),
        ("d.dxf", "handle 2B", "'C-PHAS-1'", "1e+15"),
    ),
]


def _land_cover(folder: Path, pixel_ft: float, value: int = 0) -> Path:
    """A GeoTIFF in EPSG:2260 over the demo site's drainage areas (x 582,727-583,482, y
    913,239-913,839 ft) of ``pixel_ft`` pixels, all ``value``; 0: written sparse (no tile
    stored: a file of a few kilobytes however many pixels it has)."""
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import from_origin

    path, size = folder / "cover.tif", 900.0
    side = round(size / pixel_ft)
    options = dict(driver="GTiff", width=side, height=side, count=1, dtype="uint8", crs="EPSG:2260")
    options.update(transform=from_origin(582_700.0, 913_900.0, pixel_ft, pixel_ft), nodata=0)
    options.update(tiled=True, blockxsize=512, blockysize=512, compress="deflate", BIGTIFF="YES")
    with rasterio.open(path, "w", SPARSE_OK="TRUE", **options) as out:
        if value:
            out.write(np.full((side, side), value, dtype="uint8"), 1)
    return path


RASTER_CASES = [
    Case(
        "crash-9-land-cover-window-past-the-bound",
        # 0.015 ft pixels: 2 * 10^9 over the drainage areas (MemoryError on main)
        lambda folder: [
            "review",
            SITE,
            "--land-cover-pre",
            _land_cover(folder, 0.015),
            "--json",
            "{out}/r.json",
        ],
        ("cover.tif", "pixels over the drainage areas", f"more than {RASTER_MAX_DECIMATION} x"),
    ),
]

CASES = TOML_CASES + REGEX_CASES + WORKBOOK_CASES + DRAWING_CASES + RASTER_CASES


@pytest.mark.parametrize("item", CASES, ids=[c.name for c in CASES])
def test_refused(item: Case, tmp_path, capsys):
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out.mkdir()
    argv = item.build(inputs)
    before = {p.name: p.read_bytes() for p in inputs.iterdir()}
    code, err = _run(argv, out, capsys)
    assert code == 2, err
    assert "Traceback" not in err
    for text in item.expect:
        assert text in err, err
    assert {p.name: p.read_bytes() for p in inputs.iterdir()} == before
    assert list(out.iterdir()) == []


def test_crash_9_land_cover_read_decimated_says_so(tmp_path, caplog):
    """A window of twice the pixels read is read at 1/2 of its resolution, and says so; the
    cover still covers the drainage areas whole (each coarse pixel the nearest one's class)."""
    drainage = read_layer(SITE, "drainage_area").frame
    bounds = drainage.total_bounds
    pixel = ((bounds[2] - bounds[0]) * (bounds[3] - bounds[1]) / (2.5 * RASTER_MAX_PIXELS)) ** 0.5
    path = _land_cover(tmp_path, pixel, value=41)
    with caplog.at_level(logging.WARNING):
        cover = land_cover_from_raster(path, drainage)
    assert any(
        "read at 1/2 of its resolution" in r.getMessage() and "cover.tif" in r.getMessage()
        for r in caplog.records
    )
    assert set(cover["cover"]) == {"woods_good"}
    assert cover.geometry.area.sum() == pytest.approx(drainage.geometry.area.sum(), rel=1e-6)
