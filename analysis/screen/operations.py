"""``swppp screen`` and ``swppp:screen`` share this: read the sites, screen them, write the table."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..profile import load_profile
from ..progress import SILENT, Progress
from ..reference.read import is_postgis_source, open_reference
from .output import screen_json, write_screen
from .screen import APPLIES, DOES_NOT_APPLY, NOT_DECIDED, NOT_MEASURED, Screen, screen_sites
from .sites import read_sites

__all__ = ["ScreenRun", "run_screen", "split_source"]


@dataclass
class ScreenRun:
    """A screen done: its rows, where it was written, and (``--since``) what changed."""

    screen: Screen
    sites_path: str
    output: Optional[str] = None
    changes: list = field(default_factory=list)
    since: Optional[dict] = None

    def summary(self) -> list[str]:
        counts = dict.fromkeys((APPLIES, NOT_DECIDED, DOES_NOT_APPLY), 0)
        wet = 0
        for row in self.screen.rows:
            counts[row["condition_a"]] += 1
            wet += row["wetland_status"] not in ("none", NOT_MEASURED)
        lines = [
            f"{len(self.screen.rows)} sites screened from {Path(self.sites_path).name} against "
            f"{self.screen.reference.get('path')}: Condition A {counts[APPLIES]} apply, "
            f"{counts[NOT_DECIDED]} not decided, {counts[DOES_NOT_APPLY]} do not apply; "
            f"{wet} in a wetland or its adjacent area"
        ]
        if self.since is not None:
            lines.append(f"since {self.since['label']}: {len(self.changes)} site(s) changed")
            lines += [
                f"  {c['site_id']}: {c['what']} {c['before']} -> {c['after']} ({c['because']})"
                for c in self.changes
            ]
        if self.output:
            lines.append(f"  wrote {self.output}")
        return lines

    def to_dict(self) -> dict:
        extra: dict[str, Any] = {"sites_path": self.sites_path, "output": self.output}
        if self.since is not None:
            extra["since"] = {**self.since, "changes": self.changes}
        return screen_json(self.screen, extra)


def split_source(source: str) -> tuple[str, Optional[str]]:
    """``path|layername=NAME`` -> (path, NAME); a plain path -> (path, None)."""
    path, _, options = str(source).partition("|")
    layer = options.split("=", 1)[1] if options.lower().startswith("layername=") else None
    return path, layer


def run_screen(
    sites_source,
    reference,
    *,
    profile=None,
    layer: Optional[str] = None,
    id_field: Optional[str] = None,
    output=None,
    since: Optional[int] = None,
    progress: Progress = SILENT,
) -> ScreenRun:
    """Screen the sites of ``sites_source`` against ``reference`` (GeoPackage or PostgreSQL);
    write ``output`` where given. ``since``: a version number; the sites whose Condition A or
    wetland status differs between that version of each layer and the current one are named."""
    profile = load_profile(profile)
    path, given_layer = split_source(sites_source)
    sites = read_sites(path, profile.area_crs, layer=layer or given_layer, id_field=id_field)
    if is_postgis_source(reference):
        from .postgis import screen_postgis

        # A schema lacking a layer is refused, naming it (its SQL reads all four).
        screen = screen_postgis(sites, str(reference), profile, progress=progress)
    else:  # a store lacking a layer: the screen uses what it has (screen_sites says the rest)
        screen = screen_sites(sites, open_reference(reference), profile, progress=progress)
    run = ScreenRun(screen=screen, sites_path=str(path))
    if since is not None:
        from .since import changes_since

        run.since, run.changes = changes_since(sites, reference, since, profile, screen)
    if output:
        write_screen(screen, output)
        run.output = str(output)
    progress.step(1.0, "done")
    return run
