"""Checks the synthetic publication against docs/records.md on its own, so load figures are taken on valid records."""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
RULE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
CATEGORIES = {"publication-rules", "engine-change", "measurement-method", "test-cases", "scoring-rules", "run-setup"}
SMALL = ["--case-versions", "30", "--runs", "2"]


sys.path.insert(0, str(ROOT / "benchmarks"))  # the scripts import their sibling modules as a script would

import bench_build  # noqa: E402
import bench_build_command  # noqa: E402
import bench_load  # noqa: E402
import bench_score_all  # noqa: E402
import generate  # noqa: E402
from sitegen.cli import main as sitegen_main  # noqa: E402


def run_generator(out: Path, args: list[str]) -> Path:
    assert generate.main([str(out), *args]) == 0
    return out


def strict_json(path: Path):
    """Parse like the record format demands: no duplicate keys, no NaN or Infinity."""

    def pairs(items):
        keys = [k for k, _ in items]
        assert len(keys) == len(set(keys)), f"duplicate key in {path}"
        return dict(items)

    def constant(name):
        raise AssertionError(f"{name} in {path}")

    return json.loads(path.read_text("utf-8"), object_pairs_hook=pairs, parse_constant=constant)


def collapse(text: str) -> str:
    return re.sub(r"[ \t\r\n]+", " ", text)


def url_safe(value: str) -> bool:
    return bool(ID.match(value)) and ".." not in value


class Publication:
    """The generated folder, read back as plain JSON."""

    def __init__(self, root: Path):
        self.root = root
        self.config = strict_json(root / "sitegen.json")
        self.setups = strict_json(root / "setups.json")
        self.runs = strict_json(root / "runs.json")
        self.cases = strict_json(root / "cases.json")
        self.answer_files = {name: strict_json(root / name) for name in self.config["answers"]}
        self.case_by_id = {c["id"]: c for c in self.cases["case_versions"]}

    def answers(self):
        for name, doc in self.answer_files.items():
            for answer in doc["answers"]:
                yield name, answer


@pytest.fixture(scope="module", params=[1, 7], ids=["seed-1", "seed-7"])
def publication(request, tmp_path_factory) -> Publication:
    out = tmp_path_factory.mktemp(f"records-{request.param}")
    return Publication(run_generator(out / "records", [*SMALL, "--seed", str(request.param)]))


@pytest.fixture(scope="module")
def larger(tmp_path_factory) -> Publication:
    out = tmp_path_factory.mktemp("larger")
    return Publication(run_generator(out / "records", ["--case-versions", "400", "--runs", "2"]))


def all_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_arguments_give_same_bytes(tmp_path):
    first = all_files(run_generator(tmp_path / "one", SMALL))
    second = all_files(run_generator(tmp_path / "two", SMALL))
    assert first.keys() == second.keys()
    for name in first:
        assert first[name] == second[name], name


def test_another_seed_gives_other_cases(tmp_path):
    one = run_generator(tmp_path / "one", SMALL)
    two = run_generator(tmp_path / "two", [*SMALL, "--seed", "2"])
    assert (one / "cases.json").read_bytes() != (two / "cases.json").read_bytes()


def test_refuses_a_folder_that_holds_files(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    assert generate.main([str(tmp_path), *SMALL]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_writes_the_records_files_and_no_results(publication):
    root = publication.root
    for name in ("sitegen.json", "setups.json", "runs.json", "cases.json"):
        assert (root / name).is_file()
    assert not (root / "results.json").exists()
    assert publication.config["format"] == "sitegen.config/1"
    assert publication.setups["format"] == "sitegen.setups/1"
    assert publication.runs["format"] == "sitegen.runs/1"
    assert publication.cases["format"] == "sitegen.cases/1"
    assert all(doc["format"] == "sitegen.answers/1" for doc in publication.answer_files.values())


def test_files_follow_the_published_schemas(publication):
    jsonschema = pytest.importorskip("jsonschema")
    schemas = ROOT / "sitegen" / "schemas"
    if not schemas.is_dir():
        pytest.skip("sitegen/schemas not present")
    pairs = [("config", publication.config), ("setups", publication.setups), ("runs", publication.runs),
             ("cases", publication.cases)] + [("answers", doc) for doc in publication.answer_files.values()]
    for schema_name, doc in pairs:
        schema = json.loads((schemas / f"{schema_name}.schema.json").read_text("utf-8"))
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
        assert not errors, (schema_name, errors[:3])


def test_one_answers_file_per_run_each_published_under_its_own_name(publication):
    config = publication.config
    run_ids = [r["id"] for r in publication.runs["runs"]]
    assert len(config["answers"]) == len(run_ids)
    published = {p["record"]: p["name"] for p in config["publish"]}
    assert len(set(published.values())) == len(published)
    for name, doc in publication.answer_files.items():
        assert name in published
        assert len({a["run"] for a in doc["answers"]}) == 1
    assert {"cases.json", "results.json"} <= published.keys()


def test_every_run_case_and_repetition_has_exactly_one_answer(publication):
    suite = publication.cases["suites"][0]
    seen = [(a["run"], a["case_version"], a["repetition"]) for _, a in publication.answers()]
    assert len(seen) == len(set(seen))
    wanted = {(run["id"], cv, rep) for run in publication.runs["runs"]
              for cv in suite["case_versions"] for rep in range(1, run["repetitions"] + 1)}
    assert set(seen) == wanted
    assert len(suite["case_versions"]) == 30
    assert all(run["repetitions"] == 3 for run in publication.runs["runs"])


def test_runs_are_completed_published_and_versioned_as_asked(publication):
    setups = {s["id"] for s in publication.setups["setups"]}
    suites = {(s["id"], s["version"]) for s in publication.cases["suites"]}
    for run in publication.runs["runs"]:
        assert run["status"] == "completed" and run["published"] is True
        assert run["setup"] in setups
        assert (run["suite"], run["suite_version"]) == ("synthetic", 1) and suites == {("synthetic", 1)}
        assert run["scorer"] == {"version": 6, "matching_method": "structured-identity/whitespace-collapsed/v6"}
        assert run["report"] == {"version": 5, "runner": 3, "run_record": 5}
        assert run["assessment"] == {"version": 1, "policy": "short-case-v1"}
        datetime.date.fromisoformat(run["date"])


def test_fingerprints_are_the_sha256_of_the_canonical_configuration(publication):
    for setup in publication.setups["setups"]:
        canonical = json.dumps(setup["configuration"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert setup["fingerprint"] == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        assert setup["configuration"]["merge"] is True
    assert 1 <= len(publication.setups["setups"]) <= 2


def test_ids_are_unique_and_url_safe(publication):
    cases = publication.cases
    groups = {
        "case versions": [c["id"] for c in cases["case_versions"]],
        "pairs": [p["id"] for p in cases["pairs"]],
        "suites": [s["id"] for s in cases["suites"]],
        "runs": [r["id"] for r in publication.runs["runs"]],
        "setups": [s["id"] for s in publication.setups["setups"]],
    }
    for what, ids in groups.items():
        assert len(ids) == len(set(ids)), what
        assert all(url_safe(i) for i in ids), what
    for case in cases["case_versions"]:
        assert url_safe(case["case"])
        key_ids = [k["id"] for k in case["key"]["expected"] + case["key"]["prohibited"]]
        assert len(key_ids) == len(set(key_ids)) and all(url_safe(i) for i in key_ids)
        assert all(RULE_ID.match(r["id"]) for r in case["rules"])
    for _, answer in publication.answers():
        for engine in filter(None, (answer, answer["rerun"])):
            assert all(url_safe(r["id"]) for r in engine["reviewers"])
            ids = [f["id"] for r in engine["reviewers"] for f in r["findings"]]
            ids += [f["id"] for f in (engine["report"] or {"findings": []})["findings"]]
            assert len(ids) == len(set(ids)) and all(url_safe(i) for i in ids)


def test_every_key_quote_stands_in_its_document(publication):
    for case in publication.cases["case_versions"]:
        document = case["document"]
        lines = document.split("\n")
        assert 6 <= len(lines) <= 12
        whole = collapse(document)
        key = case["key"]
        for finding in key["expected"] + key["prohibited"] + key["voluntary"]:
            passage = finding.get("passage")
            if passage is None:
                continue
            if "lines" in passage:
                first, last = passage["lines"]
                assert 1 <= first <= last <= len(lines)
            if "quote" in passage:
                quote = collapse(passage["quote"])
                assert quote in whole, (case["id"], quote)
                if "lines" in passage:
                    assert quote in collapse("\n".join(lines[first - 1:last])), (case["id"], quote)
                else:
                    assert whole.count(quote) == 1, (case["id"], quote)


def test_keys_refer_only_to_their_own_rules_and_never_prohibit_what_they_expect(publication):
    for case in publication.cases["case_versions"]:
        rules = {r["id"] for r in case["rules"]}
        key = case["key"]
        for finding in key["expected"] + key["prohibited"]:
            assert set(finding["rules"]) <= rules and finding["kind"] in ("flaw", "strength")
        assert all(v["rule"] in rules for v in key["voluntary"])
        lines = case["document"].split("\n")

        def shape(f):
            passage = f["passage"]
            if passage is not None and "lines" not in passage:
                at = [n for n, line in enumerate(lines, 1) if collapse(passage["quote"]) in collapse(line)]
                passage = {**passage, "lines": [at[0], at[0]]}
            return f["kind"], tuple(sorted(f["rules"])), f["missing"], json.dumps(passage, sort_keys=True)

        assert not {shape(p) for p in key["prohibited"]} & {shape(e) for e in key["expected"]}
        if any(f["kind"] == "flaw" for f in key["expected"]):
            assert 1 <= len(key["expected"]) <= 3


def test_pairs_and_suite_refer_to_existing_case_versions(publication):
    by_id = publication.case_by_id
    assert publication.cases["suites"][0]["case_versions"] == list(by_id)
    for pair in publication.cases["pairs"]:
        a, b = (by_id[v] for v in pair["versions"])
        assert a["case"] == b["case"]
        if pair["kind"] == "invariance" and not pair["rules_differ"]:
            assert a["rules"] == b["rules"]
        if pair["rules_differ"]:
            assert a["rules"] != b["rules"]


def test_answers_hold_together(publication):
    for _, answer in publication.answers():
        case = publication.case_by_id[answer["case_version"]]
        document = collapse(case["document"])
        line_count = len(case["document"].split("\n"))
        rules = {r["id"] for r in case["rules"]}
        for engine in filter(None, (answer, answer["rerun"])):
            assert engine["status"] == "completed"
            assert [r["id"] for r in engine["reviewers"]] == ["reviewer-1", "reviewer-2"]
            assert engine["report"] is not None  # every setup goes through the merge
            reviewer_findings = {f["id"]: f for r in engine["reviewers"] for f in r["findings"]}
            for finding in list(reviewer_findings.values()) + engine["report"]["findings"]:
                assert finding["rule"] in rules and set(finding["supporting_rules"]) <= rules
                if finding["location"] is not None:
                    first, last = finding["location"]["lines"]
                    assert 1 <= first <= last <= line_count
            for finding in engine["report"]["findings"]:
                assert set(finding["trace"]) <= reviewer_findings.keys()
            for correction in engine["quote_corrections"]:
                assert reviewer_findings[correction["finding"]]["quote"] == correction["after"]
                assert collapse(correction["after"]) in document
                assert collapse(correction["before"]) not in document


def test_changelog_explains_every_version_the_runs_use(publication):
    entries = []
    for path in sorted((publication.root / "changelog").glob("*.md")):
        head, separator, body = path.read_text("utf-8").partition("\n---\n")
        assert separator and body.strip(), path.name
        header = dict(line.split(": ", 1) for line in head.split("\n"))
        assert header.keys() <= {"date", "category", "explains", "source"}
        assert header["category"] in CATEGORIES and header["source"].startswith("https://")
        entries.append((datetime.date.fromisoformat(header["date"]), header.get("explains")))
    for run in publication.runs["runs"]:
        date = datetime.date.fromisoformat(run["date"])
        needed = {
            f"scorer:{run['scorer']['version']}",
            "report:{version}/runner:{runner}/run-record:{run_record}".format(**run["report"]),
            "assessment:{version}/policy:{policy}".format(**run["assessment"]),
        }
        explained = {explains for entry_date, explains in entries if entry_date <= date}
        assert needed <= explained, run["id"]


def test_a_larger_publication_has_every_kind_of_case_and_answer(larger):
    cases = larger.cases["case_versions"]
    assert len(cases) == 400
    clean = [c for c in cases if not any(e["kind"] == "flaw" for e in c["key"]["expected"])]
    assert 0.04 * len(cases) <= len(clean) <= 0.2 * len(cases)
    assert sum(bool(c["key"]["prohibited"]) for c in cases) > 20
    assert sum(bool(c["key"]["voluntary"]) for c in cases) > 20
    assert any(e["passage"] is None for c in cases for e in c["key"]["expected"])
    assert any(not e["reviewer_expected"] for c in cases for e in c["key"]["expected"])
    kinds = {(p["kind"], p["rules_differ"]) for p in larger.cases["pairs"]}
    assert ("invariance", False) in kinds and ("contrast", False) in kinds
    reruns = quotes = misquotes = locations = corrections = findings = answers = 0
    for _, answer in larger.answers():
        answers += 1
        reruns += answer["rerun"] is not None
        corrections += len(answer["quote_corrections"])
        document = collapse(larger.case_by_id[answer["case_version"]]["document"])
        all_findings = [f for r in answer["reviewers"] for f in r["findings"]] + answer["report"]["findings"]
        findings += len(all_findings)
        for finding in all_findings:
            locations += finding["location"] is not None
            if finding["quote"] is not None:
                quotes += 1
                misquotes += collapse(finding["quote"]) not in document
    assert 0 < reruns < answers / 2
    assert 0 < misquotes < quotes / 10
    assert locations > 0 and corrections > 0
    assert 4 <= findings / answers <= 8  # about the default of six findings per answer


def test_loads_with_the_records_loader(publication):
    records = pytest.importorskip("sitegen.load.records")
    loaded = records.load_records(publication.root)
    assert len(loaded.case_versions) == 30
    assert len(loaded.answers) == 30 * 3 * 2
    assert all(loaded.setups[s].merge for s in loaded.setups)


def test_bench_load_reports_what_it_loaded(publication, capsys):
    pytest.importorskip("sitegen.load.records")
    assert bench_load.main([str(publication.root)]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["case_versions"] == 30 and figures["answers"] == 180
    assert figures["wall_seconds"] >= 0 and figures["peak_rss_mib"] >= figures["baseline_rss_mib"] > 0


def test_bench_score_all_reports_the_command_reproducing_every_run(tmp_path, capsys):
    records = tmp_path / "records"
    shutil.copytree(ROOT / "records", records)
    before = (records / "results.json").read_bytes()
    assert bench_score_all.main([str(records)]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["runs_reproduced"] == len(json.loads(before)["runs"]) > 0
    assert figures["cpu_seconds"] > 0 and figures["peak_rss_mib"] > 0
    assert (records / "results.json").read_bytes() == before


def test_bench_build_command_times_the_command_line_with_the_options_given(capsys, tmp_path):
    """benchmarks/bench_build_command.py runs `sitegen build` itself (what compare_commits.py alternates between commits
    with --detail-runs) into a folder it removes; a folder without results.json is refused before anything runs."""
    records = tmp_path / "records"
    shutil.copytree(ROOT / "records", records)
    before = {path: path.read_bytes() for path in sorted(records.rglob("*")) if path.is_file()}
    assert bench_build_command.main([str(records), "--jobs", "1", "--detail-runs", "1"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    figures = json.loads(out[-1])
    assert "--detail-runs 1" in out[0] and figures["detail_runs"] == 1 and figures["jobs"] == 1
    assert figures["wall_seconds"] > 0 and figures["cpu_seconds"] > 0 and figures["peak_rss_mib"] > 0
    assert {path: path.read_bytes() for path in sorted(records.rglob("*")) if path.is_file()} == before
    (records / "results.json").unlink()
    with pytest.raises(SystemExit, match="has no results.json"):
        bench_build_command.main([str(records)])


def test_changed_only_renders_the_pages_adding_a_run_changes_and_no_other(tmp_path):
    """bench_build.time_changed_only, target 3's denominator: every page but the older runs' case-run pages (and, strictly,
    their own pages too), no more and no fewer; the build's planner put back after, the folder removed."""
    records = run_generator(tmp_path / "records", ["--case-versions", "12", "--runs", "3"])
    assert sitegen_main(["score", "--all", "--records", str(records)]) == 0
    full = tmp_path / "full"
    pages, _, _ = bench_build.render_site(bench_build.check_records(records), jobs=1, write=bench_build.PageWriter(full))
    everything = sum(1 for _ in pages)
    older = [path.relative_to(full).as_posix() for path in full.rglob("*.html") if "run-003" not in path.as_posix()]
    older_case_runs = [p for p in older if re.search(r"/cases/.+/run-00[12]\.html$", p)]
    older_own = [p for p in older if re.search(r"/runs/run-00[12](\.html|/)", p)]
    assert older_case_runs and older_own
    every = bench_build.pages_module.page_tasks
    _, wanted = bench_build.time_changed_only(records, "run-003", tmp_path / "changed", 1)
    _, strictly = bench_build.time_changed_only(records, "run-003", tmp_path / "strict", 1, strict=True)
    assert wanted == everything - len(older_case_runs)
    assert strictly == wanted - len(older_own)
    assert bench_build.pages_module.page_tasks is every and not (tmp_path / "changed").exists()


def test_peak_memory_sums_the_command_and_the_processes_it_forks(capsys, tmp_path):
    """benchmarks/peak_memory.py: a parent holding 60 MiB forks a child that makes 60 MiB of its own; the parent's pages
    shared with the child count once, the child's own once more."""
    import peak_memory

    script = ("import os, time\n"
              "held = b'x' * (60 << 20)\n"
              "pid = os.fork()\n"
              "if pid == 0:\n"
              "    own = b'y' * (60 << 20)\n"
              "    time.sleep(1.5)\n"
              "    os._exit(0)\n"
              "os.waitpid(pid, 0)\n")
    timeline = tmp_path / "timeline.jsonl"
    assert peak_memory.main(["--every", "0.05", "--timeline", str(timeline), "--", sys.executable, "-c", script]) == 0
    report = json.loads(capsys.readouterr().out)
    # every sample in the timeline: the peak is one of them, and the child's 60 MiB of its own is private to it
    samples = [json.loads(line) for line in timeline.read_text().splitlines()]
    assert max(sample["pss_mib"] for sample in samples) == report["peak_pss_mib"]
    assert [sample["seconds"] for sample in samples] == sorted(sample["seconds"] for sample in samples)
    assert any(len(sample["processes"]) == 2 and max(private for _, private in sample["processes"].values()) >= 60
               for sample in samples), "once forked, the parent's 60 MiB are shared and the child's own are private"
    assert len(report["at_peak"]) == 2, "the command and the process it forked"
    assert 120 <= report["peak_pss_mib"] < 200, "60 MiB shared counted once, 60 MiB of the child's own, the interpreters"
    assert report["peak_rss_sum_mib"] >= report["peak_pss_mib"] + 50, "the shared 60 MiB counted twice by RSS"
