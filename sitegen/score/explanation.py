"""`sitegen explain`: one case of one run in words a maintainer can act on, from the same matching the scorer uses."""

from __future__ import annotations

from sitegen.core import model as m
from sitegen.core.errors import UsageError, did_you_mean
from sitegen.score.measures.base import Reason
from sitegen.score.measures.grounding import miss_reason
from sitegen.score.measures.registry import REGISTRY, stage_of
from sitegen.score.reasons import derive_reasons
from sitegen.score.scoring import score_run, verdict_source


def explain_case(records: m.Records, run_id: str, case_id: str, *, repetition: int | None = None, stage: str | None = None) -> str:
    try:
        run = records.run(run_id)
    except KeyError:
        raise UsageError(f'unknown run "{run_id}"{did_you_mean(run_id, (r.id for r in records.runs))}') from None
    if case_id not in records.case_versions:
        raise UsageError(f'unknown case version "{case_id}"{did_you_mean(case_id, records.case_versions)}')
    if case_id not in records.suite(run.suite, run.suite_version).case_versions:
        raise UsageError(f'case version "{case_id}" is not in the suite run {run_id} tested '
                         f'({run.suite} version {run.suite_version})')
    cv = records.case_versions[case_id]
    stages = records.stages(run)
    if stage is not None and stage not in stages:
        raise UsageError(f"run {run_id} has no {stage} stage (it has: {', '.join(stages)})")
    if repetition is not None and not 1 <= repetition <= run.repetitions:
        raise UsageError(f"run {run_id} has no repetition {repetition} (it has repetitions 1 to {run.repetitions})")
    repetitions = [repetition] if repetition is not None else list(range(1, run.repetitions + 1))
    out = [f"run {run.id} (scorer v{run.scorer_version}, {run.matching_method}), case version {cv.id}: {cv.title}"]
    result = score_run(records, run.id)
    verdicts = verdict_source(records)
    if result.outcome == m.CRASHED_STATE:
        out.append("  the run CRASHED: it says nothing about quality and has no numbers.")
    for rep in repetitions:
        answer = records.answers.get((run.id, cv.id, rep))
        if answer is None:
            out.append(f"\nrepetition {rep}: no answer recorded")
            continue
        for st in ([stage] if stage else stages):
            out.append(f"\nrepetition {rep}, {st} stage:")
            out.extend(_stage_lines(verdicts, run, cv, answer, st, rerun=False))
            if answer.rerun is not None and answer.rerun.status == m.COMPLETED:
                out.append(f"  rerun of repetition {rep} ({st} stage; counts for GROUNDING only):")
                out.extend("  " + line for line in _stage_lines(verdicts, run, cv, answer, st, rerun=True))
            elif answer.rerun is not None:
                out.append(f"  the rerun of repetition {rep} crashed: the run is CRASHED")
    # an invariance pair's observation compares every stage at once: it is shown whichever stage is asked for
    failed = [o for o in result.observations if _concerns(records, o, cv.id)
              and (repetition is None or str(repetition) in o.repetition.split("-"))
              and (stage is None or stage_of(o.measure, o.stage) in (None, stage))]
    out.append("")
    if failed:
        out.append("observations of this case that did not plainly pass:")
        reasons = derive_reasons(records, run.id, {o.case_version for o in failed})
        for o in failed:
            out.append(f"  {o.measure} {o.result.upper()} (repetition {o.repetition}, {_where(o)}): {o.detail}")
            out.extend(_differences(o, reasons.get(o)))
    elif result.outcome != m.CRASHED_STATE:
        out.append("every observation of this case passed.")
    return "\n".join(out) + "\n"


def _where(observation: m.Observation) -> str:
    """What an observation is of, after its repetition, as the pages name it: its stage and subject, or an invariance
    pair's pair alone (it compares every stage and the merge; the stage recorded is only where it first differed)."""
    stage = stage_of(observation.measure, observation.stage)
    return f"pair {observation.subject}" if stage is None else f"{stage}, {observation.subject}"


def _differences(observation: m.Observation, why: Reason | None) -> list[str]:
    """Every difference of a comparison's reason, one a line, in the record's words (the detail names only the first)."""
    differences = getattr(why, "differences", ())
    if len(differences) < 2:
        return []
    text = REGISTRY[observation.measure].reason(why.code).detail
    lines = [f"    every difference ({len(differences)}):"]
    lines.extend(f"      {text(Reason(why.code, **{**why.params, 'differences': (d,)}))}" for d in differences)
    return lines


def _concerns(records: m.Records, observation: m.Observation, case_id: str) -> bool:
    if observation.case_version == case_id:
        return True
    if observation.measure == "INVARIANT_PAIRS":
        return any(p.id == observation.subject and case_id in p.versions for p in records.pairs)
    return False


def _stage_lines(verdicts, run, cv, answer, stage, *, rerun: bool) -> list[str]:
    verdict = verdicts(answer, stage, rerun)
    by_id = {v.finding.id: v for v in verdict.findings}
    lines = []
    for ev in verdict.expected:
        e = ev.expected
        head = f"  expected {e.id} ({e.kind}, missing={str(e.missing).lower()}, accepted {', '.join(e.rules)}):"
        if stage == m.REVIEWER and not e.reviewer_expected:
            found = f"found by {ev.finding}" if ev.finding else "not found"
            lines.append(f"{head} {found}; not observed at the reviewer stage (the key does not expect a reviewer to report it)")
            continue
        if ev.finding is not None:
            f = by_id[ev.finding].finding
            lines.append(f"{head} matched by {f.id} ({ev.evidence}{_quote(f)})")
            continue
        closest = by_id.get(ev.closest) if ev.closest else None
        got = want = ""
        if closest is not None:
            f = closest.finding
            got, want = {"kind": (f.kind, e.kind), "rule": (f.rule, "/".join(e.rules)), "rule.support": (f.rule, ""),
                         "missing": (str(f.missing).lower(), str(e.missing).lower())}.get(ev.reason, ("", ""))
        why = miss_reason(ev, got=got, want=want)
        reason = REGISTRY["GROUNDING"].reason(ev.reason).explained(why)
        lines.append(f"{head} MISSED: {reason}")
        if closest is not None:
            lines.append(f"      closest finding {closest.finding.id}{_quote(closest.finding)}")
        if e.passage is not None and e.passage.quote:
            lines.append(f'      the key\'s passage (line {e.passage.lines[0]}): "{e.passage.quote}"')
        elif e.passage is None:
            lines.append("      the key expects something wholly absent: a rule named and nothing quoted")
    for v in verdict.findings:
        if v.category == m.MATCHED:
            continue
        f = v.finding
        what = {m.DUPLICATE: f"duplicate of the finding that matched {' and of the one that matched '.join(v.duplicate_of)}",
                m.PROHIBITED: f"PROHIBITED: matches prohibited finding {v.key_finding} of the key",
                m.VOLUNTARY: "voluntary strength (harmless; left out of stability)",
                m.UNEXPECTED: "unexpected"}[v.category]
        lines.append(f"  finding {f.id} ({f.kind}, {f.rule}, missing={str(f.missing).lower()}{_quote(f)}): {what}")
    for v in verdict.findings:
        if v.quote_found is False:
            lines.append(f'  quote of {v.finding.id} is NOT in the document: "{v.finding.quote}"')
    if not verdict.findings:
        lines.append("  (no findings)")
    return lines


def _quote(f: m.Finding) -> str:
    if f.quote is not None:
        return f', quotes "{f.quote}"'
    if f.location is not None:
        return f", lines {f.location[0]}-{f.location[1]}"
    return ", quotes nothing"
