"""Reading and writing files: vector layers on either geopandas stack (``vector``), GeoPackages
read by SQLite itself (``geopackage``), what a driver alters on reading told or refused
(``losses``), spreadsheet sheets (``sheets``), CSV tables (``csv_rows``,
``csv_cells``); every file written whole (``files``), and never over a file an input reads
(``inputs``)."""

__all__ = ["csv_cells", "csv_rows", "engine", "files", "geopackage", "inputs", "losses", "sheets", "vector"]
