"""The chapter's checks on a site plan, one module per rule family; ``analysis.registry``
orders them (with the checklist's and the records' checks)."""

__all__ = [
    "applicability",
    "base",
    "condition_a",
    "conditions",
    "context",
    "easements",
    "hydrology",
    "input_geometry",
    "map_scale",
    "phasing",
    "postconstruction",
    "site_boundary",
    "wetlands",
]
