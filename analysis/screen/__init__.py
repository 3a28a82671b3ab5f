"""Many sites screened at once against the reference layers (``swppp screen``).

``sites`` reads them, ``screen`` decides Condition A and measures wetlands for all of them,
``postgis`` does the same in the database, ``since`` names the sites a new version of a layer
changes, ``output`` writes the table, ``operations`` is what the command and QGIS call.
"""

__all__ = ["operations", "output", "postgis", "screen", "since", "sites"]
