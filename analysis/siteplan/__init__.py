"""The site plan: its layers and fields, loaded, validated and reprojected."""

__all__ = ["cad", "contract", "mapping", "plan", "schedule"]
