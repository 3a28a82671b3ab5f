"""Writing a review's outputs: JSON, HTML report, findings GeoPackage; all or none."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Optional

import geopandas as gpd
import numpy as np
import shapely

from .errors import OutputError
from .layer_style import findings_qml, store_default_style
from .report import render_html
from .review import Review
from .vector_io import write_geopackage

__all__ = ["write_outputs", "write_hydrology_outputs", "review_json", "findings_frame",
           "publish", "write_text"]

FINDINGS_LAYER = "findings"


def review_json(review: Review) -> str:
    return json.dumps(review.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)


def findings_frame(review: Review) -> gpd.GeoDataFrame:
    """The findings with their geometries (null where a finding has no place)."""
    rows = [f.to_dict() for f in review.findings]
    for row in rows:
        row["features"] = "; ".join(row["features"])
    frame = gpd.GeoDataFrame(rows, columns=["rule", "status", "section", "message", "value",
                                            "limit", "units", "features"])
    frame["value"] = frame["value"].astype(float)
    frame["limit"] = frame["limit"].astype(float)
    geometries = np.array([f.geometry for f in review.findings], dtype=object)
    # Polygons as MultiPolygons, so that a layer of polygonal findings has one geometry type.
    single = shapely.get_type_id(geometries) == 3
    geometries[single] = [shapely.multipolygons([g]) for g in geometries[single]]
    return frame.set_geometry(gpd.GeoSeries(geometries, crs=review.site.area_crs))


def _write_findings(path, review: Review) -> None:
    from .checklist import CHECKLIST_LAYER, checklist_frame

    layers = {FINDINGS_LAYER: findings_frame(review)}
    if review.checklist is not None:  # the checklist and its confirmations, so they reload
        layers[CHECKLIST_LAYER] = checklist_frame(review.checklist)
    write_geopackage(path, layers)
    store_default_style(path, FINDINGS_LAYER, findings_qml(), "SWPPP findings by status")


def publish(temp: str | Path, target: str | Path) -> None:
    """Move a finished temporary file to ``target``, with the permissions a new file gets."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temp, 0o666 & ~umask)  # mkstemp made it private
    os.replace(temp, target)


def write_outputs(review: Review, json_path: Optional[str | Path] = None,
                  html_path: Optional[str | Path] = None,
                  findings_path: Optional[str | Path] = None) -> list[Path]:
    """Write the requested outputs; each lands under its name only once all are written."""
    writers = {json_path: lambda p: Path(p).write_text(review_json(review) + "\n", encoding="utf-8"),
               html_path: lambda p: Path(p).write_text(render_html(review), encoding="utf-8"),
               findings_path: lambda p: _write_findings(p, review)}
    return _write_all(writers)


def write_hydrology_outputs(result, cn_path: Optional[str | Path] = None,
                            table_path: Optional[str | Path] = None) -> list[Path]:
    """The hydrology analysis's CN layer (GeoPackage) and its table (CSV); all or none."""
    from .hydrology import cn_layer, hydrology_table

    writers = {cn_path: lambda p: write_geopackage(p, {"curve_numbers": cn_layer(result)}),
               table_path: lambda p: hydrology_table(result).to_csv(p, index=False)}
    return _write_all(writers)


def _write_all(writers: dict) -> list[Path]:
    """Run each writer on a temporary file beside its target; move them in once all worked."""
    staged = []
    target = None
    try:
        for target, write in writers.items():
            if target is None:
                continue
            target = Path(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix,
                                        dir=target.parent)
            os.close(fd)
            staged.append((Path(temp), target))
            write(temp)
        for temp, target in staged:
            publish(temp, target)
    except OSError as err:
        raise OutputError(f"could not write {target} ({err.strerror or err}); nothing was written. "
                          "Choose a file path in a folder you can write to") from None
    finally:
        for temp, _ in staged:
            temp.unlink(missing_ok=True)
    return [target for _, target in staged]


def write_text(path: str | Path, text: str) -> Path:
    """Write one text output (a notice, a result) under its name only once it is complete."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix,
                                    dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        publish(temp, target)
    except OSError as err:
        raise OutputError(f"could not write {target} ({err.strerror or err}); nothing was written. "
                          "Choose a file path in a folder you can write to") from None
    finally:
        if "temp" in locals():
            Path(temp).unlink(missing_ok=True)
    return target
