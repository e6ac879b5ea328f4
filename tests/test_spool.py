"""Packed answers and results: whatever goes in comes out equal, looked up like a dict, with few runs unpacked at once."""

import dataclasses
from pathlib import Path

import pytest

from sitegen.core import model as m
from sitegen.load import answerpack, spool
from sitegen.load.records import load_records
from sitegen.score.results import read_results, write_results
from sitegen.core.collector import frozen_when_made
from sitegen.load.spool import AnswerSpool, ResultSpool

RECORDS = Path(__file__).resolve().parent.parent / "records"


@pytest.fixture(scope="module")
def records():
    return load_records(RECORDS)


def test_answers_come_back_equal_and_in_order(records):
    spool = AnswerSpool(keep=1)
    originals = dict(records.answers.items())
    spool.add(originals.values())
    assert list(spool) == list(originals)
    assert len(spool) == len(originals)
    for key, answer in originals.items():
        assert key in spool
        assert spool[key] == answer
        assert spool.source(key) == answer.source


def test_equal_findings_and_answers_of_a_run_come_back_as_one_object(records):
    # an engine repeating itself is unpacked once; what comes back still equals what went in
    run = records.published_runs[0].id
    answer = next(a for key, a in records.answers.items() if key[0] == run)
    again = answer._replace(repetition=answer.repetition + 100, source="again.json")
    changed = answer._replace(repetition=answer.repetition + 200,
                                  answer=answer.answer._replace(status="crashed"))
    spool = AnswerSpool()
    spool.add([answer, again, changed])
    first, second, third = (spool[(run, a.case_version, a.repetition)] for a in (answer, again, changed))
    assert (first, second, third) == (answer, again, changed)
    assert second.answer is first.answer
    assert third.answer is not first.answer and third.answer.reviewers[0].findings[0] is first.answer.reviewers[0].findings[0]


def test_a_repeated_answer_is_packed_once(records):
    # the repeats are found while packing, so unpacking need not hash whole answers to find them again
    import marshal
    import zlib

    from sitegen.load.answerpack import pack_answers

    run = records.published_runs[0].id
    answer = next(a for key, a in records.answers.items() if key[0] == run)
    again = answer._replace(repetition=answer.repetition + 100)
    (packed,) = pack_answers([answer, again])
    findings, engines, rows = marshal.loads(zlib.decompress(packed.blob))
    distinct = {f for f in answer.answer.stage_findings("reviewer") + answer.answer.stage_findings("report")}
    distinct |= {f for f in (answer.rerun.stage_findings("reviewer") + answer.rerun.stage_findings("report") if answer.rerun else ())}
    assert len(findings) == len(distinct)
    assert len(engines) == len({answer.answer, answer.rerun} - {None})
    assert rows[0][2:4] == rows[1][2:4]


def test_an_answer_repeated_in_another_file_of_the_run_is_still_one_object(records):
    run = records.published_runs[0].id
    answer = next(a for key, a in records.answers.items() if key[0] == run)
    again = answer._replace(repetition=answer.repetition + 100, source="again.json")
    spool = AnswerSpool()
    spool.add([answer])
    spool.add([again])
    first, second = spool[(run, answer.case_version, answer.repetition)], spool[(run, again.case_version, again.repetition)]
    assert (first, second) == (answer, again)
    assert second.answer is first.answer


def test_unknown_answers_are_missing_not_errors(records):
    spool = AnswerSpool()
    spool.add(records.answers.values())
    run = records.published_runs[0].id
    assert ("no-such-run", "x", 1) not in spool and spool.get(("no-such-run", "x", 1)) is None
    assert (run, "no-such-case", 1) not in spool
    assert "not a key" not in spool
    with pytest.raises(KeyError):
        spool[(run, "no-such-case", 1)]


def test_only_the_last_runs_read_stay_unpacked(records):
    runs = sorted({key[0] for key in records.answers})
    assert len(runs) >= 3
    spool = AnswerSpool(keep=2)
    spool.add(records.answers.values())
    for run in runs:
        spool[next(key for key in spool if key[0] == run)]
    assert list(spool._unpacked.runs) == runs[-2:]


def test_an_unpacked_run_is_out_of_the_collectors_sight_and_still_freed_when_let_go(records):
    """Full collections while pages render would rescan every unpacked answer; frozen, they are skipped, not kept."""
    import gc

    run = sorted({key[0] for key in records.answers})[0]
    in_run = [key for key in records.answers if key[0] == run]
    spool = AnswerSpool(keep=1, unpacking=frozen_when_made)
    spool.add(records.answers.values())
    gc.unfreeze()
    try:
        answer = spool[in_run[0]]
        frozen = gc.get_freeze_count()
        assert frozen >= len(in_run)
        assert not any(answer is obj for obj in gc.get_objects()), "a full collection would not look at it"
        del answer
        spool._unpacked.forget(run)
        assert gc.get_freeze_count() <= frozen - len(in_run), "the run's answers were freed all the same"
    finally:
        gc.unfreeze()


def test_answers_of_one_run_may_come_from_several_files(records):
    run = records.published_runs[0].id
    mine = [a for key, a in records.answers.items() if key[0] == run]
    spool = AnswerSpool()
    spool.add(mine[: len(mine) // 2])
    spool[(run, mine[0].case_version, mine[0].repetition)]  # unpacked now; the next file must not be hidden by it
    spool.add(mine[len(mine) // 2 :])
    assert [spool[(run, a.case_version, a.repetition)] for a in mine] == mine


def test_results_round_trip_to_the_same_bytes():
    data = (RECORDS / "results.json").read_bytes()
    results = read_results(data)
    assert isinstance(results, ResultSpool)
    assert write_results(results) == data


def test_loading_packs_the_answers_it_checked_without_building_their_objects(monkeypatch):
    # the answers are checked from the parsed JSON and go into the spool's packed form directly: a Finding built while
    # loading would only be taken apart again by the packing (a run is unpacked, and its objects built, when it is used)
    built = []
    real_new, real_make = m.Finding.__new__, m.Finding._make  # a named tuple is made by either, never through __init__
    monkeypatch.setattr(m.Finding, "__new__", lambda cls, *a, **k: built.append(1) or real_new(cls, *a, **k))
    monkeypatch.setattr(m.Finding, "_make", classmethod(lambda cls, values: built.append(1) or real_make(values)))
    # or, unpacking, by tuple's own constructor (answerpack._new_finding)
    monkeypatch.setattr(answerpack, "_new_finding", lambda values: built.append(1) or real_make(values))
    records = load_records(RECORDS)
    assert built == [], f"{len(built)} findings built while loading"
    answer = next(iter(records.answers.values()))
    assert built, "unpacking a run builds its findings"
    assert all(isinstance(f, m.Finding) for r in answer.answer.reviewers for f in r.findings)


def test_packing_takes_no_python_step_per_finding():
    # the loader packs every answer it reads: each finding's number in the run's table is looked up in C
    import sys

    import sitegen.load.answerpack as spool_module

    def finding(i: int) -> tuple:
        return (f"f{i}", m.FLAW, "R1", (), False, f"quote {i}", None, f"wording {i}", ())

    answers = [spool_module.RawAnswer("run", f"cv-{n}", 1, (m.COMPLETED, (("r1", tuple(finding(n * 10 + i) for i in range(8))),),
                                                             (), tuple(finding(n * 10 + i) for i in range(4))), None, "a.json")
               for n in range(200)]
    calls = [0]
    package = str(Path(spool_module.__file__).resolve().parent.parent)

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(package):
            calls[0] += 1

    sys.setprofile(profile)
    try:
        packed = spool_module.pack_answers(answers)
    finally:
        sys.setprofile(None)
    # a call per engine answer and rerun (and their comprehensions), none for the 2,400 findings
    assert calls[0] <= 6 * len(answers) + 10, (calls[0], len(answers))
    spool = AnswerSpool()
    spool.add_packed(packed)
    back = spool[("run", "cv-3", 1)]
    assert [f.id for f in back.answer.reviewers[0].findings] == [f"f{30 + i}" for i in range(8)]
    assert back.answer.report[1] is back.answer.reviewers[0].findings[1]


def test_a_released_run_is_let_go_and_comes_back_equal(records):
    """spool.release: a pass done with a run keeps nothing of it unpacked; reading it again unpacks it afresh, equal."""
    run = records.published_runs[0].id
    key = next(k for k in records.answers if k[0] == run)
    answers = AnswerSpool(keep=2)
    answers.add(records.answers.values())
    first = answers[key]
    assert answers[key] is first, "while unpacked, the same object"
    spool.release(answers, run)
    assert run not in answers._unpacked.runs
    again = answers[key]
    assert again == first and again is not first
    results = read_results(write_results({}))  # an empty record has no run: release of an unknown run does nothing
    spool.release(results, run)
    plain = {key: first}
    spool.release(plain, run)  # a plain mapping keeps nothing unpacked, so there is nothing to let go
    assert plain == {key: first}


def test_a_scoring_pass_keeps_no_run_unpacked_once_done():
    """Each run scored is let go at once: a process scoring run after run holds one run unpacked, not the last two."""
    from sitegen.loading import load_phase, recorded_phase
    from sitegen.score.verify import verify_published

    loaded = load_phase(RECORDS)
    recorded = recorded_phase(loaded, RECORDS)
    assert len(loaded.published_runs) >= 3
    verify_published(loaded, recorded, jobs=1)
    assert list(loaded.answers._unpacked.runs) == []
    assert list(recorded._unpacked.runs) == []


def test_the_checks_hand_the_pages_no_run_unpacked():
    """The exports read every run's results; once the checks are done the pages unpack each run as they come to it, so the
    process that forks the rendering workers holds none."""
    from sitegen.build import check_records

    checked = check_records(RECORDS)
    assert list(checked.records.answers._unpacked.runs) == []
    assert list(checked.results._unpacked.runs) == []


def test_rendering_keeps_only_the_run_at_hand_unpacked():
    """Pages come run by run, so a process turning to the next run lets the one before go: one run unpacked, not two."""
    from sitegen.build import check_records, render_site

    checked = check_records(RECORDS)
    pages, _, _ = render_site(checked)
    rendered = set()
    for page in pages:
        parts = page.path.split("/")
        if parts[1:2] == ["runs"]:
            rendered.add(parts[2].removesuffix(".html"))
        assert len(checked.records.answers._unpacked.runs) <= 1
        assert len(checked.results._unpacked.runs) <= 1
    assert len(rendered) >= 3, "the pages of several runs were rendered"


def test_a_pass_over_the_runs_holds_one_of_them_unpacked():
    """spool.each_run: each run's result in turn, the one before let go; a run the spool lacks comes as None."""
    results = read_results((RECORDS / "results.json").read_bytes())
    runs = list(results)
    assert len(runs) >= 3
    seen = []
    for run, result in spool.each_run(results, runs + ["no-such-run"]):
        seen.append((run, None if result is None else result.run))
        assert len(results._unpacked.runs) <= 1
    assert seen == [(run, run) for run in runs] + [("no-such-run", None)]
    assert list(results._unpacked.runs) == []


def test_the_exports_read_each_run_and_keep_none_unpacked():
    from sitegen.build import check_records, exports_phase

    checked = check_records(RECORDS)
    exports_phase(checked.records, checked.results, checked.catalogs, checked.downloads)
    assert list(checked.results._unpacked.runs) == []


def test_a_runs_statuses_are_its_answers_and_reruns_statuses_without_unpacking_them(records):
    """What a run's grid shows of its answers (each answer's status and its rerun's) is read from the packed tables."""
    answers = dict(records.answers.items())
    with_rerun = next(key for key, a in answers.items() if a.rerun is not None)
    answers[with_rerun] = answers[with_rerun]._replace(rerun=answers[with_rerun].rerun._replace(status=m.CRASHED))
    plain = next(key for key, a in answers.items() if a.rerun is None and key[0] == with_rerun[0])
    answers[plain] = answers[plain]._replace(answer=answers[plain].answer._replace(status=m.CRASHED))
    packed = AnswerSpool(keep=1)
    packed.add(answers.values())
    for run in {key[0] for key in answers}:
        want = {(cv, rep): (a.answer.status, None if a.rerun is None else a.rerun.status)
                for (r, cv, rep), a in answers.items() if r == run}
        assert packed.statuses(run) == want == spool.answer_statuses(answers, run)
        assert not packed._unpacked.runs, "nothing unpacked"
    assert packed.statuses("no such run") == {}


def test_a_runs_own_pages_leave_its_answers_packed():
    """A run's page and lists show its answers' states only (run_grid): rendering them unpacks no answers."""
    from sitegen.build import check_records, render_site

    checked = check_records(RECORDS)
    pages, _, _ = render_site(checked, detail_runs=0)
    unpacked = []
    real = checked.records.answers._unpack
    checked.records.answers._unpack = lambda run: unpacked.append(run) or real(run)
    run_pages = sum(1 for page in pages if page.path.split("/")[1:2] == ["runs"])
    assert run_pages and unpacked == []


def test_pages_unpack_a_runs_seal_once_to_say_it_is_sealed(monkeypatch):
    """A seal (a digest per answer) is for the checks: the pages read each run's results without it, and its seal is
    unpacked once per run, to say on its page whether it is sealed."""
    from sitegen.build import check_records, render_site

    checked = check_records(RECORDS)
    unpacked = []
    real = spool._unpack_parts
    monkeypatch.setattr(spool, "_unpack_parts", lambda pack, *, sealed: unpacked.append(sealed) or real(pack, sealed=sealed))
    pages = list(render_site(checked, detail_runs=None)[0])
    runs = [run.id for run in checked.records.published_runs if run.id in checked.results]
    assert unpacked.count(True) == len(runs) and unpacked.count(False) >= len(runs)
    sealed = [run for run in runs if checked.results[run].seal is not None]
    assert sealed, "the test records hold sealed runs"
    shown = {page.path: page.data.decode("utf-8") for page in pages}
    for run in runs:
        page = shown[f"en/runs/{run}.html"]
        assert ("sealed: the results file" in page and "not sealed:" not in page) == (run in sealed), run


def test_a_spool_without_seals_keeps_everything_else_and_the_digests():
    results = read_results((RECORDS / "results.json").read_bytes())
    bare = results.without_seals()
    assert list(bare) == list(results)
    for run in results:
        assert bare[run] == dataclasses.replace(results[run], seal=None)
        assert bare.digest(run) == results.digest(run)  # a page's key still tells a sealed entry from its unsealed twin
    assert any(results[run].seal is not None for run in results)
    plain = spool.without_seals(dict(results.items()))
    assert all(plain[run] == bare[run] for run in results)


def test_a_memo_with_a_limit_keeps_that_many_and_gives_the_same_values():
    from sitegen.render.environment import Memo

    made = []
    memo = Memo(lambda key: made.append(key) or f"<{key}>", limit=3)
    assert [memo[k] for k in (1, 2, 1, 3, 4, 5, 4, 1)] == ["<1>", "<2>", "<1>", "<3>", "<4>", "<5>", "<4>", "<1>"]
    assert sorted(memo) == [1, 2, 3] and made == [1, 2, 3, 4, 5, 4]  # the first three kept, the others made each time
    unlimited = Memo(str)
    assert [unlimited[k] for k in range(10)] == [str(k) for k in range(10)] and len(unlimited) == 10


def test_a_rendering_process_keeps_a_bounded_number_of_count_tables(monkeypatch):
    """A case's table of counts is memoized per distinct table, and there are about as many as pages: a process
    rendering page after page keeps at most COUNTS_KEPT of them per language, and the pages are the same bytes."""
    from sitegen.build import check_records, render_site
    from sitegen.render import environment

    checked = check_records(RECORDS)
    whole = {page.path: page.data for page in render_site(checked)[0]}
    memos = []
    made = environment.Words.__init__

    def words(self, *args, **kwargs):
        made(self, *args, **kwargs)
        memos.append(self.counts)

    monkeypatch.setattr(environment.Words, "__init__", words)
    monkeypatch.setattr(environment, "COUNTS_KEPT", 2)
    bounded = {page.path: page.data for page in render_site(checked)[0]}
    assert bounded == whole
    assert memos and all(memo.limit == 2 and len(memo) <= 2 for memo in memos)
    tables = sum(1 for path in whole if path.count("/") == 4 and not path.endswith("index.html"))  # case-run pages
    assert tables > 2 * len(memos), "more tables than the memos may keep"


def test_garbage_in_a_cycle_is_not_frozen_with_what_is_unpacked():
    """Objects frozen out of the collector's sight are never collected: cyclic garbage left before unpacking a run (a
    page's data, say) must be collected then, not frozen with the run for the rest of the process."""
    import gc
    import weakref

    class Cycle:
        pass

    enabled = gc.isenabled()
    try:
        gc.disable()
        made = Cycle()
        made.itself = made
        left = weakref.ref(made)
        del made
        assert left() is not None, "the collector is paused: the cycle is still there"
        with frozen_when_made():
            kept = [Cycle() for _ in range(3)]
        assert left() is None, "collected before the freeze"
        assert all(type(k) is Cycle for k in kept)
    finally:
        if enabled:
            gc.enable()
        gc.unfreeze()
