"""Reading and writing files: vector layers on either geopandas stack (``vector``), GeoPackages
read by SQLite itself (``geopackage``), what a driver alters on reading told or refused
(``losses``), spreadsheet sheets (``sheets``), CSV tables (``csv_rows``,
``csv_cells``); every file written whole (``files``)."""

__all__ = ["csv_cells", "csv_rows", "engine", "files", "geopackage", "losses", "sheets", "vector"]
