"""sitegen installed from its source with `pip install .`, as the downloads page tells readers to, builds and verifies pages.

The templates and catalogs are package data: a wheel without them installs, scores and checks checksums, then fails on
the first page. These tests build the real wheel with pip from a copy of the source and run the installed copy.
"""

import html
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sitegen.core.fingerprint import tree_fingerprint

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "sitegen"
SHIPPED = ("templates", "locales", "schemas")  # the package's folders of data, not code


def _source_copy(into: Path) -> Path:
    """What `pip install .` reads of a checkout, copied, so building the wheel writes nothing into the checkout."""
    into.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, into / name)
    shutil.copytree(PACKAGE, into / "sitegen", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return into


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = _source_copy(work / "source")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    wheels = sorted((work / "dist").glob("sitegen-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_the_wheel_ships_every_file_of_the_package_folder(wheel):
    """Every template, catalog and schema (and module): then the installed copy is the checkout's, fingerprint and all."""
    with zipfile.ZipFile(wheel) as z:
        shipped = {name for name in z.namelist() if name.split("/")[:1] == ["sitegen"]}
    expected = {p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    data = {name for name in expected if name.split("/")[1] in SHIPPED}
    assert {"sitegen/templates/base.html.j2", "sitegen/templates/static/site.css", "sitegen/locales/sv/LC_MESSAGES/sitegen.po",
            "sitegen/templates/content/sv/method-intro.md", "sitegen/schemas/results.schema.json"} <= data
    assert sorted(expected - shipped) == []
    assert sorted(shipped - expected) == []


def test_an_installed_sitegen_builds_the_bundled_site_and_verifies_its_pages(wheel, tmp_path):
    target = tmp_path / "installed"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", "--target", str(target),
                           str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    # the installed copy first on the path, the test environment's dependencies after it; run away from the checkout
    script = ("import sys; sys.path.insert(0, sys.argv[1]); import sitegen, sitegen.cli; "
              "assert sitegen.__file__.startswith(sys.argv[1]), sitegen.__file__; sys.exit(sitegen.cli.main(sys.argv[2:]))")
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1764547200", "PYTHONDONTWRITEBYTECODE": "1"}

    def sitegen(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script, str(target), *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=900)

    built = sitegen("build", "--records", str(ROOT / "records"), "--out", str(tmp_path / "site"))
    assert built.returncode == 0, built.stderr
    # the site names the installed copy's fingerprint, and it is the checkout's: the same source, wherever it lies
    page = (tmp_path / "site" / "sv" / "downloads.html").read_text("utf-8")
    named = re.findall(r'<code id="sitegen-source">([0-9a-f]{64})</code>', page)
    assert named == [tree_fingerprint(target / "sitegen")] == [tree_fingerprint(PACKAGE)]
    # and the page's own commands print it for the sitegen installed in the active environment, as a reader runs them
    commands = html.unescape(re.findall(r"<pre><code>(cd .*?)</code></pre>", page, re.S)[0])
    active = {**env, "PYTHONPATH": str(target), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"}
    printed = subprocess.run(["bash", "-c", commands], cwd=tmp_path, env=active, capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.split() == [named[0], "-"]
    checked = sitegen("verify", str(tmp_path / "site"), "--pages")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "every page rebuilt from the downloads alone is the published page" in checked.stdout
    assert "FAIL" not in checked.stdout
