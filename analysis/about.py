"""The tool's name and version (metadata.txt beside the package is the one source)."""

import configparser
from pathlib import Path

__all__ = ["TOOL_NAME", "__version__"]

TOOL_NAME = "swppp-review"


def _read_version() -> str:
    # metadata.txt beside the package is the single source: true in the repository and in the
    # staged plugin folder; a pip-installed copy falls back to its distribution metadata.
    metadata = Path(__file__).resolve().parent.parent / "metadata.txt"
    if metadata.is_file():
        parser = configparser.ConfigParser()
        parser.read(metadata, encoding="utf-8")
        if parser.has_option("general", "version"):
            return parser.get("general", "version")
    try:
        from importlib.metadata import version

        return version("swppp-review")
    except Exception:  # noqa: BLE001 - no metadata at all: say so rather than guess
        return "unknown"


__version__ = _read_version()
