"""Issue 15, page weight (fourth part): a case-run page says each fact once, in fewer bytes, with nothing a reader needs lost."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from sitegen.core import model as m
from sitegen.render.cases import RepetitionInput
from sitegen.score.measures.base import Reason
from sitegen.score.measures.registry import MEASURES, TITLES

from sitegen.build import build_site

RECORDS = Path(__file__).resolve().parent.parent / "records"
PAGE = "cases/cu/cure-unchecked/2026-09-16-release.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compact") / "site"
    build_site(RECORDS, out)
    return out


def read(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def case_run_pages(site: Path, lang: str) -> dict[str, str]:
    return {p.relative_to(site / lang).as_posix(): p.read_text(encoding="utf-8")
            for p in (site / lang / "cases").rglob("*.html") if p.name != "index.html"}


def stage_sections(html: str) -> dict[str, str]:
    """Each stage section of a case-run page by its id (r1-reviewer, r2-rerun-report, ...), up to its end."""
    return {sid: body for sid, body in re.findall(r'<section id="(r\d+(?:-rerun)?-[a-z]+)"[^>]*class="stage">(.*?)</section>', html, re.S)}


def test_a_matched_expected_finding_is_named_in_the_row_of_the_finding_that_matched_it_and_has_no_row_of_its_own(site):
    """Its row said "matched" and named the finding, whose own row says the same with the evidence; a line named each
    pair again. Now the stage's line only counts them, and the finding's row names the expected finding it matched.
    Every expected finding of a stage is still accounted for: matched in a finding's row, or missed in a row that says why."""
    html = read(site, "en/" + PAGE)
    r1 = stage_sections(html)["r1-reviewer"]
    line = re.search(r'<p class="matched">(.*?)</p>', r1, re.S).group(1)
    assert re.fullmatch(r"(The key's one expected finding matched|All \d+ expected findings of the key matched|\d+ of the key's \d+ expected findings? matched)\.", line), line
    assert '<tr id="r1-reviewer-checker-missing">' not in html
    # a finding's row says it matched that expected finding, linked to its key row on the case page
    rows = re.findall(r'<tr id="r1-reviewer-f-[^"]+">(.*?)</tr>', r1, re.S)
    assert any("matched" in row and 'href="index.html#key-checker-missing"' in row for row in rows), r1
    # in the second repetition the same expected finding was missed: a row that says why
    assert '<tr id="r2-reviewer-checker-missing">' in html
    sv = read(site, "sv/" + PAGE)
    assert re.search(r"förväntade fynd (i facit )?hittades\.</p>", sv), "Swedish"


def matched_in_rows(html: str, body: str, sid: str) -> set[str]:
    """The expected findings a stage's findings matched, by their rows' verdict cells; a row judged and worded as an
    earlier row of the page has that row's verdict."""
    found = set()
    rows = re.findall(rf'<tr id="{sid}-f-[^"]+">(.*?)</tr>', body, re.S)
    # a stage whose every finding is judged and worded as an earlier row lists them, each linking that row
    rows += [f'<td colspan="2" class="again"><a href="#{target}">' for target in re.findall(rf'<li id="{sid}-f-[^"]+">.*?: <a href="#([^"]+)">[^<]*</a>[^<]*</li>', body)]
    for row in rows:
        alike = re.search(r'<td colspan="2" class="again">[^<]*<a href="#([^"]+)">', row)
        if alike:
            row = re.search(rf'<tr id="{alike.group(1)}">(.*?)</tr>', html, re.S).group(1)
            assert 'class="again"' not in row, alike.group(1)
        verdict = re.search(r"</th>\s*<td>(.*?)</td>", row, re.S).group(1)
        if "matched" in verdict:
            found |= set(re.findall(r'href="index.html#key-([^"]+)"', verdict))
    return found


def test_every_expected_finding_of_every_judged_stage_is_either_matched_in_a_row_or_has_a_missed_row(site):
    for path, html in case_run_pages(site, "en").items():
        for sid, body in stage_sections(html).items():
            if "<table" not in body and '<ul class="alike">' not in body and '<p class="matched">' not in body:
                continue  # not judged (a crashed run, a repeated answer) or no findings and no key
            missed = re.findall(rf'<tr id="{sid}-([^"]+)"><th><a href="index.html#key-', body)
            line = re.search(r'<p class="matched">(.*?)</p>', body, re.S)
            if line is not None:
                count = re.match(r"(\d+) of|All (\d+)|The key's one", line.group(1))
                matched = int(count.group(1) or count.group(2) or 1)
                assert len(matched_in_rows(html, body, sid)) == matched, (path, sid)
            for expected in missed:
                row = body[body.index(f'<tr id="{sid}-{expected}">'):]
                assert "missed" in row[: row.index("</tr>")], (path, sid, expected)


def unsettled_in_downloads(site: Path) -> dict[tuple[str, str, str, str], tuple[int, int]]:
    """(run, case version, repetition, measure) -> (pending, dismissed), counted from the published results file's
    observations as a case's own counts take them: a pair of versions' in both versions, a pair of repetitions' in both."""
    import json

    twins = {p["id"]: p["versions"] for p in json.loads((site / "downloads" / "granska-quality-cases.json").read_text())["pairs"]}
    found: dict[tuple[str, str, str, str], list[int]] = {}
    for run in json.loads((site / "downloads" / "granska-quality-results.json").read_text())["runs"]:
        for o in run["observations"]:
            if o["result"] not in ("pending", "dismissed"):
                continue
            versions = twins[o["subject"]] if o["measure"] == "INVARIANT_PAIRS" else [o["case_version"]]
            for cv in dict.fromkeys(versions):
                for rep in dict.fromkeys(o["repetition"].split("-")):
                    found.setdefault((run["run"], cv, rep, o["measure"]), [0, 0])[o["result"] == "dismissed"] += 1
    return {key: (pending, dismissed) for key, (pending, dismissed) in found.items()}


def test_the_counts_of_every_repetition_are_one_table_whose_cells_are_the_downloaded_counts(site):
    """The passed-of-observed list was written under each repetition, each measure's name with it; one table has a
    column per repetition now. Its cells are checked against case-results.csv, the download a reader recomputes, and
    the observations awaiting confirmation or dismissed by a rerun each cell names against the results file's."""
    rows: dict[tuple[str, str, str], dict[str, str]] = {}
    with (site / "downloads" / "case-results.csv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            rows[(row["run"], row["case_version"], row["repetition"])] = row
    unsettled = unsettled_in_downloads(site)
    assert {(p > 0, d > 0) for p, d in unsettled.values()} == {(True, False), (False, True)}, "the records have both"
    named = 0
    checked = 0
    for path, html in case_run_pages(site, "en").items():
        cv, run = path.split("/")[2], path.split("/")[3][: -len(".html")]
        if "<table class=\"counts\">" not in html:
            assert not any(key[:2] == (run, cv) for key in rows) or "did not finish" in html, path
            continue
        assert html.count('<table class="counts">') == 1 and '<ul class="counts">' not in html, path
        table = html[html.index('<table class="counts">'):html.index("</table>", html.index('<table class="counts">'))]
        assert re.search(r'<th colspan="\d+">Repetition</th>', table), path
        # each repetition heads its column by number, linking its section: the page's table of contents
        reps = re.findall(r'<th><a href="#r(\d+)">\1</a></th>', table)
        assert reps and all(f'<h2 id="r{rep}">' in html for rep in reps), path
        # a measure is named by its title (its id is on the run page and the method page)
        measure_of = {title: measure for measure, title in TITLES.items()}
        shown = {measure_of[title]: re.findall(r"<td>(.*?)</td>", cells)
                 for title, cells in re.findall(r'<tr><th>([^<]*)</th>(.*?)</tr>', table)}
        for measure in MEASURES:
            expected = []
            for rep in reps:
                row = rows[(run, cv, rep)]
                passed, observed = row[f"{measure}_passed"], row[f"{measure}_observed"]
                pending, dismissed = unsettled.get((run, cv, rep, measure), (0, 0))
                said = [f"{pending} awaiting confirmation"] * bool(pending) + [f"{dismissed} dismissed by rerun"] * bool(dismissed)
                named += bool(said)
                expected.append(None if observed == "NOT_OBSERVED" else f"{passed} of {observed}"
                                + (f" <small>({', '.join(said)})</small>" if said else ""))
            if all(e is None for e in expected):
                assert measure not in shown, (path, measure)
                continue
            for cell, want in zip(shown[measure], expected, strict=True):
                assert (want is None and "Not observed" in cell) or cell == want, (path, measure, cell, want)
                checked += 1
    assert checked > 100
    assert named == len(unsettled), "every cell with a pending or dismissed observation says so"


def test_observations_alike_but_for_their_stage_are_listed_once_naming_each_stage():
    """A stability difference found in the reviewers' answer and again, identical, in the report was listed twice with
    the same reason; once now, with a link to each stage. Observations whose reasons differ stay apart."""
    alike = Reason("count.flaws", differences=(("flaws", 1, 2),))
    other = Reason("count.flaws", differences=(("flaws", 2, 3),))
    obs = [m.Observation("IDENTICAL_INPUT_STABILITY", "c", "1-2", stage, "-", m.FAILED, "count.flaws", "x")
           for stage in ("reviewer", "report")]
    third = m.Observation("IDENTICAL_INPUT_STABILITY", "c", "1-3", "reviewer", "-", m.FAILED, "count.flaws", "x")
    fourth = m.Observation("IDENTICAL_INPUT_STABILITY", "c", "1-3", "report", "-", m.FAILED, "count.flaws", "x")
    rep = RepetitionInput(1, "BLOCK", None, None, (), (), (*obs, third, fourth),
                          {obs[0]: alike, obs[1]: alike, third: alike, fourth: other})
    listed = rep.listed
    assert [(o.repetition, sections) for o, sections, *_ in listed] == [
        ("1-2", (("r1-reviewer", "reviewer"), ("r1-report", "report"))),
        ("1-3", (("r1-reviewer", "reviewer"),)),
        ("1-3", (("r1-report", "report"),)),
    ]
    # seen from the pair's second repetition, where it is explained under the first, it is listed the same way
    second = RepetitionInput(2, "BLOCK", None, None, (), (), tuple(obs), {obs[0]: alike, obs[1]: alike})
    assert [(len(sections), under, why) for _, sections, _, under, why in second.listed] == [(2, "1", None)]


def test_a_listed_observation_of_two_stages_links_each_on_the_page(site):
    html = read(site, "en/cases/ap/appeal-info-missing/2026-09-02-nightly.html")
    joined = re.findall(r'<a href="#(r\d-reviewer)">reviewers</a> and <a href="#(r\d-report)">delivered report</a>', html)
    assert joined
    for reviewer, report in joined:
        assert reviewer.split("-")[0] == report.split("-")[0]
        assert f'id="{reviewer}"' in html and f'id="{report}"' in html
    sv = read(site, "sv/cases/ap/appeal-info-missing/2026-09-02-nightly.html")
    assert len(re.findall(r'</a> och <a href="#r\d-report">', sv)) == len(joined)


def test_a_row_an_earlier_row_shows_says_so_in_a_few_words(site):
    """"Kind, rules, evidence and wording as finding X above." was written on every such row (often half the rows)."""
    for lang, words, alike in (("en", r'As <a href="#[^"]+">[^<]+</a>(?: in repetition \d+)? above\.',
                                r'Judged and worded as <a href="#[^"]+">[^<]+</a>(?: in repetition \d+)? above\.'),
                               ("sv", r'Som <a href="#[^"]+">[^<]+</a>(?: i upprepning \d+)? ovan\.',
                                r'Bedömt och formulerat som <a href="#[^"]+">[^<]+</a>(?: i upprepning \d+)? ovan\.')):
        pages = case_run_pages(site, lang)
        again = [cell for html in pages.values() for cell in re.findall(r'<td class="again">(.*?)</td>', html)]
        assert all(re.fullmatch(words, cell) for cell in again), again[:3]
        # where the earlier row's verdict is the same too, one cell under both columns says so
        same = [cell for html in pages.values() for cell in re.findall(r'<td colspan="2" class="again">(.*?)</td>', html)]
        assert same and all(re.fullmatch(alike, cell) for cell in same), same[:3]


def test_a_row_repeating_an_earlier_rows_content_with_another_verdict_gives_its_own_verdict():
    """Two findings of one reviewer alike in everything they say: the first matches the expected finding, the second is
    its duplicate. The second row links to the first for its wording but keeps its own verdict: it is not "judged as" it."""
    from factories import case_version, engine, expected, finding, records as make_records
    from sitegen.render.cases import collect_case, render_case
    from sitegen.render.catalogs import load_catalogs
    from sitegen.render.environment import Renderer
    from sitegen.score.scoring import verdict_source

    root = Path(__file__).resolve().parent.parent
    cv = case_version("cv", expected_findings=(expected(),))
    records = make_records((cv,), {("cv", 1): (engine([finding("f1"), finding("f2")]), None)})
    run = records.runs[0]
    bundle = collect_case(records, "cv", (run,), {}, {}, verdicts=verdict_source(records))
    (rep,) = bundle.runs[0].repetitions
    (_, verdict), = rep.verdicts
    assert [v.category for v in verdict.findings] == ["matched", "duplicate"]
    assert rep.earlier == {("r1-reviewer", "f2"): ("r1-reviewer-f-f1", "f1", False, None)}
    catalogs = load_catalogs(root / "sitegen" / "locales", ["sv", "en"])
    for lang, again, alike in (("en", "As", "Judged and worded as"), ("sv", "Som", "Bedömt och formulerat som")):
        renderer = Renderer(lang, catalogs[lang], templates=root / "sitegen" / "templates", config=records.config, languages=("sv", "en"),
                            build_date="")
        page = next(p for p in render_case(renderer, bundle) if p.path.endswith(f"{run.id}.html")).data.decode()
        row = re.search(r'<tr id="r1-reviewer-f-f2">(.*?)</tr>', page, re.S).group(1)
        assert alike not in row and 'colspan="2"' not in row
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        assert len(cells) == 2
        assert 'class="st-neutral d"' in cells[0] and 'href="index.html#key-e1"' in cells[0], cells[0]
        assert re.fullmatch(rf'{again} <a href="#r1-reviewer-f-f1">f1</a> (above|ovan)\.', cells[1]), cells[1]


def test_a_stage_whose_every_finding_an_earlier_row_shows_judged_alike_lists_them_without_a_table(site):
    """A report that repeats its reviewers' findings was a table of rows each saying "Judged and worded as X above.";
    now a line saying so once and a list, each item naming its finding (and what it was merged from) and linking the row
    that shows it with its verdict. A table is left only where some finding needs its own verdict or wording."""
    listed = 0
    for lang in ("en", "sv"):
        for path, html in case_run_pages(site, lang).items():
            for sid, body in stage_sections(html).items():
                for table in re.findall(r'<table class="findings stack">(.*?)</table>', body, re.S):
                    rows = re.findall(r'<tr id="[^"]+">(.*?)</tr>', table, re.S)
                    assert not all('<td colspan="2" class="again">' in row for row in rows), (path, sid)
                for item, target in re.findall(rf'<li id="({sid}-f-[^"]+)">.*?: <a href="#([^"]+)">[^<]*</a>[^<]*</li>', body):
                    row = re.search(rf'<tr id="{target}">(.*?)</tr>', html, re.S).group(1)
                    assert 'class="st-' in row and re.search(r"<p[ >][^<]", row), (path, item, target)
                    listed += 1
    assert listed > 10


# a link from one row to another: the row's id, then the link's words up to and after it (up to the end of the cell or item)
_LINKS = re.compile(r'<(?:tr|li) id="(r\d+)-[^"]*"[^>]*>(?:(?!</tr>|</li>).)*?(As|Som|Judged and worded as|Bedömt och formulerat som'
                    r'|as shown for|som visas för|: )\s?<a href="#(r\d+)-[^"]+">[^<]+</a>([^<]*)', re.S)


def test_a_link_to_a_row_of_another_repetition_names_that_repetition(site):
    """The same finding ids recur in every repetition: "As r2-f2 above" in repetition 2, linking repetition 1's r2-f2,
    read as repetition 2's own r2-f2, which may be just below. A link to a row of another repetition says which; a link
    within the repetition says nothing more."""
    named = plain = 0
    for lang, word in (("en", "in repetition"), ("sv", "i upprepning")):
        for path, html in case_run_pages(site, lang).items():
            for own, _, target, after in _LINKS.findall(html):
                if own == target:
                    assert word not in after, (path, own, after)
                    plain += 1
                else:
                    assert after.startswith(f" {word} {target[1:]}"), (path, own, target, after)
                    named += 1
    assert named > 10 and plain > 10, (named, plain)


def test_a_table_of_counts_with_a_pair_measure_says_a_pairs_observation_counts_in_both(site):
    """IDENTICAL_INPUT_STABILITY observes pairs of repetitions and INVARIANT_PAIRS pairs of versions (METHOD.md); each such
    observation counts in both of its columns (or both versions' pages), so a row added up takes it twice: said under the
    table, and only where such a row is."""
    from sitegen.render.catalogs import load_catalogs
    from sitegen.score.measures.registry import PAIR_MEASURES, REGISTRY

    assert PAIR_MEASURES == {"IDENTICAL_INPUT_STABILITY", "INVARIANT_PAIRS"}
    catalogs = load_catalogs(Path(__file__).resolve().parent.parent / "sitegen" / "locales", ["sv", "en"])
    seen = {True: 0, False: 0}
    for lang, note in (("en", "An observation of a pair counts in both of its repetitions or versions."),
                       ("sv", "En observation av ett par räknas hos båda dess upprepningar eller versioner.")):
        titles = {catalogs[lang].gettext(REGISTRY[measure].title) for measure in PAIR_MEASURES}
        for path, html in case_run_pages(site, lang).items():
            found = re.search(r'<table class="counts">(.*?)</table>\n(?:</div>\n)?(<p class="note">[^<]*</p>)?', html, re.S)
            if found is None:
                continue
            paired = any(f"<th>{title}</th>" in found.group(1) for title in titles)
            assert (found.group(2) == f'<p class="note">{note}</p>') is paired, (path, found.group(2))
            seen[paired] += 1
    assert seen[True], seen


def test_a_finding_with_a_location_and_no_quote_says_so_beside_its_lines():
    """A finding pointing at lines by location shows those lines marked, as a quote's would be: whether a finding quoted
    or located decides QUOTE_FIDELITY and the evidence, so the row says "a location, no quote"; a quoting row does not."""
    from factories import case_version, engine, expected, finding, records as make_records
    from sitegen.render.cases import collect_case, render_case
    from sitegen.render.catalogs import load_catalogs
    from sitegen.render.environment import Renderer
    from sitegen.score.scoring import verdict_source

    root = Path(__file__).resolve().parent.parent
    cv = case_version("cv", expected_findings=(expected(),))
    located = finding("f2", kind="strength", rule="R-2", missing=False, quote=None, location=(2, 2), wording="Objektet anges.")
    records = make_records((cv,), {("cv", 1): (engine([finding("f1"), located]), None)})
    run = records.runs[0]
    bundle = collect_case(records, "cv", (run,), {}, {}, verdicts=verdict_source(records))
    catalogs = load_catalogs(root / "sitegen" / "locales", ["sv", "en"])
    for lang, words in (("en", "a location, no quote"), ("sv", "en plats, inget citat")):
        renderer = Renderer(lang, catalogs[lang], templates=root / "sitegen" / "templates", config=records.config, languages=("sv", "en"),
                            build_date="")
        page = next(p for p in render_case(renderer, bundle) if p.path.endswith(f"{run.id}.html")).data.decode()
        quoting = re.search(r'<tr id="r1-reviewer-f-f1">(.*?)</tr>', page, re.S).group(1)
        locating = re.search(r'<tr id="r1-reviewer-f-f2">(.*?)</tr>', page, re.S).group(1)
        assert words in locating and '<ol class="excerpt"' in locating and 'href="index.html#L2"' in locating, locating
        assert words not in quoting and "<mark>" in quoting, quoting


def counts_cells(html: str, title: str) -> list[str]:
    """The cells of one measure's row in a case-run page's table of counts."""
    table = html[html.index('<table class="counts">'):html.index("</table>", html.index('<table class="counts">'))]
    (cells,) = re.findall(rf"<tr><th>{re.escape(title)}</th>(.*?)</tr>", table)
    return re.findall(r"<td>(.*?)</td>", cells)


def test_a_count_with_observations_awaiting_confirmation_or_dismissed_by_a_rerun_says_how_many(site):
    """METHOD.md: a pending miss is not yet a failure, and a dismissed miss counts as passed and is marked "dismissed by
    rerun" wherever it is shown. The run page's table of measures has a column for each; a case-run page's cell of
    counts names them too, in text, in the run page's words: "2 of 4" read as two failures where both await a rerun."""
    grounding = {"en": "Finds what the key expects", "sv": "Rätt fynd på rätt ställe"}
    # the nightly of 2026-09-02 has no rerun recorded: appeal-missing awaits confirmation in every stage and repetition
    for lang, cell in (("en", "2 of 4 <small>(2 awaiting confirmation)</small>"),
                       ("sv", "2 av 4 <small>(2 väntar på bekräftelse)</small>")):
        html = read(site, f"{lang}/cases/ap/appeal-info-missing/2026-09-02-nightly.html")
        assert counts_cells(html, grounding[lang]) == [cell] * 3
    # the release of 2026-09-16 reran repetition 3 of papers-location-unstated, which found what it first missed in both
    # stages: those count as passed, and the cell says they were dismissed; the other repetitions passed plainly
    for lang, cell in (("en", "2 of 2 <small>(2 dismissed by rerun)</small>"),
                       ("sv", "2 av 2 <small>(2 avskrivna vid omkörning)</small>")):
        html = read(site, f"{lang}/cases/pa/papers-location-unstated/2026-09-16-release.html")
        assert counts_cells(html, grounding[lang]) == [cell.split(" <small>")[0]] * 2 + [cell]
    # a cell with neither carries nothing more: most cells of the site's most numerous pages
    plain = read(site, "en/cases/cu/cure-unchecked/2026-09-16-release.html")
    assert "<small>" not in plain[plain.index('<table class="counts">'):plain.index("</table>")]


def test_a_count_names_one_or_several_in_each_language_and_both_kinds_together():
    """The words agree with their number (Swedish "avskriven", "avskrivna"), and a cell with both names both."""
    from sitegen.render.catalogs import load_catalogs
    from sitegen.render.environment import Renderer

    from factories import records as make_records

    root = Path(__file__).resolve().parent.parent
    catalogs = load_catalogs(root / "sitegen" / "locales", ["sv", "en"])
    config = make_records((), {}).config
    words = {lang: Renderer(lang, catalogs[lang], templates=root / "sitegen" / "templates", config=config, languages=("sv", "en"),
                            build_date="").env.globals["word"] for lang in ("sv", "en")}
    assert str(words["en"].passed_of[(3, 5, 1, 1)]) == "3 of 5 <small>(1 awaiting confirmation, 1 dismissed by rerun)</small>"
    assert str(words["sv"].passed_of[(3, 5, 1, 1)]) == "3 av 5 <small>(1 väntar på bekräftelse, 1 avskriven vid omkörning)</small>"
    assert str(words["sv"].passed_of[(1, 4, 3, 0)]) == "1 av 4 <small>(3 väntar på bekräftelse)</small>"
    assert str(words["en"].passed_of[(4, 4, 0, 0)]) == "4 of 4"
    assert "Not observed" in str(words["en"].passed_of[None])


def test_an_invariance_pairs_observation_is_named_by_its_pair_not_by_the_stage_of_its_first_difference(site):
    """METHOD.md: an INVARIANT_PAIRS observation is one pair in one repetition, both versions compared in every stage
    and the merge. The results record gives a failed one the stage of its first difference, which the list of
    observations named ("failed: Unmoved by details that must not matter, Reviewers"), though the differences were in
    the report and the merge too. It is named by its pair now, on both versions' pages, in both languages; its reason
    lists every difference under its stage."""
    for lang, label, stages in (("en", "Unmoved by details that must not matter, pair <code>licence-gender</code>",
                                 ("Reviewers, ", "Delivered report, ", "In the merge, ")),
                                ("sv", "Oberoende av detaljer som inte ska spela roll, paret <code>licence-gender</code>",
                                 ("Granskare, ", "Levererad rapport, ", "I sammanslagningen, "))):
        for version in ("licence-gender-flawed-feminine", "licence-gender-flawed-masculine"):
            html = read(site, f"{lang}/cases/li/{version}/2026-09-16-release.html")
            r2 = html[html.index('<h2 id="r2"'):html.index('<h2 id="r3"')]
            (item,) = [li for li in re.findall(r"<li><span class=\"st-[^\"]*\">[^<]*</span>: (.*?)</div></li>", r2, re.S)
                       if "licence-gender</code>" in li.split("<div")[0]]
            head, reason = item.split('<div class="reason">', 1)
            assert head.strip() == label, head
            assert all(f"<li>{stage}" in reason for stage in stages), reason
    # the scorer-7 run's pair differs in the reviewers' stage alone, and is still named by its pair
    html = read(site, "en/cases/li/licence-gender-flawed-masculine/2026-12-01-scorer-7.html")
    assert html.count(": Unmoved by details that must not matter, pair <code>licence-gender</code><div") == 3
    assert "Unmoved by details that must not matter, <a" not in html


def test_a_run_page_names_an_invariance_pairs_observation_and_its_regression_by_the_pair_and_links_its_repetition(site):
    for lang, rep, pair in (("en", "repetition 2", "pair"), ("sv", "upprepning 2", "paret")):
        page = read(site, f"{lang}/runs/2026-09-16-release.html")
        target = '<a href="../cases/li/licence-gender-flawed-feminine/2026-09-16-release.html#r2">licence-gender-flawed-feminine</a>'
        assert f"{target},\n{rep}, {pair} <code>licence-gender</code><div" in page
        # the nightly before it passed this pair: one regression, passed to failed (it was "not observed" at the stage of
        # its first difference, and passed at the run's last stage, a change the list did not show)
        regressions = read(site, f"{lang}/runs/2026-09-16-release/regressions-1.html")
        (item,) = [li for li in regressions.split("<li>") if li.startswith("<code>INVARIANT_PAIRS</code>")]
        assert f'{target.replace("../", "../../")},\n{rep}, {pair} <code>licence-gender</code>:\n<span class="st-pass">' in item, item
        assert 'class="st-block"' in item
