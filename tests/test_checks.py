"""`sitegen check`: passes on the bundled publication, and names the cause when one results entry is tampered with."""

import shutil
from pathlib import Path

from sitegen.cli import main

RECORDS = Path(__file__).resolve().parent.parent / "records"


def test_check_passes_on_the_bundled_publication(capsys):
    assert main(["check", "--records", str(RECORDS)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 7 and all(line.startswith("ok ") for line in lines)
    assert "byte-identical" in lines[-1]


def test_check_fails_naming_a_tampered_results_entry(tmp_path, capsys):
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    path = root / "results.json"
    text = path.read_text(encoding="utf-8")
    assert text.count('"passed": 171,') == 1  # GROUNDING of the nightly run
    path.write_text(text.replace('"passed": 171,', '"passed": 172,'), encoding="utf-8")
    assert main(["check", "--records", str(root)]) == 1
    out = capsys.readouterr().out
    assert "FAIL every results entry reproduces" in out
    assert "2026-09-02-nightly" in out and "recorded 172, fresh 171" in out and "[results.stale]" in out
    assert "/runs/1/measures/0/passed" in out
    assert "skip a build is byte-identical" in out  # the remaining checks still ran, the last one needs them


def test_check_reports_a_broken_catalog_and_an_unexplained_change(tmp_path, capsys):
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    for entry in (root / "changelog").glob("*.md"):
        if "explains: scorer:6" in entry.read_text(encoding="utf-8"):
            entry.unlink()
    assert main(["check", "--records", str(root)]) == 1
    out = capsys.readouterr().out
    assert "FAIL every version change is explained" in out
    assert "--explains scorer:6" in out
    assert "ok   the catalogs are complete for every language" in out
