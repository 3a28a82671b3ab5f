"""Reference layers (wetlands, impaired waters, TMDL watersheds, catchments): read, import, store, diff."""

__all__ = ["diff", "importer", "postgis", "read", "store"]
