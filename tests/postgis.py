"""A real PostgreSQL + PostGIS for the tests: its own data folder and socket, started and stopped here.

``postgis_server`` (session) runs ``initdb`` into a temporary folder and starts ``postgres``
listening only on a unix socket in that folder (no TCP port, so nothing else on the machine is
touched), creates a database with the ``postgis`` extension, and stops the server at the end.
PostgreSQL refuses to run as root; as root (CI) the server runs as the ``postgres`` system user,
which owns the folder. The tests skip only where the binaries (Debian ``postgresql`` and
``postgis``) or psycopg are absent, and say so.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

PORT = 54329  # names the socket file only: the server listens on no TCP port


@dataclass
class PostgisServer:
    socket_dir: str
    port: int
    database: str

    def conninfo(self, database: str | None = None) -> str:
        return f"host={self.socket_dir} port={self.port} dbname={database or self.database} user=postgres"

    def uri(self) -> str:
        return f"postgresql://postgres@/{self.database}?host={self.socket_dir}&port={self.port}"


def _binaries() -> Path | None:
    """The newest PostgreSQL's bin folder, where PostGIS is installed for it too."""
    for initdb in sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True):
        version = Path(initdb).parents[1].name
        if Path(f"/usr/share/postgresql/{version}/extension/postgis.control").is_file():
            return Path(initdb).parent
    return None


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


@pytest.fixture(scope="session")
def postgis_server():
    """A running PostgreSQL with PostGIS, for this test session only."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed in this Python")
    bin_dir = _binaries()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL/PostGIS binaries are absent (Debian: postgresql, postgis, postgresql-15-postgis-3)"
        )
    folder = tempfile.mkdtemp(prefix="swppp-pg-")
    data = os.path.join(folder, "data")
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    log = os.path.join(folder, "server.log")
    try:
        subprocess.run(
            _as_server_user(
                [
                    str(bin_dir / "initdb"),
                    "-D",
                    data,
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "--locale=C",
                ]
            ),
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        options = f"-c listen_addresses='' -k {folder} -p {PORT} -c fsync=off -c max_connections=40"
        subprocess.run(
            _as_server_user(
                [str(bin_dir / "pg_ctl"), "-D", data, "-l", log, "-o", options, "-w", "-t", "60", "start"]
            ),
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.CalledProcessError as err:
        text = Path(log).read_text() if os.path.exists(log) else ""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"PostgreSQL did not start: {err.stderr}\n{text}")
    server = PostgisServer(folder, PORT, "swppp_test")
    try:
        with psycopg.connect(server.conninfo("postgres"), autocommit=True) as con:
            con.execute("CREATE DATABASE swppp_test")
        with psycopg.connect(server.conninfo(), autocommit=True) as con:
            con.execute("CREATE EXTENSION postgis")
        yield server
    finally:
        subprocess.run(
            _as_server_user([str(bin_dir / "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]),
            check=False,
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def pg_schema(postgis_server):
    """A fresh schema name for one test (created by the first import), and the connection."""
    return postgis_server.conninfo(), f"t_{uuid.uuid4().hex[:10]}"
