"""Issue 34, item 16: no package registry's host is written in the project.

The root filesystems' Debian archive is read from the machine's own apt configuration
(``debian_archive`` in scripts/qgis_release.sh, run here on sample apt configurations); the
plugin's dependency installer runs pip with the user's own configuration (no index named).
"""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RELEASE_SCRIPT = ROOT / "scripts" / "qgis_release.sh"

# Spelled in parts so that this file names none of them either.
HOSTS = tuple(
    ".".join(parts)
    for parts in (
        ("deb", "debian", "org"),
        ("ftp", "debian", "org"),
        ("security", "debian", "org"),
        ("pypi", "org"),
        ("files", "pythonhosted", "org"),
        ("pypi", "python", "org"),
        ("registry", "npmjs", "org"),
    )
)
ARCHIVE = "http://archive.invalid/debian"  # a reserved name: these tests reach nothing


def debian_archive(*args, env=None):
    """``debian_archive ARGS`` (or ``_debian_mirror`` with no args) as the script defines it."""
    function = "debian_archive" if args else "_debian_mirror"
    return subprocess.run(
        ["bash", "-c", f'source "$0"; {function} "$@"', str(RELEASE_SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def apt_config(tmp_path, sources_list=None, **parts):
    """A sources.list (one-line format, or none) and sources.list.d/ with ``parts`` files."""
    folder = tmp_path / "sources.list.d"
    folder.mkdir()
    for name, text in parts.items():
        (folder / name.replace("_", ".", 1)).write_text(text, encoding="utf-8")
    listed = tmp_path / "sources.list"
    if sources_list is not None:
        listed.write_text(sources_list, encoding="utf-8")
    return listed, folder


def test_the_release_archive_of_a_deb822_file_not_security_or_updates(tmp_path):
    listed, folder = apt_config(
        tmp_path,
        debian_sources=f"""\
Types: deb
# {ARCHIVE}-security (a comment, not the address)
URIs: {ARCHIVE}-security
Suites: trixie-security
Components: main

Types: deb-src
URIs: http://sources.invalid/debian
Suites: trixie

Types: deb
URIs: http://disabled.invalid/debian
Suites: trixie
Enabled: no

Types: deb
URIs: {ARCHIVE}/
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
""",
    )
    found = debian_archive(listed, folder)
    assert (found.returncode, found.stdout, found.stderr) == (0, f"{ARCHIVE}\n", "")


def test_sources_list_first_then_the_parts_in_order(tmp_path):
    one_line = f"""\
# deb http://commented.invalid/debian bookworm main
deb-src http://sources.invalid/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {ARCHIVE} bookworm main
deb http://other.invalid/debian bookworm main
"""
    listed, folder = apt_config(
        tmp_path, one_line, a_sources="Types: deb\nURIs: http://parts.invalid/debian\nSuites: bookworm\n"
    )
    assert debian_archive(listed, folder).stdout == f"{ARCHIVE}\n"
    listed.unlink()  # then the parts, in the order of their names (as apt reads them)
    (folder / "0-first.list").write_text(
        "deb http://security.invalid/debian-security bookworm-security main\n"
        "deb http://old.invalid/debian-security bookworm/updates main\n"
        f"deb {ARCHIVE}/ bookworm main\n",
        encoding="utf-8",
    )
    assert debian_archive(listed, folder).stdout == f"{ARCHIVE}\n"


def test_no_archive_is_a_clear_error_naming_the_files_and_the_way_out(tmp_path):
    listed, folder = apt_config(
        tmp_path,
        "deb cdrom:[Debian]/ bookworm main\n",
        nodesource_sources="Types: deb\nURIs: http://node.invalid/node_20.x\nSuites: nodistro-main\n",
        old_list_disabled="deb http://x.invalid/debian bookworm main\n",
    )
    found = debian_archive(listed, folder)
    assert found.returncode == 2 and found.stdout == ""
    assert str(listed) in found.stderr and str(folder) in found.stderr
    assert "DEBIAN_MIRROR" in found.stderr and "apt's sources" in found.stderr


def test_debian_mirror_set_is_taken_as_it_is():
    found = debian_archive(env={"DEBIAN_MIRROR": "http://mirror.invalid/debian"})
    assert (found.returncode, found.stdout) == (0, "http://mirror.invalid/debian\n")


@pytest.mark.skipif(
    not any(Path("/etc/apt").glob("sources.list*")), reason="this machine has no apt configuration"
)
def test_this_machines_apt_names_the_archive_the_root_filesystems_come_from():
    found = debian_archive()
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith(("http://", "https://", "file:")) and found.stdout.endswith("\n")


def project_files():
    """The checkout's files: git's tracked ones, or where git is not installed (a release's root
    filesystem) every file but what a fresh clone has not got."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        listed = None
    if listed is not None and listed.returncode == 0:
        return [name for name in listed.stdout.decode().split("\0") if name]
    skipped = {
        ".git",
        ".venv",
        "build",
        "__pycache__",
        ".pytest_cache",
        ".hypothesis",
        ".mypy_cache",
        ".ruff_cache",
    }
    return [
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*")
        if path.is_file()
        and not skipped & set(path.relative_to(ROOT).parts)
        and not any(part.endswith(".egg-info") for part in path.parts)
    ]


def test_no_registry_host_is_written_in_the_project():
    written = {}
    for name in project_files():
        path = ROOT / name
        if not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8", errors="ignore")
        hosts = [host for host in HOSTS if host in text]
        if hosts:
            written[name] = hosts
    assert written == {}
