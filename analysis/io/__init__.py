"""Reading and writing files: vector layers on either geopandas stack (``vector``), GeoPackages
read by SQLite itself (``geopackage``), what a driver alters on reading told or refused
(``losses``), spreadsheet sheets (``sheets``); every file written whole (``files``)."""

__all__ = ['engine', 'files', 'geopackage', 'losses', 'sheets', 'vector']
