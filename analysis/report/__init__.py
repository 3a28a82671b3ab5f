"""The review's outputs: JSON, HTML report, site map, findings GeoPackage and its styles."""

__all__ = ["html", "layer_style", "outputs", "site_map"]
