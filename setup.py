"""Version from metadata.txt, the single source of the plugin's and the library's version."""

import configparser
from pathlib import Path

from setuptools import setup

_metadata = configparser.ConfigParser()
_metadata.read(Path(__file__).with_name("metadata.txt"), encoding="utf-8")
setup(version=_metadata["general"]["version"])
