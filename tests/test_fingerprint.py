"""Which sitegen built a site: the downloads pages name its source's fingerprint, a reader recomputes it with stock tools,
and `verify --pages` says first when the site was built by another sitegen, whose pages may differ for that alone."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.core.fingerprint import PACKAGE, SHELL, sitegen_fingerprint, tree_fingerprint

from test_verify_publication import RECORDS, problems, statuses, verify

NAMED = re.compile(r'<code id="sitegen-source">([0-9a-f]{64})</code>')


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "site"
    assert main(["build", "--records", str(RECORDS), "--out", str(out), "--quiet"]) == 0
    return out


def test_the_fingerprint_is_what_the_shell_command_the_page_gives_prints():
    done = subprocess.run(["bash", "-c", SHELL], cwd=PACKAGE, capture_output=True, text=True, check=True)
    printed, dash = done.stdout.split()
    assert dash == "-"
    assert printed == sitegen_fingerprint() == tree_fingerprint(PACKAGE)


def test_the_fingerprint_covers_every_file_but_bytecode_caches(tmp_path):
    folder = tmp_path / "sitegen"
    shutil.copytree(PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    before = tree_fingerprint(folder)
    assert before == sitegen_fingerprint()
    (folder / "__pycache__").mkdir(exist_ok=True)
    (folder / "__pycache__" / "cli.cpython-311.pyc").write_bytes(b"bytecode")
    assert tree_fingerprint(folder) == before
    for changed in (folder / "templates" / "static" / "site.css", folder / "locales" / "sv" / "LC_MESSAGES" / "sitegen.po",
                    folder / "score" / "matching.py"):
        data = changed.read_bytes()
        changed.write_bytes(data + b"\n")
        assert tree_fingerprint(folder) != before, changed
        changed.write_bytes(data)
        assert tree_fingerprint(folder) == before
    (folder / "linked.py").symlink_to(folder / "cli.py")  # `find -type f` counts no link, and neither does the digest
    (folder / "linked").symlink_to(folder / "core", target_is_directory=True)
    assert tree_fingerprint(folder) == before
    (folder / "notes.txt").write_text("a file more")
    assert tree_fingerprint(folder) != before
    assert tree_fingerprint(folder) == subprocess.run(["bash", "-c", SHELL], cwd=folder, capture_output=True, text=True,
                                                      check=True).stdout.split()[0]


def test_every_downloads_page_names_the_fingerprint_of_the_sitegen_that_built_it(built):
    for lang in ("sv", "en"):
        page = (built / lang / "downloads.html").read_text(encoding="utf-8")
        assert NAMED.findall(page) == [sitegen_fingerprint()]
        assert SHELL.replace("'", "&#39;") in page or SHELL in page


def test_verify_pages_says_first_that_another_sitegen_built_the_site(built, tmp_path, capsys):
    site = tmp_path / "site"
    shutil.copytree(built, site)
    theirs = "0" * 64
    page = site / "sv" / "downloads.html"  # the default language's
    page.write_text(NAMED.sub(f'<code id="sitegen-source">{theirs}</code>', page.read_text(encoding="utf-8")), encoding="utf-8")
    code, report = verify(capsys, site, "--pages")
    assert code == 1
    assert statuses(report)["pages"] == "fail"
    found = problems(report, "pages")
    assert [c for c, _ in found] == ["verify.other-sitegen", "verify.page-differs"]
    assert found[0][1].startswith(f"{page}: error: the site was built by a sitegen whose source has the fingerprint {theirs}; "
                                  f"this sitegen's is {sitegen_fingerprint()}: ")
    assert found[1][1].startswith(f"{page}:")


def test_a_site_built_by_this_sitegen_verifies_without_a_word_on_it(built, capsys):
    code, report = verify(capsys, built, "--pages")
    assert code == 0
    assert all(status == "ok" for status in statuses(report).values())
    # the JSON report names the sitegen that checked, so an auditor's saved report says which source it ran
    assert report["sitegen_fingerprint"] == sitegen_fingerprint()


def test_a_checkout_keeps_the_package_bytes_as_committed_on_every_system():
    """The fingerprint covers bytes: a checkout converting line endings (git's core.autocrlf on Windows) would give
    another fingerprint than the build that published it. .gitattributes turns the conversion off for the package."""
    root = PACKAGE.parent
    if not (root / ".git").exists():
        pytest.skip("not a git checkout: nothing converts line endings")
    files = ["sitegen/cli.py", "sitegen/templates/base.html.j2", "sitegen/locales/sv/LC_MESSAGES/sitegen.po"]
    done = subprocess.run(["git", "check-attr", "text", "--", *files], cwd=root, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [f"{name}: text: unset" for name in files]
