"""The published downloads are the checked-in bytes, and SHA256SUMS verifies them with coreutils."""

from __future__ import annotations

import shutil
import subprocess

import pytest

pytestmark = pytest.mark.browser


def check_sums(folder):
    return subprocess.run(
        ["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=folder, capture_output=True, text=True, check=False
    )


def listed_names(folder) -> list[str]:
    # coreutils format: 64 hex digits, a space, a space or '*' (binary mode), the file name
    return [line[66:] for line in (folder / "SHA256SUMS").read_text(encoding="utf-8").splitlines() if line]


def test_published_files_are_the_checked_in_bytes(built_site, records_dir, site_config):
    downloads = built_site / "downloads"
    for entry in site_config["publish"]:
        assert (downloads / entry["name"]).read_bytes() == (records_dir / entry["record"]).read_bytes(), entry


def test_sha256sums_lists_every_published_file(built_site, site_config):
    names = set(listed_names(built_site / "downloads"))
    assert {entry["name"] for entry in site_config["publish"]} <= names


def test_sha256sums_verifies(built_site):
    result = check_sums(built_site / "downloads")
    assert result.returncode == 0, result.stdout + result.stderr


def test_sha256sums_catches_one_changed_byte(built_site, tmp_path):
    copy = tmp_path / "downloads"
    shutil.copytree(built_site / "downloads", copy)
    victim = copy / listed_names(copy)[0]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    result = check_sums(copy)
    assert result.returncode != 0
    assert f"{victim.name}: FAILED" in result.stdout
