"""Reading and writing files: vector layers on either geopandas stack."""

__all__ = ['files', 'vector']
