"""The downloads carry what a reader needs to re-score every run and rebuild the site: the published runs, their setups,
the configuration and the changelog entries, each without anything internal or unpublished, and listed in both languages."""

import json
import shutil
from pathlib import Path

import pytest

from sitegen.build import downloads_phase, load_phase
from sitegen.cli import main
from sitegen.core.errors import PublicationError
from sitegen.load.setups import setup_fingerprints
from sitegen.publish.metadata import public_metadata

RECORDS = Path(__file__).resolve().parent.parent / "records"
HIDDEN_RUN = "2026-10-10-trial"  # the bundled records' one unpublished run


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "site"
    assert main(["build", "--records", str(RECORDS), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture
def records_copy(tmp_path):
    target = tmp_path / "records"
    shutil.copytree(RECORDS, target)
    return target


def _json(path: Path):
    return json.loads(path.read_bytes())


def test_the_downloads_carry_the_published_runs_without_their_internal_bookkeeping(built):
    metadata = built / "downloads" / "metadata"
    runs = _json(metadata / "runs.json")["runs"]
    published = [r for r in _json(RECORDS / "runs.json")["runs"] if r["published"]]
    assert [r["id"] for r in runs] == [r["id"] for r in published]
    assert any("internal" in r for r in published)  # the bundled records do keep costs and storage for some runs
    assert all("internal" not in r for r in runs)
    assert runs == [{k: v for k, v in r.items() if k != "internal"} for r in published]
    for path in metadata.rglob("*"):
        if path.is_file():
            assert HIDDEN_RUN.encode() not in path.read_bytes(), path


def test_the_configuration_is_published_without_the_deny_list_or_unpublished_answers(built):
    config = _json(built / "downloads" / "metadata" / "sitegen.json")
    mine = _json(RECORDS / "sitegen.json")
    assert config["answers"] == ["answers.json"] and "answers-unpublished.json" in mine["answers"]
    assert config["internal_fields"] == [] and mine["internal_fields"]
    assert config["publish"] == mine["publish"]
    assert {k: v for k, v in config.items() if k not in ("answers", "internal_fields")} == \
        {k: v for k, v in mine.items() if k not in ("answers", "internal_fields")}


def test_the_changelog_entries_are_published_as_checked_in(built):
    published = sorted(p.name for p in (built / "downloads" / "metadata" / "changelog").iterdir())
    assert published == sorted(p.name for p in (RECORDS / "changelog").glob("*.md"))
    for name in published:
        assert (built / "downloads" / "metadata" / "changelog" / name).read_bytes() == (RECORDS / "changelog" / name).read_bytes()


def test_every_metadata_file_is_in_sha256sums(built):
    listed = {line.split("  ", 1)[1] for line in (built / "downloads" / "SHA256SUMS").read_text().splitlines()}
    files = {p.relative_to(built / "downloads").as_posix() for p in (built / "downloads" / "metadata").rglob("*") if p.is_file()}
    assert {"metadata/runs.json", "metadata/setups.json", "metadata/sitegen.json"} <= files
    assert files <= listed


def test_only_the_setups_of_published_runs_are_published(records_copy):
    setups = _json(records_copy / "setups.json")
    trial = dict(next(s for s in setups["setups"] if s["id"] == "regression-v2-engine-change"), id="trial-only")
    setups["setups"].append(trial)
    (records_copy / "setups.json").write_text(json.dumps(setups, indent=2, ensure_ascii=False), encoding="utf-8")
    runs = (records_copy / "runs.json").read_text(encoding="utf-8")
    at = runs.index(f'"id": "{HIDDEN_RUN}"')
    runs = runs[:at] + runs[at:].replace('"setup": "regression-v2-engine-change"', '"setup": "trial-only"', 1)
    (records_copy / "runs.json").write_text(runs, encoding="utf-8")
    records = load_phase(records_copy)
    assert records.run(HIDDEN_RUN).setup == "trial-only"
    files = {name: file for name, _, file in public_metadata(records)}
    published = [s["id"] for s in json.loads(files["metadata/setups.json"].data)["setups"]]
    assert published == ["regression-v1-engine-change", "regression-v2-nightly", "regression-v2-release",
                         "regression-v2-engine-change"]


def test_metadata_written_again_from_itself_is_the_same_bytes(built, tmp_path):
    """A site rebuilt from its downloads publishes the very same metadata (so `verify --pages` can compare)."""
    downloads = built / "downloads"
    folder = tmp_path / "records"
    shutil.copytree(downloads / "metadata", folder)
    for entry in _json(downloads / "metadata" / "sitegen.json")["publish"]:
        shutil.copyfile(downloads / entry["name"], folder / entry["record"])
    again = {name: file.data for name, _, file in public_metadata(load_phase(folder))}
    first = {p.relative_to(downloads).as_posix(): p.read_bytes() for p in (downloads / "metadata").rglob("*") if p.is_file()}
    assert again == first


def test_an_unpublished_run_named_in_a_changelog_entry_is_refused(records_copy):
    entry = records_copy / "changelog" / "2026-12-01-scorer-7.md"
    entry.write_text(entry.read_text(encoding="utf-8") + f'\nCompare the run "{HIDDEN_RUN}".\n', encoding="utf-8")
    with pytest.raises(PublicationError) as caught:
        downloads_phase(load_phase(records_copy))
    assert [(d.path, d.code) for d in caught.value.diagnostics] == [
        ("metadata/changelog/2026-12-01-scorer-7.md", "publish.unpublished-run")]


def test_an_internal_field_in_a_published_setup_is_refused(records_copy):
    setups = _json(records_copy / "setups.json")
    setups["setups"][0]["configuration"]["cost_sek"] = 12
    (records_copy / "setups.json").write_text(json.dumps(setups, indent=2, ensure_ascii=False), encoding="utf-8")
    fingerprint = next(f.computed for f in setup_fingerprints(records_copy)
                       if f.setup == setups["setups"][0]["id"])
    setups["setups"][0]["fingerprint"] = fingerprint
    (records_copy / "setups.json").write_text(json.dumps(setups, indent=2, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(PublicationError) as caught:
        downloads_phase(load_phase(records_copy))
    assert [(d.path, d.pointer, d.code) for d in caught.value.diagnostics] == [
        ("metadata/setups.json", "/setups/0/configuration/cost_sek", "publish.internal-field")]


def test_a_record_published_under_the_metadata_folder_name_is_refused(records_copy):
    config = _json(records_copy / "sitegen.json")
    config["publish"][0]["name"] = "metadata"
    (records_copy / "sitegen.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    with pytest.raises(PublicationError) as caught:
        downloads_phase(load_phase(records_copy))
    assert [d.code for d in caught.value.diagnostics] == ["publish.reserved-name"]


@pytest.mark.parametrize("lang, heading, verify", [
    ("en", "Runs, setups and changelog entries", "Checking everything at once"),
    ("sv", "Körningar, körningsupplägg och ändringsloggens poster", "Kontrollera allt på en gång"),
])
def test_the_downloads_page_lists_the_metadata_and_the_verify_command_in_both_languages(built, lang, heading, verify):
    page = (built / lang / "downloads.html").read_text(encoding="utf-8")
    assert f'<h2 id="metadata-heading">{heading}</h2>' in page
    assert '<a href="../downloads/metadata/runs.json" download>metadata/runs.json</a>' in page
    assert f'<h3 id="verify-all-heading">{verify}</h3>' in page
    assert "<pre><code>sitegen verify https://quality.example.org/ --pages</code></pre>" in page
    records_table = page[page.index('id="records-heading"'):page.index('id="metadata-heading"')]
    assert "metadata/" not in records_table
