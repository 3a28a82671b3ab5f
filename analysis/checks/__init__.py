"""The chapter's checks on a site plan, one module per rule family; ``registry`` orders them."""

__all__ = ['applicability', 'base', 'condition_a', 'conditions', 'context', 'easements', 'hydrology',
           'input_geometry', 'map_scale', 'phasing', 'postconstruction', 'registry', 'site_boundary',
           'wetlands']
