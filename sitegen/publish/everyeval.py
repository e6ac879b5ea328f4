"""Every published run in the Every Eval Ever format (schema 0.3.0), so it can sit beside other evaluations' results."""

from __future__ import annotations

import datetime

import sitegen
from sitegen.core import model as m
from sitegen.publish.exportcontext import ExportContext, json_bytes
from sitegen.score.measures.registry import MEASURES, TITLES

SCHEMA_VERSION = "0.3.0"
LEFT_OUT = ("The format has no place for a measure with nothing to count (NOT_OBSERVED) or for a run that did not finish "
            "(CRASHED), so they are left out of evaluation_results and named here; the measure tables and the run's page "
            "show them.")


def every_eval_name(run: m.Run) -> str:
    """The file of one published run."""
    return f"every-eval-ever-{run.id}.json"


def epoch(date: str) -> str:
    """An ISO date as Unix time at midnight UTC, in whole seconds, as the format writes its retrieved_timestamp."""
    day = datetime.date.fromisoformat(date)
    return str(int(datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.timezone.utc).timestamp()))


def every_eval_files(context: ExportContext) -> tuple[tuple[str, bytes], ...]:
    """One file per published run, crashed runs included (with no results and a note saying why)."""
    return tuple((every_eval_name(run), json_bytes(every_eval_record(context, run))) for run in context.runs)


def every_eval_record(context: ExportContext, run: m.Run) -> dict:
    """One run as an Every Eval Ever aggregate record: each observed measure's "passed of observed" as a score and details."""
    config = context.records.config
    result = context.summaries[run.id]
    setup = context.records.setups[run.setup]
    crashed = result.outcome == m.CRASHED_STATE
    by_id = {x.measure: x for x in result.measures}
    observed = [] if crashed else [by_id[x] for x in MEASURES if x in by_id and by_id[x].state != m.NOT_OBSERVED]
    left_out = MEASURES if crashed else tuple(x for x in MEASURES if x not in {o.measure for o in observed})
    notes = {"run_outcome": result.outcome, "run_page": context.url(f"{context.page_language}/runs/{run.id}.html")}
    if left_out:
        notes.update({"left_out": " ".join(left_out), "left_out_state": m.CRASHED_STATE if crashed else m.NOT_OBSERVED,
                      "note": LEFT_OUT})
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{run.suite}/{run.id}",
        "evaluation_timestamp": run.date,
        "retrieved_timestamp": epoch(context.date),
        "source_metadata": {
            "source_name": context.title,
            "source_type": "evaluation_run",
            "source_organization_name": context.title,
            "source_organization_url": config.base_url,
            "evaluator_relationship": "first_party",  # the engine's makers test it on cases they authored
            "additional_details": notes,
        },
        "eval_library": {
            "name": "sitegen",
            "version": sitegen.__version__,
            "additional_details": {"scorer_version": str(result.scorer_version), "matching_method": result.matching_method},
        },
        "model_info": {
            "name": run.engine_version,
            "id": run.engine_version,
            "additional_details": {
                "deployment_type": "unknown",
                "model_availability": "unknown",
                "setup": run.setup,
                "setup_fingerprint": setup.fingerprint,
                "repetitions": str(run.repetitions),
            },
        },
        "evaluation_results": [_result(context, run, measure) for measure in observed],
    }


def _result(context: ExportContext, run: m.Run, measure: m.MeasureResult) -> dict:
    """One measure: the score is the number of passed observations out of a maximum of the observed ones, never a ratio."""
    cases = context.download_named("cases.json")
    source = ({"dataset_name": f"{run.suite} v{run.suite_version}", "source_type": "url", "url": [context.url(f"downloads/{cases}")]}
              if cases else {"dataset_name": f"{run.suite} v{run.suite_version}", "source_type": "other"})
    return {
        "evaluation_result_id": measure.measure,
        "evaluation_name": measure.measure,
        "evaluation_timestamp": run.date,
        "source_data": source,
        "metric_config": {
            "evaluation_description": TITLES[measure.measure],
            "metric_id": f"sitegen.{measure.measure}",
            "metric_name": f"{measure.measure}: passed of observed",
            "metric_kind": "count",
            "metric_unit": "observations",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": 0,
            "max_score": measure.observed,
            "additional_details": {"method": context.url(f"{context.page_language}/method.html#{measure.measure.lower()}")},
        },
        "score_details": {
            "score": measure.passed,
            "details": {
                "passed": str(measure.passed),
                "observed": str(measure.observed),
                "passed_of_observed": f"{measure.passed} of {measure.observed}",
                "failed": str(measure.failed),
                "pending": str(measure.pending),
                "dismissed_by_rerun": str(measure.dismissed),
                "state": measure.state,
            },
        },
    }
