"""Field and layer mapping: a site plan whose layers and fields are named otherwise, read as the contract's.

A CAD export or a county layer rarely uses the contract's names. A :class:`FieldMap` says,
per contract layer, which source layer holds it and, per contract field, which source field;
anything it does not name is matched by the contract's own name (any case), as always.
``load_site_plan(path, profile, mapping=...)`` applies it.

Two spellings, one operation:

- a TOML file (``swppp review SITE --map MAP.toml``; also ``certification-form`` and
  ``inspections check``)::

      # contract layer = source layer
      [layers]
      disturbance = "C-PHAS"
      project = "PROJECT_INFO"

      # [fields.<contract layer>]: contract field = source field
      [fields.disturbance]
      phase = "PHASE_NO"
      start_date = "START"

- a CAD export (DXF; one GDAL layer of entities) maps CAD layer names to contract layers in a
  ``[cad]`` table, and may take a table the drawing cannot hold (the ``project`` row) from
  another file in ``[files]`` (paths relative to the mapping file)::

      [cad]
      crs = "EPSG:2260"            # a DXF has none
      schedule = "schedule.csv"    # phase,start,stabilized (CSV or XLSX)

      [cad.layers]                 # contract layer = CAD layer names (a regular expression)
      site_boundary = "C-PROP"
      disturbance = 'C-PHAS-(\\d+)'  # its first group is the phase

      [files]
      project = "project.csv"

  CAD entities carry no attributes: the contract fields they cannot give are empty.

- the plugin's ``FIELD_MAP`` parameter, JSON ``{"role.field": "source field"}``, e.g.
  ``{"disturbance.phase": "PHASE_NO"}`` (the plugin copies each chosen QGIS layer under its
  contract name, so it maps fields only).

Both are validated against the contract (:mod:`analysis.siteplan.contract`): an unknown
layer or field, or a value that is not a name, is an :class:`InputError` naming the file
and the key.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn, Optional

from ..errors import InputError
from ..io.inputs import beside as _beside
from ..profile import read_toml
from .cad import UnsafePattern, layer_pattern
from .contract import SPECS

__all__ = [
    "FieldMap",
    "read_field_map",
    "parse_field_map",
    "field_map",
    "NO_MAPPING",
    "template_fields",
    "fill_template",
]

_TOML_HOW = (
    'a [layers] table of contract layer = "source layer" and [fields.<layer>] tables '
    'of contract field = "source field" (docs/CLI.md, "The command line")'
)
_JSON_HOW = (
    'FIELD_MAP is a JSON object of "role.field": "source field", e.g. {"disturbance.phase": "PHASE_NO"}'
)


@dataclass(frozen=True)
class FieldMap:
    """Contract layer -> source layer, and per contract layer contract field -> source field."""

    layers: Mapping[str, str] = field(default_factory=dict)
    fields: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    source: str = ""  # where it was given (a file, FIELD_MAP), for messages
    files: Mapping[str, str] = field(default_factory=dict)  # contract layer -> another file
    cad_layers: Mapping[str, str] = field(default_factory=dict)  # contract layer -> CAD regex
    cad_crs: Optional[str] = None  # the drawing's CRS
    cad_schedule: Optional[str] = None  # the phases' dates: a CSV/XLSX schedule table

    def __bool__(self) -> bool:
        return bool(self.layers) or any(self.fields.values()) or bool(self.files) or bool(self.cad_layers)

    def source_layer(self, layer: str) -> str:
        """The source layer holding contract layer ``layer`` (its own name where unmapped)."""
        return self.layers.get(layer, layer)

    def source_fields(self, layer: str) -> dict[str, str]:
        """``{contract field: source field}`` of contract layer ``layer`` (empty where unmapped)."""
        return dict(self.fields.get(layer, {}))

    def given_by(self, layer: str, field_name: Optional[str] = None) -> str:
        """Where a mapped name comes from, for an error: ``map.toml [fields.disturbance] phase``."""
        if field_name is None:
            return f"{self.source} [layers] {layer}"
        return f"{self.source} [fields.{layer}] {field_name}"


NO_MAPPING = FieldMap()


def field_map(
    layers: Optional[Mapping[str, Any]] = None,
    fields: Optional[Mapping[str, Any]] = None,
    *,
    source: str = "the mapping",
    path: Optional[str | Path] = None,
    roles: Optional[Sequence[str]] = None,
    json_keys: bool = False,
) -> FieldMap:
    """A :class:`FieldMap` checked against the contract (``roles``: the layers allowed, all by default).

    Raises :class:`InputError` naming ``path`` (or ``source``) and the key at fault (``key
    fields.disturbance.phase``; ``json_keys``: ``key 'disturbance.phase'``, FIELD_MAP's
    spelling): an unknown layer or field, a source name that is not text, or one source field
    mapped to two contract fields.
    """
    allowed = list(roles) if roles is not None else list(SPECS)
    how = _JSON_HOW if json_keys else f"a mapping file holds {_TOML_HOW}"

    def refuse(problem: str, table: str, layer: str, name: Optional[str] = None) -> NoReturn:
        if json_keys:
            key = f"'{layer}.{name}'" if name else f"'{layer}'"
        else:
            key = ".".join(part for part in (table, layer, name) if part)
        where = "" if path is not None else f"{source} "
        raise InputError(f"{where}key {key}: {problem}", path=path, fix=how)

    def source_name(value: object, table: str, layer: str, name: Optional[str] = None) -> str:
        if not isinstance(value, str) or not value.strip():
            refuse(f"must name a source {'field' if name else 'layer'}, not {value!r}", table, layer, name)
        return value

    def known_layer(layer: str, table: str) -> None:
        if layer not in allowed:
            refuse(
                f"'{layer}' is not a site-plan layer here; the layers are {', '.join(allowed)}", table, layer
            )

    out_layers: dict[str, str] = {}
    for layer, source_layer in (layers or {}).items():
        known_layer(layer, "layers")
        out_layers[layer] = source_name(source_layer, "layers", layer)
    out_fields: dict[str, dict[str, str]] = {}
    for layer, mapped in (fields or {}).items():
        known_layer(layer, "fields")
        if not isinstance(mapped, Mapping):
            refuse(f'must be a table of contract field = "source field" ([fields.{layer}])', "fields", layer)
        contract_fields = SPECS[layer].field_names
        out: dict[str, str] = {}
        seen: dict[str, object] = {}
        for contract_field, source_field in mapped.items():
            if str(contract_field).lower() not in contract_fields:
                refuse(
                    f"'{contract_field}' is not a field of the layer '{layer}'; its fields are "
                    f"{', '.join(contract_fields)}",
                    "fields",
                    layer,
                    contract_field,
                )
            source_field = source_name(source_field, "fields", layer, contract_field)
            other = seen.setdefault(source_field.lower(), contract_field)
            if other != contract_field:
                refuse(
                    f"'{source_field}' is mapped to both '{other}' and '{contract_field}'; "
                    "map each source field to one contract field",
                    "fields",
                    layer,
                    contract_field,
                )
            out[str(contract_field).lower()] = source_field
        if out:
            out_fields[layer] = out
    return FieldMap(out_layers, out_fields, str(path) if path is not None else source)


def read_field_map(path: str | Path, roles: Optional[Sequence[str]] = None) -> FieldMap:
    """The TOML mapping file at ``path`` (format: this module's docstring), validated."""
    data = read_toml(path, "mapping file", fix=f"correct the TOML syntax: {_TOML_HOW}")
    unknown = sorted(set(data) - {"layers", "fields", "files", "cad"})
    if unknown:
        raise InputError(
            f"key {unknown[0]}: unknown table(s) {', '.join(unknown)}",
            path=path,
            fix=f"a mapping file holds {_TOML_HOW}",
        )
    for table in ("layers", "fields", "files", "cad"):
        if table in data and not isinstance(data[table], dict):
            raise InputError(
                f"key {table}: must be a table ([{table}])",
                path=path,
                fix=f"a mapping file holds {_TOML_HOW}",
            )
    mapped = field_map(data.get("layers"), data.get("fields"), path=path, roles=roles)
    if "files" not in data and "cad" not in data:
        return mapped
    return _with_cad(mapped, Path(path), data.get("files") or {}, data.get("cad") or {}, roles)


def _with_cad(
    mapped: FieldMap,
    path: Path,
    files: Mapping[str, Any],
    cad: Mapping[str, Any],
    roles: Optional[Sequence[str]],
) -> FieldMap:
    """``[files]`` and ``[cad]`` of a mapping file checked (format: this module's docstring)."""
    allowed = list(roles) if roles is not None else list(SPECS)
    how = f"a mapping file holds {_TOML_HOW}; a CAD export's, [cad] and [files] (README)"

    def refuse(key: str, problem: str) -> NoReturn:
        raise InputError(f"key {key}: {problem}", path=path, fix=how)

    def text(key: str, value: object) -> str:
        if not isinstance(value, str) or not value.strip():
            refuse(key, f"must be text, not {value!r}")
        return value

    out_files = {}
    for layer, name in files.items():
        if layer not in allowed:
            refuse(
                f"files.{layer}",
                f"'{layer}' is not a site-plan layer here; the layers are {', '.join(allowed)}",
            )
        out_files[layer] = str(_beside(path, text(f"files.{layer}", name)))
    unknown = sorted(set(cad) - {"crs", "schedule", "layers"})
    if unknown:
        refuse(f"cad.{unknown[0]}", "unknown key; [cad] holds crs, schedule and a [cad.layers] table")
    layers = cad.get("layers") or {}
    if not isinstance(layers, Mapping):
        refuse("cad.layers", "must be a table ([cad.layers])")
    out_layers = {}
    for layer, pattern in layers.items():
        if layer not in allowed or SPECS[layer].geometry is None:
            refuse(f"cad.layers.{layer}", f"'{layer}' is not a site-plan layer with geometry")
        try:
            layer_pattern(text(f"cad.layers.{layer}", pattern))
        except UnsafePattern as err:
            raise InputError(f"key cad.layers.{layer}: {err}", path=path, fix=err.fix) from None
        out_layers[layer] = pattern
    schedule = cad.get("schedule")
    return replace(
        mapped,
        files=out_files,
        cad_layers=out_layers,
        cad_crs=text("cad.crs", cad["crs"]) if "crs" in cad else None,
        cad_schedule=(str(_beside(path, text("cad.schedule", schedule))) if schedule is not None else None),
    )


def parse_field_map(
    text: Optional[str], roles: Optional[Sequence[str]] = None, source: str = "FIELD_MAP"
) -> FieldMap:
    """The plugin's ``FIELD_MAP`` JSON, ``{"role.field": "source field"}``, validated.

    ``roles`` are the layers the caller takes; anything else is refused, naming it. Blank text
    is no mapping.

    >>> parse_field_map('{"disturbance.phase": "PHASE_NO"}').source_fields("disturbance")
    {'phase': 'PHASE_NO'}
    """
    if not text or not str(text).strip():
        return NO_MAPPING
    try:
        given = json.loads(text)
    except ValueError as err:
        raise InputError(f"{source} is not valid JSON ({err})", fix=_JSON_HOW) from None
    if not isinstance(given, dict):
        raise InputError(f"{source} is not a JSON object", fix=_JSON_HOW)
    allowed = list(roles) if roles is not None else list(SPECS)
    fields: dict[str, dict[str, Any]] = {}
    for key, source_field in given.items():
        role, _, contract_field = str(key).partition(".")
        if role not in allowed or not contract_field:
            raise InputError(
                f"{source} key '{key}' is not 'role.field' with a role of {', '.join(allowed)}", fix=_JSON_HOW
            )
        fields.setdefault(role, {})[contract_field] = source_field
    return field_map(fields=fields, source=source, roles=allowed, json_keys=True)


def template_fields(template: object) -> list[str]:
    """The field names of an id template (``"NWI-{fid}"`` -> ``["fid"]``); a ValueError saying
    why for anything beyond plain named fields: attribute or index access (``{fid.__class__}``,
    ``{a[0]}``), conversions (``{a!r}``), format specifications, positional ``{}``, unbalanced
    braces. User text is data: a template is filled, never evaluated.

    >>> template_fields("NWI-{fid}-{Name}")
    ['fid', 'Name']
    >>> template_fields("{fid.__class__}")
    Traceback (most recent call last):
    ...
    ValueError: '{fid.__class__}' may hold only plain field names in braces ({fid}), not 'fid.__class__'
    """
    if not isinstance(template, str):
        raise ValueError(f"{template!r} is not text")
    names = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        raise ValueError(f"'{template}' is not a template ({err})") from None
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            shown = name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            raise ValueError(
                f"'{template}' may hold only plain field names in braces ({{fid}}), not '{shown}'"
            )
        names.append(name)
    return names


def fill_template(template: str, values: Mapping[str, object]) -> str:
    """``template`` (checked by :func:`template_fields`) with each ``{name}`` replaced by
    ``str(values[name])``; nothing is looked up on the values.

    >>> fill_template("NWI-{fid}", {"fid": 7})
    'NWI-7'
    """
    return "".join(
        literal + ("" if name is None else str(values[name]))
        for literal, name, _spec, _conv in string.Formatter().parse(template)
    )
