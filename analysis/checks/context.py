"""What every check of one review reads: the site plan, profile, inputs, and what is decided so far."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import geopandas as gpd

from ..profile import RulesProfile
from ..reference.read import Reference, site_bounds
from ..siteplan.plan import SitePlan
from .applicability import DisturbedArea, disturbed_area
from .map_scale import LayoutMap, Sheet

__all__ = ["ReviewContext"]


@dataclass
class ReviewContext:
    """One review's inputs, shared by its checks.

    ``reference`` is opened once; :meth:`read` reads each of its layers once around the site.
    ``layout_maps`` None means print layouts were not read (the command line). ``conditions``
    grows as checks decide them (``"A"``, ``"B"``, ``"C"``, ``"swppp_required"``).
    """

    site: SitePlan
    profile: RulesProfile
    reference: Optional[Reference] = None
    sheets: Sequence[Sheet] = ()
    layout_maps: Optional[Sequence[LayoutMap]] = None
    land_cover: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)  # condition -> cover polygons
    confirmations: Sequence[Any] = ()  # checklist.contents.Confirmation, a layer above the checks
    records: Optional[dict[str, Any]] = None  # check_record_files' keyword arguments
    conditions: dict[str, Any] = field(default_factory=dict)  # as CheckResult.conditions
    _disturbed: Optional[DisturbedArea] = field(default=None, repr=False)
    _bounds: Optional[tuple[float, float, float, float]] = field(default=None, repr=False)
    _read: dict[str, Optional[gpd.GeoDataFrame]] = field(default_factory=dict, repr=False)

    @property
    def disturbed(self) -> DisturbedArea:
        """The disturbed area (overlaps counted once), measured on first use."""
        if self._disturbed is None:
            self._disturbed = disturbed_area(self.site)
        return self._disturbed

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """The box (area CRS) the reference layers are read from."""
        if self._bounds is None:
            self._bounds = site_bounds(self.site, self.profile)
        return self._bounds

    def decided(self, *names: str) -> dict[str, Any]:
        """The conditions ``names``, in that order (the checks that decide them ran first)."""
        return {name: self.conditions[name] for name in names}

    def layers_read(self) -> dict[str, gpd.GeoDataFrame]:
        """The reference layers read so far (by :meth:`read`): name -> frame."""
        return {name: frame for name, frame in self._read.items() if frame is not None}

    def read(self, layer: str, needed_for: str) -> Optional[gpd.GeoDataFrame]:
        """Reference layer ``layer`` around the site (read once); None without a reference."""
        if self.reference is None:
            return None
        if layer not in self._read:
            self._read[layer] = self.reference.read(
                layer, self.bounds, self.site.area_crs, needed_for=needed_for
            )
        return self._read[layer]
