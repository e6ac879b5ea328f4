"""JudgedRun.numbers: a verdict's number in its run, the same exactly where repetitions share the verdict (base.judge_run)."""

from sitegen.core import model as m
from sitegen.score.matching import method_for
from sitegen.score.measures.base import judge_run

from factories import case_version, engine, expected, finding, records


def judged(answers, repetitions):
    cvs = (case_version("cv", expected_findings=(expected(),)), case_version("cv2", expected_findings=(expected(),)))
    base = records(cvs, answers, merge=True, repetitions=repetitions)
    return judge_run(base, base.run("run"), method_for(6))


def test_repetitions_with_equal_findings_share_one_number_and_others_do_not():
    hit, miss = finding(), finding(id="f2", rule="R-2")
    same = engine([hit], report=[hit])
    answers = {("cv", 1): (same, None), ("cv", 2): (engine([hit], report=[hit]), None),  # equal, another object
               ("cv", 3): (engine([miss], report=[hit]), None),  # the reviewer stage differs, the report is equal
               ("cv2", 1): (same, None), ("cv2", 2): (same, None), ("cv2", 3): (same, None)}
    run = judged(answers, 3)
    numbers = run.numbers
    assert numbers[("cv", 1, m.REVIEWER)] == numbers[("cv", 2, m.REVIEWER)] != numbers[("cv", 3, m.REVIEWER)]
    assert numbers[("cv", 1, m.REPORT)] == numbers[("cv", 2, m.REPORT)] == numbers[("cv", 3, m.REPORT)]
    assert numbers[("cv", 1, m.REVIEWER)] != numbers[("cv", 1, m.REPORT)]  # a stage's verdict is its own
    assert numbers[("cv2", 1, m.REVIEWER)] != numbers[("cv", 1, m.REVIEWER)]  # so is another case version's
    assert len({numbers[("cv2", rep, m.REPORT)] for rep in (1, 2, 3)}) == 1


def test_a_number_names_one_verdict_and_a_verdict_one_number():
    a, b = finding(), finding(id="f2", quote="något annat")
    answers = {("cv", 1): (engine([a], report=[a]), None), ("cv", 2): (engine([b], report=[a]), None),
               ("cv2", 1): (engine([a, b], report=[b]), None), ("cv2", 2): (engine([a, b], report=[b]), None)}
    run = judged(answers, 2)
    assert run.numbers.keys() == run.verdicts.keys()
    for k in run.verdicts:
        for j in run.verdicts:
            assert (run.numbers[k] == run.numbers[j]) == (run.verdicts[k] is run.verdicts[j]), (k, j)


def test_a_rerun_is_judged_once_per_case_version_and_stage_and_against_its_own_key(monkeypatch):
    """JudgedRun.rerun_verdict keeps a rerun's verdict for the repetitions that share the very same rerun, but never lends
    it to another case version whose answers happen to be the same object."""
    from sitegen.score.measures import base

    hit = finding()
    rerun = engine([hit])  # one object, the rerun of every answer below
    cvs = (case_version("cv", expected_findings=(expected(),)),
           case_version("cv2", expected_findings=(expected(rules=("R-2",)),)))  # the same finding misses here
    answers = {("cv", 1): (engine([]), rerun), ("cv", 2): (engine([]), rerun),
               ("cv2", 1): (engine([]), rerun), ("cv2", 2): (engine([]), rerun)}
    base_records = records(cvs, answers, repetitions=2)
    calls = []
    real = base.judge_stage
    monkeypatch.setattr(base, "judge_stage", lambda *args: calls.append(args[0].case_version.id) or real(*args))
    run = judge_run(base_records, base_records.run("run"), method_for(6))
    calls.clear()
    slots = run.slots
    verdicts = [run.rerun_verdict(slot.answer, m.REVIEWER) for slot in slots]
    assert calls == ["cv", "cv2"]  # once per case version, though all four answers hold the same rerun
    assert verdicts[0] is verdicts[1] and verdicts[2] is verdicts[3]
    assert verdicts[0].expected[0].finding == hit.id and verdicts[2].expected[0].finding is None


def test_verdicts_and_numbers_by_key_are_the_slots_own():
    """JudgedRun.verdicts and .numbers are read from the slots: every (case version, repetition, stage) there, nothing else."""
    hit = finding()
    answers = {(cv, rep): (engine([hit], report=[hit]), None) for cv in ("cv", "cv2") for rep in (1, 2)}
    run = judged(answers, 2)
    assert len(run.verdicts) == len(run.numbers) == len(run.slots) * len(run.stages) == 8
    assert list(run.verdicts) == [(s.case_version, s.repetition, stage) for s in run.slots for stage in run.stages]
    for slot in run.slots:
        for i, stage in enumerate(run.stages):
            assert run.verdicts[(slot.case_version, slot.repetition, stage)] is slot.verdicts[i]
            assert run.numbers[(slot.case_version, slot.repetition, stage)] == slot.numbers[i]
    for missing in (("cv", 0, m.REVIEWER), ("cv", 3, m.REVIEWER), ("cv3", 1, m.REVIEWER), ("cv", 1, "other"), ("cv", True, m.REVIEWER)):
        assert missing not in run.verdicts and missing not in run.numbers
