"""`sitegen build` as a whole: it checks everything before writing, swaps in one step, and gives the same bytes every time."""

import datetime
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.load.schema import served_schema
from babel.dates import format_date

import sitegen.build
import sitegen.publish.site
from sitegen.build import build_site
from sitegen.core.errors import OutFolderError, WriteError
from sitegen.core.model import Run
from sitegen.publish.croissant import CROISSANT
from sitegen.publish.tables import CASE_TABLE, METADATA, measure_table
from sitegen.render.plan import CASE_CHUNK, RUN_TASK_PARTS, page_tasks, short_task, spread
from sitegen.score.measures.registry import MEASURES
from sitegen.cli import main

REPO = Path(__file__).resolve().parent.parent
RECORDS = REPO / "records"
SMALL = Path(__file__).resolve().parent / "data" / "records-small"
UNPUBLISHED = "2026-10-10-trial"


def tree(root: Path) -> dict[str, str]:
    """Every file and folder under root with the SHA-256 of its bytes, so two trees compare byte for byte."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        found[rel] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def copy_records(target: Path, *, reverse: bool = False) -> Path:
    """A copy of the bundled records, its files created in name order or in reverse."""
    target.mkdir(parents=True)
    for source in sorted(RECORDS.rglob("*"), key=lambda p: p.relative_to(RECORDS).as_posix(), reverse=reverse):
        if source.is_file():
            (target / source.relative_to(RECORDS)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target / source.relative_to(RECORDS))
    return target


def dump(path: Path, value) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def bundled_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundled") / "site"
    build_site(RECORDS, out)
    return out


def _diagnostics(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.strip()]


# --- (a) every problem at once, and nothing written -------------------------------------------


def test_four_problems_in_four_places_are_all_reported_and_the_old_site_stays(tmp_path, capsys, bundled_site):
    out = tmp_path / "site"
    shutil.copytree(bundled_site, out)
    before = tree(out)
    root = copy_records(tmp_path / "records")

    runs = json.loads((root / "runs.json").read_text(encoding="utf-8"))
    runs["runs"][1]["engine_versoin"] = "granska 2026.09.0"  # an unknown field
    dump(root / "runs.json", runs)
    cases = json.loads((root / "cases.json").read_text(encoding="utf-8"))
    cases["case_versions"][3]["key"]["expected"][0]["rules"] = ["R-FINNS-EJ-9"]  # a rule the case does not have
    cases["case_versions"].append(json.loads(json.dumps(cases["case_versions"][1])))  # a second case version with the same id
    duplicate_index = len(cases["case_versions"]) - 1
    duplicate_id = cases["case_versions"][1]["id"]
    dump(root / "cases.json", cases)
    broken = (root / "answers-unpublished.json").read_text(encoding="utf-8").replace('"answers": [', '"answers": [,', 1)
    (root / "answers-unpublished.json").write_text(broken, encoding="utf-8")  # malformed JSON

    code = main(["build", "--records", str(root), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    lines = _diagnostics(err)
    located = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?:(?P<pointer>/\S*): )?(?:error|note): .+ \[(?P<code>[a-z.-]+)\]$")
    parsed = [located.match(line) for line in lines]
    assert all(parsed), lines
    by_code = {p["code"]: p for p in parsed}
    assert set(by_code) >= {"record.unknown-field", "record.dangling-rule", "record.duplicate-id", "json.syntax"}

    assert by_code["record.unknown-field"]["path"] == str(root / "runs.json")
    assert by_code["record.unknown-field"]["pointer"] == "/runs/1/engine_versoin"
    assert by_code["record.dangling-rule"]["path"] == str(root / "cases.json")
    assert by_code["record.dangling-rule"]["pointer"] == "/case_versions/3/key/expected/0/rules/0"
    assert "R-FINNS-EJ-9" in next(line for line in lines if "[record.dangling-rule]" in line)
    assert by_code["record.duplicate-id"]["path"] == str(root / "cases.json")
    assert by_code["record.duplicate-id"]["pointer"] == f"/case_versions/{duplicate_index}/id"
    assert duplicate_id in next(line for line in lines if "[record.duplicate-id]" in line)
    syntax = by_code["json.syntax"]
    assert syntax["path"] == str(root / "answers-unpublished.json")
    # the place named is where the stray comma stands
    line_text = broken.split("\n")[int(syntax["line"]) - 1]
    assert line_text[int(syntax["col"]) - 1] == ","

    assert tree(out) == before, "a refused build must leave the old site byte for byte as it was"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records", "site"], "no temporary folder may stay behind"


# --- (b) a failure while writing --------------------------------------------------------------


def _no_room_for_a_link(*args, **kwargs):
    raise OSError(28, "No space left on device")


def test_a_failure_midway_through_writing_leaves_the_previous_site_and_no_temporary_folder(tmp_path, monkeypatch, bundled_site):
    parent = tmp_path / "public"
    parent.mkdir()
    out = parent / "site"
    shutil.copytree(bundled_site, out)
    before = tree(out)
    written = []
    real = sitegen.publish.site._written  # every file the writer writes (rather than links) is written by it

    def failing(target, data):
        if len(written) == 40:
            raise OSError(28, "No space left on device")
        written.append(target)
        return real(target, data)

    monkeypatch.setattr(sitegen.publish.site, "_written", failing)
    monkeypatch.setattr(sitegen.publish.site.os, "link", _no_room_for_a_link)  # unchanged files are linked: not on a full disk
    with pytest.raises(WriteError) as caught:
        build_site(RECORDS, out)
    assert len(written) == 40, "the failure happened midway, after some files were written"
    [problem] = caught.value.diagnostics
    assert problem.path.startswith(f"{parent}/.site.tmp-") and problem.path.endswith(".html"), "placed at the file that failed"
    assert (problem.message, problem.code) == ("cannot write: no space left on device; the previous site is untouched", "site.write-failed")
    assert tree(out) == before
    assert [p.name for p in parent.iterdir()] == ["site"]


def test_a_full_disk_on_the_command_line_is_one_placed_line_and_exit_1(tmp_path, monkeypatch, capsys):
    """Disk full is the environment's fault, not the records': exit 1 as for every such failure, never a traceback."""
    import errno

    out = tmp_path / "site"
    assert main(["build", "--records", str(SMALL), "--out", str(out), "--quiet"]) == 0
    before = tree(out)
    real = sitegen.publish.site._written  # every file the writer writes (rather than links) is written by it

    def full(target, data):
        if target.endswith("/index.html") and "/en/" in target:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, data)

    monkeypatch.setattr(sitegen.publish.site, "_written", full)
    monkeypatch.setattr(sitegen.publish.site.os, "link", _no_room_for_a_link)
    code = main(["build", "--records", str(SMALL), "--out", str(out), "--quiet"])
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert re.fullmatch(rf"{re.escape(str(tmp_path))}/\.site\.tmp-\w+/en/\S*index\.html: error: cannot write: no space left on "
                        r"device; the previous site is untouched \[site\.write-failed\]\n", err), err
    assert tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["site"]


# --- (c) determinism --------------------------------------------------------------------------


def _generated(records: Path) -> Path:
    """40 case versions, 2 runs of 2 repetitions, scored: enough case versions that --jobs 2 renders in workers."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import generate
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    assert generate.main([str(records), "--case-versions", "40", "--runs", "2", "--repetitions", "2"]) == 0
    assert main(["score", "--all", "--records", str(records)]) == 0
    return records


def test_two_worker_processes_build_the_same_bytes_as_one(tmp_path):
    """With --jobs 2 the case and run pages are rendered and written by workers; the site must not change by a byte."""
    records = _generated(tmp_path / "records")
    one = build_site(records, tmp_path / "one", jobs=1)
    two = build_site(records, tmp_path / "two", jobs=2)
    assert one.pages == two.pages > 40 * 3 * 2, "every case version has its page and one per run, in both languages"
    assert tree(tmp_path / "one") == tree(tmp_path / "two")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "records", "two"], "no staging folder is left behind"



def test_with_two_jobs_the_building_process_renders_short_tasks_beside_one_worker(tmp_path, monkeypatch):
    """Every process forked from the building one ends up with its own copy of most of what it touches, so two jobs are
    this process and one worker; this process takes only chunks of case versions (a long task here would leave the
    worker without work), and the site is the same bytes as one process builds."""
    import sitegen.render.pages as pages

    records, noted = _generated(tmp_path / "records"), tmp_path / "noted"
    original = pages.render_in_worker

    def render(job, task):
        with noted.open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {task[0]}\n")
        return original(job, task)

    monkeypatch.setattr(pages, "render_in_worker", render)
    build_site(records, tmp_path / "two", jobs=2)
    rows = [line.split() for line in noted.read_text(encoding="utf-8").splitlines()]
    here = {kind for pid, kind in rows if int(pid) == os.getpid()}
    assert len({pid for pid, _ in rows}) == 2, "this process and one worker"
    assert here and here <= {"case", "case-run"}, here
    assert {"shared", "run"} <= {kind for pid, kind in rows if int(pid) != os.getpid()}
    build_site(records, tmp_path / "one", jobs=1)
    assert tree(tmp_path / "one") == tree(tmp_path / "two")


def _run(run_id: str) -> Run:
    return Run(run_id, "2026-01-01", "setup", "suite", 1, 7, "structured", 1, 1, 1, 1, "policy", "1.0", 3, True, "completed")


def test_the_building_process_has_short_tasks_beside_every_long_one_and_a_runs_tasks_stay_together():
    """Results come back in order, so a stretch of long tasks (a run's own pages; a run kept in summary only has nothing
    else) leaves the building process, which takes short ones only, waiting for its worker: the case pages are shared out
    between the runs and each run's long tasks spread among its short ones; a run's tasks stay together (its answers are
    unpacked once), and every page is still rendered once."""
    runs = [_run(f"run-{n}") for n in range(4)]
    case_ids = [f"cv-{n:03}" for n in range(4 * RUN_TASK_PARTS * CASE_CHUNK + 3)]  # 33 chunks: 8 or 9 for each run
    tasks = page_tasks(case_ids, runs, {cv: tuple(runs) for cv in case_ids}, detail=lambda cv, run: run == "run-3")
    assert [cv for kind, _, chunk in tasks if kind == "case" for cv in chunk] == case_ids, "every case page once, in order"
    assert [cv for kind, _, chunk in tasks if kind == "case-run" for cv in chunk] == case_ids, "only run-3 in detail"
    assert [task for task in tasks if task[0] == "run"] == [("run", run.id, (part,)) for run in runs for part in range(RUN_TASK_PARTS)]
    assert not [n for n in range(1, len(tasks)) if not short_task(tasks[n - 1]) and not short_task(tasks[n])], \
        "no two long tasks in a row"
    starts = []
    for run in runs:
        at = [n for n, (_, run_id, _) in enumerate(tasks) if run_id == run.id]
        assert all(tasks[n][0] == "case" for n in range(at[0], at[-1] + 1) if n not in at), f"{run.id}'s tasks together"
        starts.append(at[0])
    shares = [sum(1 for task in tasks[start:end] if task[0] == "case") for start, end in zip(starts, starts[1:] + [len(tasks)])]
    assert starts[0] == 0 and max(shares) - min(shares) <= 1, f"the case pages shared out evenly between the runs: {shares}"
    assert page_tasks(case_ids, [], {}) == [("case", None, case_ids[i : i + CASE_CHUNK]) for i in range(0, len(case_ids), CASE_CHUNK)]


@pytest.mark.parametrize("long, short", [(3, 10), (3, 2), (8, 8), (0, 5), (4, 0), (1, 1)])
def test_spread_puts_each_long_task_ahead_of_an_even_share_of_the_short_ones(long, short):
    tasks = spread([f"L{n}" for n in range(long)], [f"s{n}" for n in range(short)])
    assert [t for t in tasks if t[0] == "L"] == [f"L{n}" for n in range(long)]
    assert [t for t in tasks if t[0] == "s"] == [f"s{n}" for n in range(short)]
    if long:
        assert tasks[0] == "L0", "a long task first, so a worker starts on it while the short ones are taken"
        stretches = [len(stretch) for stretch in "".join("|" if t[0] == "L" else "." for t in tasks).split("|")[1:]]
        assert max(stretches) - min(stretches) <= 1, stretches


def _killed_in_workers(original):
    """Render as usual in this process (which renders short tasks too), and be killed in a worker, as the system ends one
    when memory runs out."""
    building = os.getpid()

    def render(job, task):
        if os.getpid() == building:
            return original(job, task)
        os.kill(os.getpid(), signal.SIGKILL)
    return render


def test_a_worker_killed_while_rendering_is_one_line_and_the_previous_site_stays(tmp_path, capsys, monkeypatch):
    import sitegen.render.pages as pages

    records, out = _generated(tmp_path / "records"), tmp_path / "site"
    assert main(["build", "-q", "--records", str(records), "--out", str(out), "--detail-runs", "1"]) == 0
    before = tree(out)
    capsys.readouterr()
    monkeypatch.setattr(pages, "render_in_worker", _killed_in_workers(pages.render_in_worker))
    code = main(["build", "-q", "--records", str(records), "--out", str(out), "--jobs", "2"])  # every run in detail: pages change
    outs, err = capsys.readouterr()
    assert code == 1 and outs == ""  # the worker may die before or after its task reached it: either is said
    assert re.fullmatch(r"error: worker process \d+ ended (?:while it had|before it took) a task: it was killed by SIGKILL \(.*memory.*\)\n", err), err
    assert tree(out) == before, "the previous site stays as it was"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records", "site"], "no staging folder is left behind"


def _terminating_once(original, marker: Path):
    """A worker's task that first tells the build's main process to stop (SIGTERM, as a job's time limit or `kill` does),
    once for the whole build, then does its work; it writes down its process id so the test can see it has ended. The
    building process, which renders short tasks too, only renders."""
    building = os.getpid()

    def render(job, task):
        if os.getpid() == building:
            return original(job, task)
        with open(marker.with_suffix(".pids"), "a") as pids:
            print(os.getpid(), file=pids)
        try:
            marker.touch(exist_ok=False)
        except FileExistsError:
            pass
        else:
            os.kill(building, signal.SIGTERM)
        return original(job, task)
    return render


def test_a_build_told_to_stop_while_rendering_cleans_up_and_says_so(tmp_path, capsys, monkeypatch):
    import multiprocessing

    import sitegen.render.pages as pages

    records, out = _generated(tmp_path / "records"), tmp_path / "site"
    assert main(["build", "-q", "--records", str(records), "--out", str(out), "--detail-runs", "1"]) == 0
    before, handler = tree(out), signal.getsignal(signal.SIGTERM)
    capsys.readouterr()
    marker = tmp_path / "told"
    monkeypatch.setattr(pages, "render_in_worker", _terminating_once(pages.render_in_worker, marker))
    code = main(["build", "-q", "--records", str(records), "--out", str(out), "--jobs", "2"])  # every run in detail: pages change
    outs, err = capsys.readouterr()
    assert marker.exists(), "a worker told the build to stop"
    assert (code, outs, err) == (143, "", "terminated\n"), "128 + SIGTERM, as a shell reports it; one line, no traceback"
    assert tree(out) == before, "the previous site stays as it was"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records", "site", "told", "told.pids"], "no staging folder is left"
    assert multiprocessing.active_children() == [], "the workers were stopped"
    for pid in {int(p) for p in marker.with_suffix(".pids").read_text().split()}:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert signal.getsignal(signal.SIGTERM) == handler, "the handler the command found is restored"


def test_a_build_in_one_process_told_to_stop_writes_nothing(tmp_path, capsys, monkeypatch):
    records, out = _generated(tmp_path / "records"), tmp_path / "site"
    original = sitegen.build.changelog_phase
    capsys.readouterr()

    def told_to_stop(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return original(*args, **kwargs)

    monkeypatch.setattr(sitegen.build, "changelog_phase", told_to_stop)
    code = main(["build", "--records", str(records), "--out", str(out)])
    outs, err = capsys.readouterr()
    assert (code, outs, err) == (143, "", "terminated\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records"], "nothing written, nothing staged"


def test_a_build_failing_while_workers_render_stops_them_before_removing_what_they_write_in(tmp_path, capsys, monkeypatch):
    """The workers write pages into the staged folder themselves: on a failure in the main process they must be stopped
    before that folder is removed, or a page written after the removal leaves a staged folder behind."""
    import multiprocessing

    import sitegen.publish.site as site
    from sitegen.core.errors import Diagnostic, PublicationError

    records, out = _generated(tmp_path / "records"), tmp_path / "site"
    assert main(["build", "-q", "--records", str(records), "--out", str(out), "--detail-runs", "1"]) == 0
    before = tree(out)
    capsys.readouterr()
    checked_off, original = [0], site._Writer.check_off

    def failing(self, item):  # a page the workers wrote, refused in the main process while they go on rendering
        checked_off[0] += 1
        if checked_off[0] == 30:
            raise PublicationError([Diagnostic(item.path, None, None, None, "refused here", "test.refused")])
        return original(self, item)

    alive_at_removal: list = []
    remove_tree = site.remove_tree

    def removing(folder, **kwargs):
        alive_at_removal.append(multiprocessing.active_children())
        return remove_tree(folder, **kwargs)

    monkeypatch.setattr(site._Writer, "check_off", failing)
    monkeypatch.setattr(site, "remove_tree", removing)
    code = main(["build", "-q", "--records", str(records), "--out", str(out), "--jobs", "2"])
    assert (code, capsys.readouterr().err.count("refused here")) == (2, 1)
    assert alive_at_removal == [[]], "no worker is left when the staged folder is removed"
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records", "site"]


def _epoch(day: datetime.date) -> str:
    return str(int(datetime.datetime(day.year, day.month, day.day, 12, tzinfo=datetime.timezone.utc).timestamp()))


def _build_in_subprocess(records: Path, out: Path, env: dict[str, str]) -> subprocess.Popen:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONHASHSEED", "TZ", "LANG", "LC_ALL", "LC_TIME", "SOURCE_DATE_EPOCH")}
    return subprocess.Popen([sys.executable, "-m", "sitegen", "build", "-q", "--records", str(records), "--out", str(out)],
                            cwd=REPO, env={**base, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _without(data: bytes, day: datetime.date) -> bytes:
    """The bytes with every way the build may write its date replaced by one marker."""
    text = data.decode("utf-8")
    for form in (day.isoformat(), format_date(day, "medium", locale="sv"), format_date(day, "medium", locale="en")):
        text = text.replace(form, "<BUILD-DATE>")
    return text.encode("utf-8")


def test_the_build_date_is_never_before_the_newest_published_run():
    """Every footer reads "Data up to" the build date: an epoch before the newest run would date the data too early."""
    from types import SimpleNamespace

    records = SimpleNamespace(published_runs=[SimpleNamespace(date=d) for d in ("2026-08-18", "2026-12-01", "2026-09-02")])
    stamp = sitegen.build.build_date
    assert stamp(records, {"SOURCE_DATE_EPOCH": _epoch(datetime.date(2025, 12, 1))}) == "2026-12-01"
    assert stamp(records, {"SOURCE_DATE_EPOCH": _epoch(datetime.date(2026, 12, 4))}) == "2026-12-04"
    assert stamp(records, {}) == "2026-12-01"
    assert stamp(SimpleNamespace(published_runs=[]), {"SOURCE_DATE_EPOCH": _epoch(datetime.date(2025, 12, 1))}) == "2025-12-01"


def test_builds_are_byte_identical_whatever_the_environment_and_only_the_epoch_moves_the_date(tmp_path):
    first_day, second_day = datetime.date(2031, 1, 15), datetime.date(2032, 3, 17)
    forward = copy_records(tmp_path / "forward")
    backward = copy_records(tmp_path / "backward", reverse=True)
    jobs = [
        _build_in_subprocess(forward, tmp_path / "a", {"PYTHONHASHSEED": "1", "TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                                                       "SOURCE_DATE_EPOCH": _epoch(first_day)}),
        _build_in_subprocess(backward, tmp_path / "b", {"PYTHONHASHSEED": "4242", "TZ": "Pacific/Kiritimati", "LANG": "sv_SE.UTF-8",
                                                        "LC_ALL": "sv_SE.UTF-8", "SOURCE_DATE_EPOCH": _epoch(first_day)}),
        _build_in_subprocess(forward, tmp_path / "c", {"PYTHONHASHSEED": "7", "TZ": "America/Los_Angeles", "LANG": "en_US.UTF-8",
                                                       "SOURCE_DATE_EPOCH": _epoch(second_day)}),
    ]
    for job in jobs:
        out, err = job.communicate(timeout=600)
        assert job.returncode == 0, err

    a, b, c = (tree(tmp_path / name) for name in "abc")
    assert a == b, sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))[:10]

    assert set(a) == set(c), "another date may not add or remove files"
    moved = sorted(k for k in a if a[k] != c[k])
    assert "changelog.atom" in moved, "the feed's updated stamp follows SOURCE_DATE_EPOCH"
    for rel in moved:
        old, new = (tmp_path / "a" / rel).read_bytes(), (tmp_path / "c" / rel).read_bytes()
        assert _without(old, first_day) == _without(new, second_day), f"{rel} differs in more than the build date"
        assert second_day.isoformat().encode() in new or format_date(second_day, "medium", locale="en").encode() in new \
            or format_date(second_day, "medium", locale="sv").encode() in new


def test_a_malformed_source_date_epoch_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    code = main(["build", "--records", str(RECORDS), "--out", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert code == 2 and "SOURCE_DATE_EPOCH" in err and "Traceback" not in err
    assert not (tmp_path / "site").exists()


# --- (d) stale results ------------------------------------------------------------------------


def test_a_tampered_count_in_results_fails_naming_run_and_pointer(tmp_path, capsys):
    root = copy_records(tmp_path / "records")
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    index = next(i for i, r in enumerate(results["runs"]) if r["run"] == "2026-09-16-release")
    measure = next(i for i, x in enumerate(results["runs"][index]["measures"]) if x["measure"] == "GROUNDING")
    results["runs"][index]["measures"][measure]["passed"] -= 1
    (root / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")

    code = main(["build", "--records", str(root), "--out", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert code == 2
    (line,) = _diagnostics(err)
    assert line.endswith("[results.stale]")
    assert "2026-09-16-release" in line
    assert f"/runs/{index}/measures/{measure}/passed" in line
    assert line.startswith(str(root / "results.json"))
    assert not (tmp_path / "site").exists()


# --- (e) internal fields ----------------------------------------------------------------------


def _with_cost_in_answers(tmp_path: Path) -> tuple[Path, int]:
    root = copy_records(tmp_path / "records")
    answers = json.loads((root / "answers.json").read_text(encoding="utf-8"))
    index = 7
    answers["answers"][index]["cost_sek"] = 0.42
    dump(root / "answers.json", answers)
    return root, index


def test_an_internal_field_in_a_published_file_is_refused_with_file_and_pointer(tmp_path, capsys):
    root, index = _with_cost_in_answers(tmp_path)
    code = main(["build", "--records", str(root), "--out", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert code == 2
    refused = [line for line in _diagnostics(err) if line.endswith("[publish.internal-field]")]
    assert len(refused) == 1, err
    assert refused[0].startswith(str(root / "answers.json") + ":")
    assert f": /answers/{index}/cost_sek: " in refused[0]
    assert not (tmp_path / "site").exists()


def test_an_internal_field_causes_no_false_follow_on_problems(tmp_path, capsys):
    """Every answer is still there: the only problem to report is the internal field itself."""
    root, _ = _with_cost_in_answers(tmp_path)
    code = main(["build", "--records", str(root), "--out", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert code == 2
    assert [line.rsplit(" [", 1)[1] for line in _diagnostics(err) if ": error: " in line] == ["publish.internal-field]"], err


def test_internal_fields_in_unpublished_records_never_reach_the_site(bundled_site):
    runs = json.loads((RECORDS / "runs.json").read_text(encoding="utf-8"))["runs"]
    internal = [r["internal"] for r in runs if "internal" in r]
    locations = [i["storage_location"] for i in internal if "storage_location" in i]
    locations += [str(i["cost_sek"]) for i in internal if "cost_sek" in i]
    assert locations, "the bundled runs.json carries internal fields, so this test means something"
    for path in bundled_site.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for location in locations:
                assert location.encode() not in data, f"{path} holds the storage location {location}"


# --- (f) the unpublished run ------------------------------------------------------------------


def test_the_unpublished_run_appears_in_no_file_of_the_site(bundled_site):
    runs = {r["id"]: r for r in json.loads((RECORDS / "runs.json").read_text(encoding="utf-8"))["runs"]}
    assert runs[UNPUBLISHED]["published"] is False
    files = [p for p in bundled_site.rglob("*") if p.is_file()]
    assert len(files) > 100
    for path in files:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        assert UNPUBLISHED.encode() not in data, path
        assert UNPUBLISHED.encode("utf-16-le") not in data, path
        assert UNPUBLISHED not in path.as_posix()


# --- (g) downloads ----------------------------------------------------------------------------


def test_every_download_is_the_exact_bytes_of_its_source(bundled_site):
    config = json.loads((RECORDS / "sitegen.json").read_text(encoding="utf-8"))
    sources = {p["name"]: RECORDS / p["record"] for p in config["publish"]}
    sources.update({f"schemas/{p.name}": p for p in (REPO / "sitegen" / "schemas").glob("*.schema.json")})
    sources.update({f"metadata/changelog/{p.name}": p for p in (RECORDS / "changelog").glob("*.md")})
    # written from the records with the published runs only (tests/test_public_metadata.py), so not their bytes
    written = {"metadata/runs.json", "metadata/setups.json", "metadata/sitegen.json"}
    downloads = bundled_site / "downloads"
    served = {p.relative_to(downloads).as_posix() for p in downloads.rglob("*") if p.is_file()} - {"SHA256SUMS"}
    runs = json.loads((RECORDS / "runs.json").read_text(encoding="utf-8"))["runs"]
    exports = {measure_table(measure) for measure in MEASURES} | {CASE_TABLE, METADATA, CROISSANT}
    exports |= {f"every-eval-ever-{r['id']}.json" for r in runs if r["published"]}  # the standard exports, made by the build
    # beside SHA256SUMS, not listed in it since they check it: the publication log with every SHA256SUMS it names
    checking = {p.relative_to(RECORDS).as_posix(): p for p in [RECORDS / "publications.jsonl", RECORDS / "allowed_signers",
                                                              *sorted((RECORDS / "publications").glob("*"))] if p.is_file()}
    assert served == set(sources) | written | exports | set(checking)
    sources.update(checking)
    for name, source in sources.items():
        wanted = source.read_bytes()
        if name.startswith("schemas/"):  # the shipped schema with its $id the URL it is served at
            wanted = served_schema(wanted, config["base_url"])
        assert (downloads / name).read_bytes() == wanted, name


def test_sha256sum_checks_the_downloads_and_catches_one_flipped_byte(bundled_site, tmp_path):
    if shutil.which("sha256sum") is None:
        pytest.skip("coreutils sha256sum is not installed")
    ok = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=bundled_site / "downloads", capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    listed = [line.split("  ", 1)[1] for line in (bundled_site / "downloads" / "SHA256SUMS").read_text().splitlines()]
    assert len(ok.stdout.splitlines()) == len(listed) and all(line.endswith(": OK") for line in ok.stdout.splitlines())

    copy = tmp_path / "downloads"
    shutil.copytree(bundled_site / "downloads", copy)
    victim = copy / "granska-quality-results.json"
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    bad = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=copy, capture_output=True, text=True)
    assert bad.returncode != 0
    assert "granska-quality-results.json: FAILED" in bad.stdout


def test_no_page_shows_a_percentage(bundled_site):
    """Counts are "passed of observed", never turned into percentages (repetitions are not independent)."""
    import re
    from html.parser import HTMLParser

    class Text(HTMLParser):
        def __init__(self):
            super().__init__()
            self.parts = []
            self.skip = 0

        def handle_starttag(self, tag, attrs):
            self.skip += tag in ("style", "script")

        def handle_endtag(self, tag):
            self.skip -= tag in ("style", "script")

        def handle_data(self, data):
            if not self.skip:
                self.parts.append(data)

    pages = list(bundled_site.rglob("*.html"))
    assert len(pages) > 100
    for page in pages:
        parser = Text()
        parser.feed(page.read_text(encoding="utf-8"))
        text = " ".join(parser.parts)
        assert not re.search(r"\d\s*(%|procent|percent)", text), page


def test_documents_and_engine_text_are_marked_with_their_language(bundled_site):
    """WCAG 3.1.2: the Swedish documents, rules and engine wording on English pages carry lang="sv"."""
    case = (bundled_site / "en" / "cases" / "cu" / "cure-unchecked" / "index.html").read_text(encoding="utf-8")
    assert '<ol class="document" lang="sv">' in case
    assert '<dd lang="sv">' in case  # rule texts
    # and their titles, written in the rules' language too (before: an unmarked Swedish title on an English page)
    titles = re.findall(r'<dt id="rule-[^"]+"><code>[^<]+</code> (.*?)</dt>', case)
    assert titles and all(re.fullmatch(r'<span lang="sv">[^<]+</span>', title) for title in titles), titles
    answer = (bundled_site / "en" / "cases" / "cu" / "cure-unchecked" / "2026-09-16-release.html").read_text(encoding="utf-8")
    assert re.search(r'</ol><p lang="sv">[^<]', answer)  # a finding's wording, after its lines
    # a quote is shown marked in its lines (and as a quotation too only when it is not the document's text verbatim)
    assert '<ol class="excerpt" lang="sv">' in answer


def test_every_observation_that_did_not_pass_is_explained_on_the_case_pages_it_concerns(bundled_site):
    """METHOD.md: every failed observation is traceable to run, case version, repetition and stage, with its reason,
    "so that a reader can open the case and see why": each one's reason, worded in the page's language from its structured
    reason, stands in the section of the first repetition it concerns (and the results file's English detail does not),
    or, where a row of that repetition shows it as it is (a prohibited finding, a quote not found, an expected finding
    missed), links that row; the section of a pair's second repetition names the observation and links to that reason
    (issue 15, page weight)."""
    from collections import Counter

    results = json.loads((RECORDS / "results.json").read_text(encoding="utf-8"))
    pairs = {}
    for case in json.loads((RECORDS / "cases.json").read_text(encoding="utf-8")).get("pairs", []):
        pairs[case["id"]] = case["versions"]
    concerned = Counter()
    linked = Counter()
    details = {}
    for run in results["runs"]:
        for o in run["observations"]:
            versions = pairs[o["subject"]] if o["measure"] == "INVARIANT_PAIRS" else [o["case_version"]]
            for cv in versions:
                first, *others = o["repetition"].split("-")
                concerned[(run["run"], cv, first)] += 1
                for rep in (first, *others):
                    details.setdefault((run["run"], cv, rep), []).append(o["detail"])
                for rep in others:
                    linked[(run["run"], cv, rep)] += 1
                    concerned.setdefault((run["run"], cv, rep), 0)
    for (run, cv, rep), count in concerned.items():
        for lang in ("sv", "en"):
            html = (bundled_site / lang / "cases" / cv[:2] / cv / f"{run}.html").read_text(encoding="utf-8")
            section = html[html.index(f'<h2 id="r{rep}"'):]
            section = re.sub(r'<ul class="reason-differences">.*?</ul>', "", section, flags=re.S)
            section = section[: section.index("</ul>", section.index(f'id="r{rep}-why"'))]
            # an item lists the observations alike but for their stage once, naming each stage (a link to its section)
            items = re.findall(r'<li><span class="st-.*?(?=<li><span class="st-|$)', section, re.S)
            # and an invariance pair's, which compares every stage and the merge, names its pair instead of a stage
            heads = [item.split('<div class="reason">')[0] for item in items]
            stages = [len(re.findall(rf'<a href="#r{rep}-[a-z]+">', head)) or len(re.findall(r", (?:pair|paret) <code>", head))
                      for head in heads]
            rows = [re.findall(rf'</a>, <a href="#(r{rep}-[a-z]+-[^"]+)">', item) for item in items]
            assert sum(n for item, n, row in zip(items, stages, rows) if '<div class="reason">' in item or row) == count, (run, cv, rep, lang)
            for row in (r for found in rows for r in found):
                # the row linked instead of a reason is on the page and says the observation did not pass
                if f'<tr id="{row}">' not in html:  # a repeated answer's anchor, leading on to the row that shows it
                    row = re.search(rf'<a id="{row}" href="#([^"]+)">', html).group(1)
                shown = html[html.index(f'<tr id="{row}">'):]
                assert 'class="st-block' in shown[: shown.index("</tr>")], (run, cv, rep, lang, row)
            explained = '-why">' + ("repetition" if lang == "en" else "upprepning")
            assert sum(n for item, n in zip(items, stages) if explained in item) == linked[(run, cv, rep)], (run, cv, rep, lang)
            assert all(n >= 1 for n in stages), (run, cv, rep, lang)
            assert not any(detail in section for detail in details[(run, cv, rep)]), (run, cv, rep, lang)
    assert len(concerned) > 20


# --- (h) where the site goes: checked before a record is read ---------------------------------


def _everything(root: Path) -> dict[str, str]:
    """Like tree(), for a file too: what stands at root, byte for byte."""
    return tree(root) if root.is_dir() else {"": hashlib.sha256(root.read_bytes()).hexdigest()}


def _records_and(tmp_path: Path, kind: str) -> tuple[Path, Path]:
    """A copy of the small records in tmp_path/data/records and the out path a refusal of `kind` names."""
    records = tmp_path / "data" / "records"
    shutil.copytree(SMALL, records)
    if kind == "records":
        return records, records
    if kind == "inside-records":
        return records, records / "changelog"
    if kind == "holding-records":
        return records, tmp_path / "data"
    if kind == "file":
        (tmp_path / "notes.txt").write_bytes(b"my notes\n")
        return records, tmp_path / "notes.txt"
    if kind == "not-a-site":
        (tmp_path / "mine").mkdir()
        (tmp_path / "mine" / "important.txt").write_bytes(b"keep me\n")
        return records, tmp_path / "mine"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind, code", [
    ("records", "out.records-folder"),
    ("inside-records", "out.records-folder"),
    ("holding-records", "out.records-folder"),
    ("file", "out.not-a-folder"),
    ("not-a-site", "out.not-a-site"),
])
def test_an_out_path_that_may_not_be_replaced_is_refused_before_any_record_is_read(tmp_path, monkeypatch, kind, code):
    records, out = _records_and(tmp_path, kind)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # a working folder no out path holds
    before, beside = _everything(out), sorted(p.name for p in out.parent.iterdir())

    def never(*args, **kwargs):
        raise AssertionError("the records were read although the out path is refused")

    monkeypatch.setattr(sitegen.build, "check_records", never)
    with pytest.raises(OutFolderError) as caught:
        build_site(records, out)
    (problem,) = caught.value.diagnostics
    assert problem.code == code
    assert caught.value.lines()[0].startswith(f"{out}: error: ")
    assert _everything(out) == before, "what stands at the out path is untouched, byte for byte"
    assert sorted(p.name for p in out.parent.iterdir()) == beside, "no temporary folder is left beside it"
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("name", [".", "..", "bad/.."])
def test_the_working_folder_and_its_parents_are_refused_before_any_record_is_read(tmp_path, monkeypatch, name):
    work = tmp_path / "public" / "work"
    work.mkdir(parents=True)
    (work / "important.txt").write_bytes(b"keep me\n")
    monkeypatch.chdir(work)
    before = tree(tmp_path)
    with pytest.raises(OutFolderError) as caught:
        build_site(SMALL, Path(name))
    (problem,) = caught.value.diagnostics
    assert problem.code == "out.working-folder" and problem.path == name
    assert "sub-folder" in problem.message
    assert tree(tmp_path) == before, "nothing written, no temporary folder left beside the working folder or above it"


def test_a_rebuild_over_a_previous_site_replaces_it_and_an_empty_folder_is_built_into(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    first = build_site(SMALL, empty)
    assert first.pages > 0 and (empty / "index.html").is_file()
    assert (empty / sitegen.publish.site.MARKER).read_bytes() == sitegen.publish.site.MARKER_TEXT

    out = tmp_path / "site"
    build_site(SMALL, out)
    built = tree(out)
    (out / "en" / "stale.html").write_bytes(b"from an older build")
    build_site(SMALL, out)
    assert tree(out) == built, "the previous site is replaced whole, and the same records give the same bytes"
    assert tree(empty) == built
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "site"], "no temporary folder is left behind"


# --- headings and the downloads page's instructions -------------------------------------------


def _main(page: Path) -> str:
    html = page.read_text(encoding="utf-8")
    return html[html.index("<main"):html.index("</main>")]


def _headings(page: Path) -> list[tuple[int, str]]:
    return [(int(level), " ".join(re.sub(r"<[^>]+>", "", inner).split()))
            for level, inner in re.findall(r"<h([1-6])[^>]*>(.*?)</h\1>", _main(page), flags=re.DOTALL)]


def test_every_page_has_one_h1_and_its_headings_never_skip_a_level(bundled_site):
    pages = sorted(bundled_site.rglob("*.html"))
    assert len(pages) > 100
    for page in pages:
        levels = [level for level, _ in _headings(page)]
        assert levels[:1] == [1] and levels.count(1) == 1, (page, levels)
        skips = [(a, b) for a, b in zip(levels, levels[1:]) if b > a + 1]
        assert not skips, (page, skips)


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_the_downloads_page_repeats_no_heading_and_gives_one_set_of_instructions(bundled_site, lang):
    page = bundled_site / lang / "downloads.html"
    texts = [text for _, text in _headings(page)]
    assert len(texts) == len(set(texts)), texts
    commands = [c for c in re.findall(r"<pre><code>(.*?)</code></pre>", _main(page)) if c.startswith("sha256sum")]
    assert commands == ["sha256sum -c --strict SHA256SUMS", "sha256sum -c --strict --ignore-missing SHA256SUMS"]
    assert _main(page).count("Get-FileHash") == 1


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_the_downloads_instructions_work_as_written(bundled_site, tmp_path, lang):
    """A reader saves what the page links to, as the page says, and runs the commands it shows."""
    if shutil.which("sha256sum") is None:
        pytest.skip("coreutils sha256sum is not installed")
    page = bundled_site / lang / "downloads.html"
    main_html = _main(page)
    verify = main_html[main_html.index('id="verify-heading"'):]
    verify = verify[:verify.index("</section>")]  # the sections after it check SHA256SUMS itself (test_signing, test_publication_log)
    served = bundled_site / "downloads"
    listed = [line.split("  ", 1)[1] for line in (served / "SHA256SUMS").read_text(encoding="utf-8").splitlines()]
    folders = sorted({name.rpartition("/")[0] for name in listed} - {""})
    assert folders == ["metadata", "metadata/changelog", "schemas"]
    for folder in folders:  # the instructions name each sub-folder SHA256SUMS expects
        assert f"<code>{folder}</code>" in verify, folder

    # a browser saves a link under its last path segment; the reader puts what SHA256SUMS lists in a sub-folder there
    links = [link for link in re.findall(r'href="\.\./downloads/([^"]+)"', main_html)
             if link not in ("publications.jsonl", "allowed_signers", "SHA256SUMS.sig")]
    assert sorted(set(links) - {"SHA256SUMS"}) == sorted(listed) and "SHA256SUMS" in links
    reader = tmp_path / "saved"
    for link in set(links):
        folder, _, name = link.rpartition("/")
        target = reader / folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(served / link, target)

    def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run(command.split(), cwd=cwd, capture_output=True, text=True)

    full, partial = [c for c in re.findall(r"<pre><code>(.*?)</code></pre>", verify) if c.startswith("sha256sum")]
    done = run(full, reader)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [f"{name}: OK" for name in listed]

    some = tmp_path / "some"
    some.mkdir()
    for name in ("SHA256SUMS", listed[0]):
        shutil.copyfile(reader / name, some / name)
    assert run(full, some).returncode != 0
    done = run(partial, some)
    assert done.returncode == 0 and done.stdout.splitlines() == [f"{listed[0]}: OK"], done.stdout + done.stderr


def test_verbose_build_names_every_phase_with_its_counts(tmp_path, capsys):
    """`--verbose`: every build phase with counts, the changelog's included."""
    code = main(["build", "--verbose", "--records", str(RECORDS), "--out", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert code == 0
    phases = [line.split(": ", 2)[1] for line in err.splitlines() if line.startswith("sitegen: ")]
    assert phases == ["load", "validate", "verify", "changelog", "render", "write"]
    changelog = next(line for line in err.splitlines() if line.startswith("sitegen: changelog: "))
    entries = len(list((RECORDS / "changelog").glob("*.md")))
    assert re.fullmatch(rf"sitegen: changelog: \d+ changes, {entries} of them hand-written", changelog)


def test_a_run_page_says_what_else_differs_from_the_run_it_is_compared_with(bundled_site):
    """Runs are compared only when compatible; what else differs (here the engine version) is said in the page's language."""
    from sitegen.score.comparison import allowed_differences
    from sitegen.load.records import load_records

    records = load_records(RECORDS)
    before, after = records.run("2026-09-02-nightly"), records.run("2026-09-16-release")
    (difference,) = allowed_differences(before, after)
    assert difference.what == "engine"
    for lang, words in (("sv", "motorversion"), ("en", "engine version")):
        html = (bundled_site / lang / "runs" / "2026-09-16-release.html").read_text(encoding="utf-8")
        listed = html[html.index('<ul class="differences">'):]
        listed = listed[: listed.index("</ul>")]
        assert f"{words} <code>{before.engine_version}</code> → <code>{after.engine_version}</code>" in listed


@pytest.mark.parametrize("lang,reason", [("sv", "bedömdes olika på"), ("en", "read differently in")])
def test_the_scorer_7_run_page_shows_the_pair_whose_unexpected_findings_differ(bundled_site, lang, reason):
    # the reason in full ("The two versions of pair licence-gender, … read differently in …"); its short word ("the
    # versions gave different unexpected findings") is not repeated before it (tests/test_lighter_site.py)
    page = (bundled_site / lang / "runs" / "2026-12-01-scorer-7.html").read_text(encoding="utf-8")
    assert reason in page and "licence-gender" in page
    flaw = {"sv": "en brist med <code>{}</code> som primär regel (säger att något saknas: nej)",
            "en": "a flaw with primary rule <code>{}</code> (says something is missing: no)"}[lang]
    assert flaw.format("R-HANDL-1") in page and flaw.format("R-OVERKL-1") in page


def test_the_bundled_publication_is_sealed_as_built(bundled_site):
    """The bundled records stand for a publication as deployed: its SHA256SUMS is the one the log's last line names. A
    change to a download (a wording in an export's metadata, say) makes it "not sealed yet" on the downloads page, and
    fails here: seal it (`sitegen seal`) or keep the download as it was."""
    last = json.loads((RECORDS / "publications.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert hashlib.sha256((bundled_site / "downloads" / "SHA256SUMS").read_bytes()).hexdigest() == last["sha256sums"]
    page = (bundled_site / "en" / "downloads.html").read_text(encoding="utf-8")
    assert f"This publication is line {last['sequence']} of the log" in page and "not sealed yet" not in page
