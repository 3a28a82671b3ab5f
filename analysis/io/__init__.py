"""Reading and writing files: vector layers on either geopandas stack; every file written whole."""

__all__ = ['files', 'vector']
