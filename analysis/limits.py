"""Bounds on what a hostile or careless input may make a reader do (issue 36).

These are not readings of the chapter (so not in the rules profile): they keep a reader from
recursing, inflating or expanding without end, or waiting for ever. Each is stated in
docs/DESIGN.md, "Limits" (tests/analysis/test_limits.py holds the two together).
"""

from __future__ import annotations

__all__ = [
    "TOML_MAX_DEPTH",
    "CAD_LAYER_NAME_MAX",
    "WORKBOOK_MAX_BYTES",
    "WORKBOOK_MAX_RATIO",
    "WORKBOOK_MAX_ROWS",
    "DXF_MAX_ENTITIES",
    "DXF_MAX_INSERT_DEPTH",
    "DRAWING_MAX_COORDINATE",
    "RASTER_MAX_PIXELS",
    "RASTER_MAX_DECIMATION",
    "STORE_BUSY_TIMEOUT_S",
    "STORE_BUSY_NOTICE_S",
    "IMPORT_BATCH_VERTICES",
]

TOML_MAX_DEPTH = 32  # tables and arrays inside one another in a TOML file (profiles need 4)
CAD_LAYER_NAME_MAX = 255  # characters of a CAD layer name a pattern is matched against (AutoCAD's own bound)
WORKBOOK_MAX_BYTES = 64 * 2**20  # an XLSX/ODS archive's parts inflated, in all (central directory sizes)
WORKBOOK_MAX_RATIO = 200  # an archive part (over 1 MiB inflated) inflating more than this many times its size
WORKBOOK_MAX_ROWS = 100_000  # rows of a workbook sheet read as a table (its last row number)
DXF_MAX_ENTITIES = 2_000_000  # entities a DXF expands to, its block inserts (nested, arrayed) counted
DXF_MAX_INSERT_DEPTH = 16  # blocks inserted inside one another in a DXF
DRAWING_MAX_COORDINATE = 1e8  # |x|, |y| of a drawing's vertex, in its units (any projected CRS fits)
RASTER_MAX_PIXELS = 1_000_000  # pixels of a land-cover raster read over the drainage areas
RASTER_MAX_DECIMATION = 32  # a window needing more is refused, not read at 1/RASTER_MAX_DECIMATION or less
STORE_BUSY_TIMEOUT_S = 60.0  # the longest a command waits, in all, for another process holding a store
STORE_BUSY_NOTICE_S = 10.0  # how often it says it is waiting meanwhile
# Vertices an import reads, validates and writes at once (its batches are bounded by this as well
# as by their 5,000 features; three batches are in flight, one a stage): 8 MB of coordinates a
# copy. 5,382 catchments of 4,000 vertices read 5,000 at a time (20M vertices) peaked at 2.17 GB;
# at this bound, 465 MB (1,000,000: 622 MB).
IMPORT_BATCH_VERTICES = 500_000
