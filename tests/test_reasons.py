"""Issue 17 item 2: every reason on the pages in the page's language, complete (every difference), its ids linked."""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from sitegen.build import LOCALES, TEMPLATES, build_site
from sitegen.core import model as m
from sitegen.load.records import load_records
from sitegen.render.catalogs import load_catalogs
from sitegen.render.environment import Renderer
from sitegen.render.links import PageLinks
from sitegen.score.measures.base import Difference, Reason
from sitegen.score.measures.invariant_pairs import UnexpectedOutput
from sitegen.score.measures.registry import REGISTRY
from sitegen.score.reasons import derive_reasons
from sitegen.score.results import read_results

RECORDS = Path(__file__).resolve().parent.parent / "records"


@pytest.fixture(scope="module")
def records() -> m.Records:
    return load_records(RECORDS)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reasons") / "site"
    build_site(RECORDS, out)
    return out


def test_every_recorded_observation_gets_its_structured_reason_back(records):
    """The results record keeps only the English detail; the measures give the structured reason again, the same one."""
    recorded = read_results(records.results_json)
    checked = 0
    for run_id, result in recorded.items():
        reasons = derive_reasons(records, run_id, {o.case_version for o in result.observations})
        for o in result.observations:
            why = reasons[o]
            assert why.code == o.reason
            detail = REGISTRY[o.measure].reason(why.code).detail(why)
            assert detail == o.detail or o.measure == "GROUNDING" and detail in o.detail
            checked += 1
    assert checked == sum(len(r.observations) for r in recorded.values()) > 40


def test_reasons_of_one_case_version_are_those_of_the_whole_run(records):
    """Narrowing the suite to the case versions a page shows gives exactly their observations (pairs keep both versions)."""
    run_id = "2026-09-16-release"
    result = read_results(records.results_json)[run_id]
    everything = derive_reasons(records, run_id, {o.case_version for o in result.observations})
    for cv in {o.case_version for o in result.observations}:
        alone = derive_reasons(records, run_id, {cv})
        assert {o: w for o, w in everything.items() if o.case_version == cv} == {o: w for o, w in alone.items() if o.case_version == cv}


def pages(site: Path, lang: str):
    return sorted((site / lang).rglob("*.html"))


def test_no_page_shows_the_results_files_english_or_hides_a_difference(site):
    for lang in ("sv", "en"):
        for page in pages(site, lang):
            html = page.read_text(encoding="utf-8")
            assert "more difference" not in html, page
            assert 'class="detail"' not in html, page  # the record's English sentence, shown before structured reasons
            if lang == "sv":
                assert "In the results file" not in html and "I resultatfilen" not in html, page


@pytest.mark.parametrize("lang,items", [
    ("sv", ["förväntat fynd papers-missing: hittat i upprepning 2, missat i upprepning 3",
            "antal brister: 2 i upprepning 2, 1 i upprepning 3",
            "antal oväntade fynd: 0 i upprepning 2, 1 i upprepning 3"]),
    ("en", ["expected finding papers-missing: found in repetition 2, missed in repetition 3",
            "number of flaws: 2 in repetition 2, 1 in repetition 3",
            "number of unexpected findings: 0 in repetition 2, 1 in repetition 3"]),
])
def test_a_stability_reason_lists_every_difference_in_the_pages_language(site, lang, items):
    """The record says "(+2 more difference(s))"; the case's run page lists all three, in the page's language."""
    page = site / lang / "cases" / "pa" / "papers-location-unstated" / "2026-09-16-release.html"
    text = " ".join(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")).split())
    for item in items:
        assert item in text


class Reasons(HTMLParser):
    """The links inside every reason of a page, and every id the page has."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "div" and attrs.get("class") == "reason":
            self.depth = 1
        elif self.depth and tag == "div":
            self.depth += 1
        if self.depth and tag == "a":
            self.links.append(attrs["href"])

    def handle_endtag(self, tag):
        if self.depth and tag == "div":
            self.depth -= 1


def parsed(path: Path) -> Reasons:
    parser = Reasons()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_every_id_in_a_reason_links_to_the_element_it_names(site):
    """Expected findings to the key on the case page, findings and repetitions to their rows on the case's run page."""
    targets: dict[Path, set[str]] = {}
    kinds = set()
    for lang in ("sv", "en"):
        for page in pages(site, lang):
            for href in parsed(page).links:
                url = urlsplit(href)
                target = (page.parent / url.path).resolve() if url.path else page  # "#r1": on the page itself
                assert target.is_file(), (page, href)
                if target not in targets:
                    targets[target] = parsed(target).ids
                assert url.fragment in targets[target], (page, href)
                kinds.add("key" if url.fragment.startswith("key-") else "finding" if "-f-" in url.fragment else
                          "repetition" if re.fullmatch(r"r\d+", url.fragment) else url.fragment)
    assert {"key", "finding", "repetition"} <= kinds


# one reason of every code of every measure, as the measures make them (see each measure's module)
SAMPLES = {
    ("GROUNDING", "nothing"): dict(expected="e1", closest=None),
    ("GROUNDING", "kind"): dict(expected="e1", closest="f1"),
    ("GROUNDING", "rule"): dict(expected="e1", closest="f1"),
    ("GROUNDING", "rule.support"): dict(expected="e1", closest="f1"),
    ("GROUNDING", "missing"): dict(expected="e1", closest="f1"),
    ("GROUNDING", "evidence"): dict(expected="e1", closest="f1"),
    ("GROUNDING", "taken"): dict(expected="e1", closest="f1"),
    ("GROUNDING", "rerun.crashed"): dict(expected="e1", miss="evidence", closest="f1"),
    ("CLEAN_CASE_FLAWS", "flaw"): dict(flaws=("f1", "f2")),
    ("PROHIBITED_OUTPUT", "prohibited"): dict(hits=(("f1", "p1"),)),
    ("QUOTE_FIDELITY", "quote.empty"): dict(finding="f1", quote=" "),
    ("QUOTE_FIDELITY", "quote.not-found"): dict(finding="f1", quote="nowhere"),
    ("REDUCER_SURVIVAL", "added"): dict(finding="f1"),
    ("REDUCER_SURVIVAL", "lost"): dict(reviewer_finding="f1"),
    ("REDUCER_SURVIVAL", "changed.rule"): dict(finding="f1", rule="R-2", reviewer_rule="R-1"),
    ("REDUCER_SURVIVAL", "trace"): dict(finding="f1", trace=("f3",), reviewer_finding="f2"),
    ("REDUCER_SURVIVAL", "changed.kind"): dict(finding="f1", kind="strength", expected_kind="flaw"),
    ("REDUCER_SURVIVAL", "changed.missing"): dict(finding="f1", missing=True),
    **{("IDENTICAL_INPUT_STABILITY", code): dict(repetitions=(1, 2), differences=(
        Difference("expected:e1", "matched", "missed"), Difference("flaws", 1, 0), Difference("strengths", 0, 1),
        Difference("unexpected", 2, 0), Difference("prohibited", 0, 1)))
       for code in ("outcome", "count.flaws", "count.strengths", "count.unexpected", "count.prohibited")},
    **{("INVARIANT_PAIRS", code): dict(pair="p", left="a", right="b", repetition=1, differences=(
        Difference("reviewer:e1", ("flaw", True, "R-1"), "not found"), Difference("report:e2", "not in key", ("strength", False, "R-2")),
        Difference("reviewer:unexpected", 1, 0),
        Difference("report:unexpected", UnexpectedOutput((("flaw", "R-3", False),)), UnexpectedOutput(())),
        Difference("merge:e1", "kept", "lost"), Difference("merge:e2", "changed", "added"), Difference("merge:e3", "none", "kept")))
       for code in ("expected", "count.unexpected", "unexpected", "merge")},
}


def test_the_samples_cover_every_reason_code_of_every_measure():
    assert set(SAMPLES) == {(measure.id, text.code) for measure in REGISTRY.values() for text in measure.reasons}


@pytest.fixture(scope="module")
def reason_text(records):
    catalogs = load_catalogs(LOCALES, records.config.languages)
    made = {}
    for lang in ("sv", "en"):
        renderer = Renderer(lang, catalogs[lang], templates=TEMPLATES, config=records.config, languages=("sv", "en"),
                            build_date="2026-12-01")
        text = renderer.env.get_template("reasons.html.j2").module.reason_text
        links = PageLinks(None, "../", renderer.env.globals["detailed"], renderer.env.globals["word"])
        made[lang] = lambda o, why, run_id, text=text, links=links: text(o, why, run_id, links)
    return made


@pytest.mark.parametrize("measure,code", sorted(SAMPLES))
def test_every_reason_code_is_worded_in_both_languages(reason_text, measure, code):
    stage = m.REPORT if measure == "REDUCER_SURVIVAL" else m.REVIEWER
    repetition = "1-2" if measure == "IDENTICAL_INPUT_STABILITY" else "1"
    results = (m.PENDING, m.FAILED, m.DISMISSED) if measure == "GROUNDING" else (m.FAILED,)
    for result in results:
        params = dict(SAMPLES[(measure, code)], **({"rerun_finding": "f9"} if result == m.DISMISSED else {}))
        why = Reason(code, **params)
        o = m.Observation(measure, "cv", repetition, stage, "e1", result, code, "")
        sv, en = (" ".join(re.sub(r"<[^>]+>", " ", str(reason_text[lang](o, why, "run"))).split()) for lang in ("sv", "en"))
        assert sv and en and sv != en
        shown = str(reason_text["sv"](o, why, "run"))
        assert f"<code>{code}</code>" not in shown  # the fallback for a code the template does not know
        for d in params.get("differences", ()):
            named = d.key.split(":")[-1]
            if ":" in d.key and named != "unexpected":
                assert f"<code>{named}</code>" in shown  # the expected finding each difference concerns
        if "differences" in params:
            assert shown.count("<li>") == len(params["differences"])


def test_every_measure_has_a_wording_form_and_the_template_knows_each():
    from sitegen.render.reasons import REASON_FORMS

    assert set(REASON_FORMS) == set(REGISTRY)
    template = (TEMPLATES / "reasons.html.j2").read_text(encoding="utf-8")
    assert all(f'form == "{form}"' in template for form in REASON_FORMS.values())


def test_the_verifying_pass_keeps_every_reason_the_pages_would_derive_again(records):
    """The build takes the reasons from the pass that verifies the record (it observes every run anyway); they are the
    very reasons the measures give when a page's case versions are judged again."""
    from sitegen.score.reasons import unpack_reasons
    from sitegen.score.verify import verify_published

    recorded = read_results(records.results_json)
    verified = verify_published(records, recorded)
    assert set(verified.reasons) == {r.id for r in records.published_runs if recorded[r.id].outcome != m.CRASHED_STATE}
    for run_id, packed in verified.reasons.items():
        kept = unpack_reasons(packed)
        observations = recorded[run_id].observations
        assert set(kept) == set(observations)
        assert kept == dict(derive_reasons(records, run_id, {o.case_version for o in observations}))


def test_pages_with_the_passes_reasons_are_those_with_reasons_derived_again(records, site, tmp_path):
    """Rendering from results alone (reasons derived per page) gives the same bytes as the build."""
    from sitegen.build import check_records, render_site

    checked = check_records(RECORDS)
    assert checked.reasons
    pages, _, _ = render_site(checked)
    with_pass = {p.path: p.data for p in pages}
    import dataclasses

    pages, _, _ = render_site(dataclasses.replace(checked, reasons={}))
    derived = {p.path: p.data for p in pages}
    assert with_pass == derived
    assert with_pass["sv/runs/2026-09-16-release.html"] == (site / "sv" / "runs" / "2026-09-16-release.html").read_bytes()


def test_a_miss_of_something_wholly_absent_speaks_of_no_passage(records, reason_text):
    """METHOD.md: an expected finding without a passage is matched by quoting nothing. Its miss said "does not point at
    the passage of" it, beside a key row saying it has none: the reason now says so (the record's detail, sealed, is kept),
    and a miss of an expected finding with a passage keeps its words."""
    recorded = read_results(records.results_json)
    seen = {True: 0, False: 0}
    for run_id, result in recorded.items():
        reasons = derive_reasons(records, run_id, {o.case_version for o in result.observations})
        for o in result.observations:
            if o.measure != "GROUNDING":
                continue
            why = reasons[o]
            key = {e.id: e for e in records.case_versions[o.case_version].key.expected}[why.expected]
            absent = key.passage is None
            assert why.params.get("no_passage", False) is absent
            seen[absent] += 1
            code = why.miss if why.code == "rerun.crashed" else why.code
            words = {lang: " ".join(re.sub(r"<[^>]+>", " ", str(reason_text[lang](o, why, run_id))).split())
                     for lang in ("sv", "en")}
            if absent:
                assert not re.search(r"passage of|its passage", words["en"]), words
                assert not re.search(r"textstället för|dess textställe", words["sv"]), words
                if code == "evidence":
                    assert "nothing is to be quoted" in words["en"] and "inget ska citeras" in words["sv"], words
            elif code in ("evidence", "kind", "nothing"):
                assert re.search(r"passage of|its passage", words["en"]), words
                assert re.search(r"textstället för|dess textställe", words["sv"]), words
    assert seen[True] and seen[False], seen


def test_a_missed_row_of_something_wholly_absent_speaks_of_no_passage(site):
    """A case-run page's row of a missed expected finding without a passage says what the closest finding did instead of
    "passage not pointed at"."""
    rows = 0
    for lang, absent, wrong, right in (
            ("en", "No passage: the expected finding is that something is wholly absent.", "passage not pointed at",
             "quotes or locates a passage where nothing is to be quoted"),
            ("sv", "Inget textställe: det förväntade fyndet är att något saknas helt.", "textstället pekas inte ut",
             "citerar eller pekar ut ett textställe där inget ska citeras")):
        for page in (site / lang / "cases").rglob("*.html"):
            for row in re.findall(r"<tr id=[^>]*><th><a href=\"index.html#key-.*?</tr>", page.read_text(), re.S):
                if absent in row:
                    assert wrong not in row, (page, row)
                    rows += right in row
    assert rows > 0


@pytest.fixture(scope="module")
def packed_in_chunks_of_one(records):
    """The verifying pass's packed reasons with a chunk of one case version, so a small suite has many groups."""
    from sitegen.score import reasons as module
    from sitegen.score.verify import verify_published

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "REASON_CHUNK", 1)
        verified = verify_published(records, read_results(records.results_json))
    return verified.reasons


def test_packed_reasons_are_grouped_by_measure_and_case_version_chunk(records, packed_in_chunks_of_one):
    """Each group holds the reasons of one measure's observations of one chunk of case versions (in sorted order), and
    all groups together are every reason the run has."""
    from sitegen.score.reasons import REASON_CHUNK, reason_groups, unpack_reasons
    import pickle
    import zlib

    recorded = read_results(records.results_json)
    assert REASON_CHUNK > 1
    sizes = []
    for run_id, packed in packed_in_chunks_of_one.items():
        starts, blobs = reason_groups(packed)
        versions = sorted({o.case_version for o in unpack_reasons(packed)})
        assert list(starts) == versions  # a chunk of one: every case version starts one
        sizes.append(len(blobs))
        for (measure, chunk), blob in blobs.items():
            group = pickle.loads(zlib.decompress(blob))
            assert group and {(o.measure, o.case_version) for o in group} == {(measure, starts[chunk])}
        assert set(unpack_reasons(packed)) == set(recorded[run_id].observations)
    assert max(sizes) > 2


def test_a_reason_source_unpacks_only_the_groups_a_page_shows_and_keeps_a_few(records, packed_in_chunks_of_one, monkeypatch):
    """A case version's page unpacks its own groups, once; a source keeping one group still gives every reason right."""
    from sitegen.score import reasons as module

    unpacked: list[bytes] = []
    decompress = module.zlib.decompress

    class CountingZlib:
        @staticmethod
        def decompress(blob):
            unpacked.append(blob)
            return decompress(blob)

    monkeypatch.setattr(module, "zlib", CountingZlib)
    recorded = read_results(records.results_json)
    run_id, packed = max(packed_in_chunks_of_one.items(), key=lambda item: len(module.reason_groups(item[1])[1]))
    everything = dict(module.unpack_reasons(packed))
    observations = recorded[run_id].observations
    cv = observations[0].case_version
    shown = [o for o in observations if o.case_version == cv]
    source = module.ReasonSource(records, packed_in_chunks_of_one)
    unpacked.clear()
    assert source.reasons(run_id, shown) == {o: everything[o] for o in shown}
    assert len(unpacked) == len({o.measure for o in shown}) < len(module.reason_groups(packed)[1])
    source.reasons(run_id, shown)
    assert len(unpacked) == len({o.measure for o in shown}), "a group is unpacked once while kept"
    narrow = module.ReasonSource(records, packed_in_chunks_of_one, keep=1)
    for obs in observations:
        assert narrow.reasons(run_id, [obs]) == {obs: everything[obs]}
    assert narrow.reasons(run_id, observations) == everything
