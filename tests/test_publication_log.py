"""`sitegen seal` chains publications in a checked-in log; the build publishes it and refuses a broken chain or a lost run."""

import hashlib
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.publish.chain import check_log_chain, check_log_results
from sitegen.score.results import canonical_json

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "records"


@pytest.fixture
def root(tmp_path) -> Path:
    """The bundled records with no publication sealed yet."""
    folder = tmp_path / "records"
    shutil.copytree(RECORDS, folder)
    (folder / "publications.jsonl").unlink(missing_ok=True)
    shutil.rmtree(folder / "publications", ignore_errors=True)
    return folder


def _entry_digest(entry: dict) -> str:
    """A results entry's digest, computed the way the downloads page tells readers to."""
    return hashlib.sha256(json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()


def _seal(root: Path, date: str, capsys) -> str:
    assert main(["seal", "--records", str(root), "--date", date]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _build(root: Path, out: Path, capsys) -> tuple[int, str]:
    code = main(["build", "--records", str(root), "--out", str(out), "--quiet"])
    return code, capsys.readouterr().err


def test_seal_records_the_sums_and_every_run_and_the_build_publishes_the_log(tmp_path, root, capsys):
    said = _seal(root, "2026-12-01", capsys)
    lines = (root / "publications.jsonl").read_bytes().splitlines(keepends=True)
    assert len(lines) == 1
    entry = json.loads(lines[0])
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    assert entry["sequence"] == 1 and entry["previous"] is None and entry["date"] == "2026-12-01"
    assert entry["results"] == {r["run"]: _entry_digest(r) for r in results["runs"]}
    out = tmp_path / "site"
    assert _build(root, out, capsys)[0] == 0
    sums = (out / "downloads" / "SHA256SUMS").read_bytes()
    assert entry["sha256sums"] == hashlib.sha256(sums).hexdigest()
    assert (out / "downloads" / "publications.jsonl").read_bytes() == lines[0]
    assert (out / "downloads" / "publications" / f"{entry['sha256sums']}.SHA256SUMS").read_bytes() == sums
    assert f"sealed publication 1 of 2026-12-01: SHA256SUMS {entry['sha256sums']}, {len(results['runs'])} runs" in said
    assert f"log entry 1 has the SHA-256 {hashlib.sha256(lines[0]).hexdigest()}" in said
    assert "This publication is line 1 of the log" in (out / "en" / "downloads.html").read_text(encoding="utf-8")
    assert "Den här publiceringen är rad 1 i loggen" in (out / "sv" / "downloads.html").read_text(encoding="utf-8")


def test_sealing_the_same_publication_again_writes_nothing(root, capsys):
    _seal(root, "2026-12-01", capsys)
    before = (root / "publications.jsonl").read_bytes()
    said = _seal(root, "2026-12-02", capsys)
    assert said.startswith("already sealed: publication 1 of 2026-12-01") and "nothing written" in said
    assert (root / "publications.jsonl").read_bytes() == before


def _republish(root: Path) -> None:
    """A change that gives another SHA256SUMS but leaves every run's results alone: the cases file re-indented."""
    value = json.loads((root / "cases.json").read_text(encoding="utf-8"))
    (root / "cases.json").write_text(json.dumps(value, ensure_ascii=False, indent=4) + "\n", encoding="utf-8")


def test_a_second_publication_chains_to_the_first_and_both_sums_are_published(tmp_path, root, capsys):
    _seal(root, "2026-12-01", capsys)
    _republish(root)
    _seal(root, "2026-12-02", capsys)
    first, second = (root / "publications.jsonl").read_bytes().splitlines(keepends=True)
    assert json.loads(second)["previous"] == hashlib.sha256(first).hexdigest()
    assert json.loads(second)["sequence"] == 2
    out = tmp_path / "site"
    assert _build(root, out, capsys)[0] == 0
    stored = sorted(p.name for p in (out / "downloads" / "publications").iterdir())
    assert stored == sorted(f"{json.loads(x)['sha256sums']}.SHA256SUMS" for x in (first, second))
    log = (out / "downloads" / "publications.jsonl").read_bytes()
    sums = {p.name.split(".")[0]: p.read_bytes() for p in (out / "downloads" / "publications").iterdir()}
    assert check_log_chain(log, sums) == [], "the chain checks from the published bytes alone"


def test_a_broken_chain_is_refused_at_the_line_that_no_longer_follows(tmp_path, root, capsys):
    _seal(root, "2026-12-01", capsys)
    _republish(root)
    _seal(root, "2026-12-02", capsys)
    first, second = (root / "publications.jsonl").read_bytes().splitlines(keepends=True)
    (root / "publications.jsonl").write_bytes(first.replace(b'"date":"2026-12-01"', b'"date":"2026-11-30"') + second)
    out = tmp_path / "site"
    code, err = _build(root, out, capsys)
    assert code == 2 and not out.exists()
    column = second.index(b'"previous":') + len('"previous":') + 1
    assert (f"{root / 'publications.jsonl'}:2:{column}: /previous: error: previous is {json.loads(second)['previous']}, "
            "but the entry ") in err
    assert "[publication.chain-broken]" in err
    assert main(["check", "--records", str(root)]) == 1
    assert "[publication.chain-broken]" in capsys.readouterr().out


def test_a_rewritten_log_line_is_refused(tmp_path, root, capsys):
    _seal(root, "2026-12-01", capsys)
    value = json.loads((root / "publications.jsonl").read_bytes())
    (root / "publications.jsonl").write_text(json.dumps(value, indent=1).replace("\n", "") + "\n", encoding="utf-8")
    code, err = _build(root, tmp_path / "site", capsys)
    assert code == 2 and f"{root / 'publications.jsonl'}:1:1: error: a log entry is written in canonical JSON" in err


def test_a_changed_stored_sums_is_refused(tmp_path, root, capsys):
    _seal(root, "2026-12-01", capsys)
    (stored,) = (root / "publications").iterdir()
    stored.write_bytes(stored.read_bytes() + b"0" * 64 + b"  extra.json\n")
    code, err = _build(root, tmp_path / "site", capsys)
    assert code == 2 and f"{stored}: error: this stored SHA256SUMS does not have the SHA-256" in err
    assert "[publication.sums-changed]" in err


def test_a_dropped_run_is_refused_at_the_publication_that_contained_it(tmp_path, root, capsys):
    _seal(root, "2026-12-01", capsys)
    runs = json.loads((root / "runs.json").read_text(encoding="utf-8"))
    run = next(r for r in runs["runs"] if r["published"] and r["status"] == "crashed")  # no version change hangs on it
    run["published"] = False  # withdrawn from the publication: its results entry must go too
    (root / "runs.json").write_text(json.dumps(runs, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    results["runs"] = [r for r in results["runs"] if r["run"] != run["id"]]
    (root / "results.json").write_bytes(canonical_json(results))
    for name in json.loads((root / "sitegen.json").read_text(encoding="utf-8"))["answers"]:
        answers = json.loads((root / name).read_text(encoding="utf-8"))
        answers["answers"] = [a for a in answers["answers"] if a["run"] != run["id"]]
        (root / name).write_text(json.dumps(answers, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    code, err = _build(root, tmp_path / "site", capsys)
    assert code == 2, err
    line = (root / "publications.jsonl").read_text(encoding="utf-8")
    column = line.index(f'"{run["id"]}":') + len(f'"{run["id"]}":') + 1
    assert (f"{root / 'publications.jsonl'}:1:{column}: /results/{run['id']}: error: run \"{run['id']}\" was in sealed publication 1 "
            f"(2026-12-01) but is no longer in {root / 'results.json'}") in err
    assert "[publication.run-dropped]" in err


def test_a_rewritten_past_run_is_refused(tmp_path, root, capsys):
    _seal(root, "2026-12-01", capsys)
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    run = results["runs"][0]
    del run["seal"]  # the counts still reproduce, so only the log can tell the entry was rewritten
    (root / "results.json").write_bytes(canonical_json(results))
    code, err = _build(root, tmp_path / "site", capsys)
    assert code == 2, err
    line = (root / "publications.jsonl").read_text(encoding="utf-8")
    column = line.index(f'"{run["run"]}":') + len(f'"{run["run"]}":') + 1
    assert (f"{root / 'publications.jsonl'}:1:{column}: /results/{run['run']}: error: the results entry of run \"{run['run']}\" in "
            f"{root / 'results.json'} has the SHA-256 {_entry_digest(run)}, not the one sealed publication 1 (2026-12-01)") in err
    assert "[publication.run-changed]" in err


def test_check_log_results_works_from_published_digests(root, capsys):
    _seal(root, "2026-12-01", capsys)
    log = (root / "publications.jsonl").read_bytes()
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    current = {r["run"]: _entry_digest(r) for r in results["runs"]}
    assert check_log_results(log, current) == []
    dropped = dict(current)
    gone = dropped.popitem()[0]
    assert [(d.code, d.pointer) for d in check_log_results(log, dropped)] == [("publication.run-dropped", f"/results/{gone}")]


def test_without_a_log_the_downloads_page_says_nothing_was_sealed(tmp_path, root, capsys):
    out = tmp_path / "site"
    assert _build(root, out, capsys)[0] == 0
    assert not (out / "downloads" / "publications.jsonl").exists()
    assert "No publication has been sealed" in (out / "en" / "downloads.html").read_text(encoding="utf-8")
    assert "Ingen publicering har förseglats" in (out / "sv" / "downloads.html").read_text(encoding="utf-8")


def test_the_chain_can_be_followed_by_hand_with_the_pages_commands(tmp_path, root, capsys):
    _seal(root, "2026-12-01", capsys)
    _republish(root)
    _seal(root, "2026-12-02", capsys)
    out = tmp_path / "site"
    assert _build(root, out, capsys)[0] == 0
    downloads = out / "downloads"
    page = (out / "en" / "downloads.html").read_text(encoding="utf-8")
    section = page[page.index('id="log-heading"'):]
    blocks = [html.unescape(c) for c in re.findall(r'<pre class="wrap"><code>(.*?)</code></pre>', section, re.S)]

    def sh(command: str) -> str:
        done = subprocess.run(["sh", "-c", command], cwd=downloads, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    first, second = (downloads / "publications.jsonl").read_text(encoding="utf-8").splitlines()
    follow = next(b for b in blocks if b.startswith("sha256sum SAVED-SHA256SUMS")).splitlines()
    old_sums = json.loads(first)["sha256sums"]
    shutil.copyfile(downloads / "publications" / f"{old_sums}.SHA256SUMS", downloads / "SAVED-SHA256SUMS")
    assert sh(follow[0]).split()[0] == old_sums
    assert sh(follow[1].replace("HASH", old_sums)).startswith("1:")
    line_digest = sh(follow[2].replace("K", "1")).split()[0]
    assert sh(follow[3].replace("HASH", line_digest)).startswith("2:"), "the next line names the saved one as previous"
    today = next(b for b in blocks if b.startswith("sha256sum SHA256SUMS")).splitlines()
    assert sh(today[0]).split()[0] == json.loads(sh(today[1]))["sha256sums"]
    digest = next(b for b in blocks if b.startswith("python3 -c"))
    run_id = next(iter(json.loads(second)["results"]))
    assert sh(digest.replace(" RUN", f" {run_id}")).strip() == json.loads(second)["results"][run_id]


_SEAL_WITH_A_SIZE_LIMIT = r"""
import resource, signal, sys
from sitegen.cli import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails (EFBIG) as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))  # the stored SHA256SUMS and the log are longer
sys.exit(main(["seal", "--records", sys.argv[1], "--date", "2026-12-01"]))
"""


def test_a_seal_that_cannot_be_written_leaves_the_records_as_they_were(root):
    """Sealing writes the stored SHA256SUMS and the log beside, then renames them into place: when the disk cannot take
    them (here a file size limit, in a child process) no half-written or temporary file is left among the records."""
    import sys

    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    done = subprocess.run([sys.executable, "-c", _SEAL_WITH_A_SIZE_LIMIT, str(root)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "File too large" in done.stderr and "Traceback" not in done.stderr, done.stderr
    after = sorted(p.relative_to(root) for p in root.rglob("*"))
    assert [p for p in after if p not in before] in ([], [Path("publications")]), "nothing written but maybe its empty folder"
    assert not any((root / p).is_file() and p not in before for p in after)
