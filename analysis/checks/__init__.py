"""The chapter's checks on a site plan, one module per rule family."""

__all__ = ['applicability', 'condition_a', 'conditions', 'easements', 'hydrology', 'map_scale', 'phasing', 'postconstruction', 'site_boundary', 'wetlands']
