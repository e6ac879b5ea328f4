"""The rendered site: structure, both languages, counts as "passed of observed", escaping, and unpublished runs kept out."""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import replace
import pickle
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from babel.support import NullTranslations

from sitegen.score.measures import registry
from sitegen.core import model as m
from sitegen.render.catalogs import load_catalogs
from sitegen.publish.downloads import collect_downloads
from sitegen.render.cases import CaseRows, collect_case, pairs_by_case, passage_lines, render_case
from sitegen.render.environment import Page, Renderer, case_path
from sitegen.render.pages import iter_pages, render_pages
from sitegen.render.prose import render_prose
from sitegen.render.views import index_observations
from sitegen.score.scoring import verdict_source

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "sitegen" / "locales"
TEMPLATES = ROOT / "sitegen" / "templates"
MEASURES = registry.MEASURES

DOC = "Inspektionsanteckning 2026-03-14\nPlats: Hamnen\n\nLäckan är  åtgärdad.\nSlut."
HOSTILE = '<script>alert(1)</script>\n<img src=x onerror="alert(2)">\n[x](javascript:alert(3)) <a href="javascript:alert(4)">y</a>\n" onmouseover="alert(5)'


# --- a small publication built from the model --------------------------------------


def finding(fid, kind="flaw", rule="R-ATGARD-2", *, missing=True, quote=None, location=None, wording="w", trace=()):
    return m.Finding(fid, kind, rule, (), missing, quote, location, wording, tuple(trace))


def answer(run, cv, rep, reviewer_findings, report=None, *, rerun=None, corrections=(), status=m.COMPLETED):
    engine = m.EngineAnswer(status, (m.Reviewer("reviewer-1", tuple(reviewer_findings)),), tuple(corrections), report)
    return m.Answer(run, cv, rep, engine, rerun, "answers.json")


def case_versions():
    rule = m.Rule("R-ATGARD-2", "Verified remediation", "Say who checked the remediation.")
    cure = m.CaseVersion(
        "cure-unchecked", "cure-unchecked", None, "Leak reported fixed, checker not named", "inspection-note", DOC, (rule,),
        m.Key(
            expected=(m.KeyFinding("checker-missing", "flaw", ("R-ATGARD-2",), True, m.Passage("Läckan är  åtgärdad.", (4, 4))),),
            prohibited=(m.KeyFinding("praise-fixed", "strength", ("R-ATGARD-2",), False, m.Passage("Läckan är  åtgärdad.", (4, 4))),),
            voluntary=(),
        ),
    )
    tap = m.CaseVersion("tap-sample", "tap-sample", None, "Tap sample", "inspection-note", "Provet togs ur en kran.\n", (rule,), m.Key((), (), ()))
    hostile_rule = m.Rule("R-X", "<script>alert('rule')</script>", 'rule text <img src=x onerror="alert(6)">')
    hostile = m.CaseVersion(
        "hostile-doc", "hostile-doc", "v<b>1</b>", "<script>alert('title')</script>", "inspection-note", HOSTILE, (hostile_rule,),
        m.Key((m.KeyFinding("e1", "flaw", ("R-X",), False, m.Passage("<script>alert(1)</script>", (1, 1))),), (), ()),
    )
    return {cv.id: cv for cv in (cure, tap, hostile)}


def source_file(folder: Path, name: str, data: bytes) -> m.SourceFile:
    path = folder / name
    path.write_bytes(data)
    return m.SourceFile(str(path), hashlib.sha256(data).hexdigest(), len(data))


def make_records(folder: Path, *, publish_hidden=False):
    config = m.Config(
        title={"sv": "Motorns kvalitet", "en": "Engine quality"},
        base_url="https://quality.example.org/",
        languages=("sv", "en"),
        default_language="sv",
        source_repository="https://github.com/example/granska-quality",
        answers=("answers.json",),
        publish=(m.PublishedFile("cases.json", "granska-quality-cases.json"), m.PublishedFile("results.json", "granska-quality-results.json")),
        internal_fields=(),
        case_text_language="en",
    )
    setup = m.Setup("setup-merge", "{}", "ab" * 32, True)
    suite = m.Suite("s1", 1, "Suite", ("cure-unchecked", "hostile-doc", "tap-sample"))

    def run(rid, date, scorer, *, published=True, status=m.COMPLETED):
        return m.Run(rid, date, "setup-merge", "s1", 1, scorer, m.MATCHING_METHODS[scorer], 5, 2, 4, 1, "short-case-v1", "granska 1", 2, published, status)

    runs = (
        run("2026-08-01-old", "2026-08-01", 5),
        run("2026-09-02-release", "2026-09-02", 6),
        run("2026-09-05-crash", "2026-09-05", 6, status=m.CRASHED),
        run("secret-hidden-run", "2026-09-09", 6, published=publish_hidden),
    )
    good = finding("r1-f1", quote="Läckan är åtgärdad.")
    answers = {}
    for r in runs[:2] + runs[3:]:
        for rep in (1, 2):
            rep_report = (finding("rep-1", quote="Läckan är åtgärdad.", trace=("r1-f1",)),)
            if rep == 2:
                miss = finding("r1-f1", quote="Läckan lagad.")
                rerun = m.EngineAnswer(m.COMPLETED, (m.Reviewer("reviewer-1", (good,)),), (), rep_report)
                a = answer(r.id, "cure-unchecked", rep, [miss], rep_report, rerun=rerun,
                           corrections=(m.QuoteCorrection("r1-f1", "Läckan  lagad", "Läckan lagad."),))
            else:
                a = answer(r.id, "cure-unchecked", rep, [good], rep_report)
            answers[(r.id, "cure-unchecked", rep)] = a
            praise = finding("r1-p1", kind="strength", missing=False, quote="Läckan är åtgärdad.")
            answers[(r.id, "cure-unchecked", rep)] = a = answer(r.id, "cure-unchecked", rep, [*a.answer.reviewers[0].findings, praise],
                                                                rep_report, rerun=a.rerun, corrections=a.answer.quote_corrections)
            answers[(r.id, "tap-sample", rep)] = answer(r.id, "tap-sample", rep, [], ())
            hostile_finding = finding("h1", rule="R-X", missing=False, quote='<img src=x onerror="alert(7)">',
                                      wording='<script>alert("wording")</script><a href="javascript:alert(8)">x</a>')
            unknown = finding("h2", rule="R-X", missing=False, quote="javascript:alert(9) not in doc", wording="onerror=alert(10)")
            answers[(r.id, "hostile-doc", rep)] = answer(r.id, "hostile-doc", rep, [hostile_finding, unknown], (hostile_finding,))
    files = {
        "cases.json": source_file(folder, "cases.json", b'{"format": "sitegen.cases/1"}\n'),
        "results.json": source_file(folder, "results.json", b'{"format": "sitegen.results/1", "runs": []}\n'),
    }
    return m.Records(config, (suite,), case_versions(), (m.Pair("p1", "contrast", ("cure-unchecked", "tap-sample"), "One detail.", False),),
                     {"setup-merge": setup}, runs, answers, (), files)


def measures(**states):
    """Seven measure results; GROUNDING is 5 of 6, REDUCER_SURVIVAL has nothing to count."""
    out = []
    for name in MEASURES:
        if name == "GROUNDING":
            out.append(m.MeasureResult(name, m.BLOCK, 5, 6, 1, 0, 0))
        elif name == "REDUCER_SURVIVAL":
            out.append(m.MeasureResult(name, m.NOT_OBSERVED, 0, 0, 0, 0, 0))
        elif name == "QUOTE_FIDELITY":
            out.append(m.MeasureResult(name, states.get("quote", m.PENDING_CONFIRMATION), 3, 4, 0, 1, 0))
        else:
            out.append(m.MeasureResult(name, m.PASS, 12, 12, 0, 0, 0))
    return tuple(out)


def make_results(records):
    obs = (
        m.Observation("GROUNDING", "cure-unchecked", "2", "reviewer", "checker-missing", m.FAILED, "evidence", "The quote <b>missed</b>."),
        m.Observation("QUOTE_FIDELITY", "hostile-doc", "1", "reviewer", "javascript:alert(9)", m.PENDING, "not-in-document", "x"),
        m.Observation("IDENTICAL_INPUT_STABILITY", "cure-unchecked", "1-2", "report", "-", m.FAILED, "count.flaws", "y"),
    )
    cases = tuple(m.CaseResult(cv, rep, m.PASS, {"GROUNDING": (1, 1)}) for cv in ("cure-unchecked", "tap-sample", "hostile-doc") for rep in (1, 2))
    results = {}
    for run in records.runs:
        if run.status == m.CRASHED:
            results[run.id] = m.RunResult(run.id, 6, m.MATCHING_METHODS[6], m.CRASHED_STATE, (), (), ())
        else:
            results[run.id] = m.RunResult(run.id, run.scorer_version, run.matching_method, m.BLOCK, measures(), cases, obs)
    return results


CONTENT = {
    "method-intro": "# How the tests are scored\nIntro <script>alert('prose')</script> [bad](javascript:alert(11)) [good](https://example.org/).\n\n## Sub\ntext",
    "matching": "# Matching\nFour conditions.",
    "glossary": "# Glossary\nTerm\n: Definition",
    "outcomes": "# Outcomes\nPASS and others.",
    "release": "# A miss does not stop a release\nText.",
    "downloads": "# Downloads\nThe files.",
    "changelog-intro": "# Every change to the tests\nDated list.",
    "accessibility": "# Accessibility statement\nWCAG 2.1 AA.",
}


@pytest.fixture(scope="module")
def content_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("content")
    for lang in ("sv", "en"):
        folder = root / lang
        folder.mkdir()
        for name, text in CONTENT.items():
            (folder / f"{name}.md").write_text(text, encoding="utf-8")
        for measure in MEASURES:
            (folder / f"measure-{measure}.md").write_text(
                f"# Heading of {measure}\n### One observation\nOne.\n### Passes when\nP.\n### Fails when\nF.\n### Example\nE.\n", encoding="utf-8")
    return root


def translations():
    return load_catalogs(LOCALES, ["sv", "en"])


def verdicts_for(records):
    return verdict_source(records)


def published_files(records):
    """What the build passes as `downloads` for these records, without the schemas."""
    return tuple((d.name, d.source) for d in collect_downloads(records))


def render(records, content_dir, *, catalogs=None, build_date="2026-09-10", changelog=None):
    return render_pages(
        records, make_results(records), verdicts=verdicts_for(records), changelog=changelog,
        catalogs=catalogs or translations(), build_date=build_date, content_dir=content_dir,
        downloads=published_files(records), templates=TEMPLATES,
    )


@pytest.fixture(scope="module")
def records_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("records")


@pytest.fixture(scope="module")
def site(content_dir, records_dir):
    records = make_records(records_dir)
    return {p.path: p.data for p in render(records, content_dir)}


# --- parsing ---------------------------------------------------------------------------


class Tree(HTMLParser):
    """Every start tag with its attributes, and the text inside each element with an id."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def find(self, tag, **attrs):
        return [a for t, a in self.tags if t == tag and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())]


def parse(data: bytes) -> Tree:
    tree = Tree()
    tree.feed(data.decode("utf-8"))
    tree.close()
    return tree


def text(data: bytes) -> str:
    return " ".join("".join(parse(data).text).split())


def section_text(data: bytes, start_marker: str, end_marker: str) -> str:
    html = data.decode("utf-8")
    return text(html[html.index(start_marker): html.index(end_marker, html.index(start_marker))].encode())


# --- every page ----------------------------------------------------------------------


def links(path: str, site) -> set[str]:
    """Every link of a page, resolved against the page to a path from the site root (with its fragment)."""
    out = set()
    for a in parse(site[path]).find("a"):
        if a.get("href"):
            parts = urlsplit(urljoin("http://x/" + path, a["href"]))
            out.add(parts.path.lstrip("/") + (f"#{parts.fragment}" if parts.fragment else ""))
    return out


def html_pages(site):
    return {path: data for path, data in site.items() if path.endswith(".html")}


def test_both_languages_have_the_same_pages(site):
    sv = {p[3:] for p in site if p.startswith("sv/")}
    en = {p[3:] for p in site if p.startswith("en/")}
    assert sv == en
    for rest in ("index.html", "method.html", "changelog.html", "downloads.html", "runs/2026-09-02-release.html",
                 "cases/cu/cure-unchecked/index.html", "cases/cu/cure-unchecked/2026-09-02-release.html"):
        assert rest in sv
    assert {"index.html", "404.html", "sitemap.xml", "static/site.css"} <= set(site)


def test_every_page_declares_language_alternates_and_safety(site):
    for path, data in html_pages(site).items():
        tree = parse(data)
        (html,) = tree.find("html")
        lang = html["lang"]
        assert lang in ("sv", "en"), path
        if path.startswith(("sv/", "en/")):
            assert path.startswith(lang + "/"), path
            rest = path[3:]
            hreflangs = {a["hreflang"]: a["href"] for a in tree.find("link", rel="alternate") if a.get("hreflang")}
            every = {
                "sv": f"https://quality.example.org/sv/{rest}",
                "en": f"https://quality.example.org/en/{rest}",
                "x-default": f"https://quality.example.org/sv/{rest}",
            }
            if re.fullmatch(r"cases/[^/]+/[^/]+/[^/]+\.html", rest) and not rest.endswith("/index.html"):
                # a case-run page, the most numerous kind, names only the other language's address beside its own canonical one
                other = "en" if lang == "sv" else "sv"
                every = {other: every[other]}
            assert hreflangs == every, path
            (canonical,) = tree.find("link", rel="canonical")
            assert canonical["href"] == f"https://quality.example.org/{lang}/{rest}", path
        (csp,) = tree.find("meta", http_equiv="Content-Security-Policy")
        assert csp["content"] == "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"
        assert tree.find("meta", name="viewport"), path
        assert [a["href"] for a in tree.find("link", rel="stylesheet")][0].endswith("static/site.css")
        assert tree.find("main", id="main") and tree.find("a", href="#main"), path
        assert not tree.find("script"), path


def test_relative_links_resolve_to_pages_that_exist(site):
    """Every link inside the site is relative and lands on a file of the site (anchors included)."""
    ids: dict[str, set[str]] = {}
    for path, data in html_pages(site).items():
        ids[path] = {a["id"] for _, a in parse(data).tags if a.get("id")}
    for path, data in html_pages(site).items():
        if path == "404.html":
            continue
        for tag, attrs in parse(data).tags:
            href = attrs.get("href") if tag in ("a", "link") else None
            if not href or attrs.get("rel") == "alternate" and tag == "link" or href.startswith(("https://", "mailto:")):
                continue
            assert not href.startswith("/"), (path, href)
            target = urljoin("http://x/" + path, href)
            parts = urlsplit(target)
            file = parts.path.lstrip("/") or "index.html"
            if file in ("changelog.atom", "changelog.json") or file.endswith("/changelog.atom"):
                continue  # written by the feed stage (one feed per language beside its changelog page)
            assert file in site or file.startswith("downloads/"), (path, href)
            if parts.fragment and file.endswith(".html"):
                assert parts.fragment in ids[file], (path, href)


def test_language_switch_leads_to_the_same_page_in_the_other_language(site):
    for path, data in html_pages(site).items():
        if not path.startswith(("sv/", "en/")):
            continue
        other = "en" if path.startswith("sv/") else "sv"
        switches = [a for a in parse(data).find("a") if a.get("hreflang") == other]
        assert len(switches) == 1, path
        target = urlsplit(urljoin("http://x/" + path, switches[0]["href"])).path.lstrip("/")
        assert target == f"{other}/{path[3:]}"
        assert target in site


def test_the_404_page_links_from_the_base_urls_path_and_to_no_other_origin(site):
    """Served in place of any missed address, the 404 page's links start from the base URL's path (see test_reader_pages)."""
    tree = parse(site["404.html"])
    assert [a["href"] for a in tree.find("link", rel="stylesheet")] == ["/static/site.css"]
    assert any(a.get("href") == "/sv/index.html" for a in tree.find("a"))
    hrefs = [a["href"] for a in tree.find("a") + tree.find("link") if a.get("href")]
    assert not [h for h in hrefs if "://" in h and not h.startswith("https://github.com/")], hrefs
    assert not [a for a in tree.find("link") if a.get("hreflang")]


def test_root_index_is_the_swedish_overview_linking_to_english(site):
    tree = parse(site["index.html"])
    assert tree.find("html")[0]["lang"] == "sv"
    assert any(a.get("href") == "en/index.html" for a in tree.find("a"))
    assert any(a.get("href") == "sv/runs/2026-09-02-release.html" for a in tree.find("a"))


# --- the overview -------------------------------------------------------------------------


def run_card(data: bytes, run_id: str) -> str:
    """The HTML of the overview's card of one run."""
    html = data.decode("utf-8")
    start = html.index(f'<li class="run-card" id="run-{run_id}">')
    return html[start: html.index("</li>", start)]


def run_row(data: bytes, run_id: str) -> str:
    """The text of the overview's card of one run."""
    return text(run_card(data, run_id).encode())


def test_counts_read_passed_of_observed_in_each_language(site):
    assert "5 av 6" in run_row(site["sv/index.html"], "2026-09-02-release")
    assert "5 of 6" in run_row(site["en/index.html"], "2026-09-02-release")
    assert "%" not in text(site["en/index.html"]).replace("100%", "")


def test_not_observed_is_words_without_a_number(site):
    # the card's cells are the seven measures in order
    cells = re.findall(r"<td>(.*?)</td>", run_card(site["en/index.html"], "2026-09-02-release"), re.S)
    assert len(cells) == len(MEASURES)
    reducer = text(cells[MEASURES.index("REDUCER_SURVIVAL")].encode())
    assert "Not observed" in reducer
    assert not re.search(r"\d", reducer)
    cells = re.findall(r"<td>(.*?)</td>", run_card(site["sv/index.html"], "2026-09-02-release"), re.S)
    assert "Inte observerat" in text(cells[MEASURES.index("REDUCER_SURVIVAL")].encode())


def test_a_measure_not_observed_is_words_without_a_number_in_its_chart_too(site):
    for lang, words in (("en", "Not observed"), ("sv", "Inte observerat")):
        listed = section_text(site[f"{lang}/index.html"], 'id="chart-reducer_survival"', "</ol>")
        assert f"2026-09-02-release: {words}" in listed
        html = site[f"{lang}/index.html"].decode()
        chart = html[html.index('id="chart-reducer_survival"'):]
        assert f'<span class="st-not-observed">{words}</span>' in chart[:chart.index("</ol>")]  # the stylesheet draws its –
        assert not re.search(r"\d+ (of|av) \d+", listed)


def test_crashed_run_is_listed_without_numbers(site):
    row = run_row(site["en/index.html"], "2026-09-05-crash")
    assert "Crashed" in row
    without_date_and_id = row.replace("Sep 5, 2026", "").replace("2026-09-05-crash", "")
    assert not re.search(r"\d+ of \d+", without_date_and_id)
    assert "Avbruten" in run_row(site["sv/index.html"], "2026-09-05-crash")


def test_a_miss_dismissed_by_rerun_is_marked_so_on_the_run_page(records_dir, content_dir):
    # METHOD.md: a dismissed miss counts as passed and is marked "dismissed by rerun" wherever it is shown
    records = make_records(records_dir)
    dismissed = m.Observation("GROUNDING", "cure-unchecked", "2", "reviewer", "checker-missing", m.DISMISSED, "evidence", "First miss.")
    results = {run: dataclasses.replace(r, observations=(dismissed,)) if r.measures else r for run, r in make_results(records).items()}
    pages = {p.path: p.data for p in render_pages(records, results, verdicts=verdicts_for(records), changelog=None,
                                                   catalogs=translations(), build_date="2026-09-10", content_dir=content_dir,
                                                   downloads=published_files(records), templates=TEMPLATES)}
    for lang, mark in (("en", "dismissed by rerun"), ("sv", "avskriven vid omkörning")):
        page = text(pages[f"{lang}/runs/2026-09-02-release.html"])
        assert f"{mark}: cure-unchecked" in page
        # its symbol ↺ is the stylesheet's, named by the class r
        assert f'<span class="st-pass r">{mark}</span>: ' in pages[f"{lang}/runs/2026-09-02-release.html"].decode()


def test_a_run_after_only_crashed_runs_says_none_has_counts_to_compare(records_dir, content_dir):
    """A run whose every earlier published run crashed is compared with none; its page says so, in each language (the
    site compared no runs here: the comparisons given are none)."""
    records = make_records(records_dir)
    first, *rest = records.runs
    records = replace(records, runs=(replace(first, status=m.CRASHED), *rest))
    pages = {p.path: p.data for p in render_pages(records, make_results(records), verdicts=verdicts_for(records), changelog=None,
                                                   catalogs=translations(), build_date="2026-09-10", content_dir=content_dir,
                                                   downloads=published_files(records), templates=TEMPLATES, comparisons={})}
    said = {"en": "Every earlier published run crashed, so none has counts to compare with this run's.",
            "sv": "Alla tidigare publicerade körningar kraschade, så ingen av dem har antal att jämföra med den här körningens."}
    for lang, sentence in said.items():
        page = pages[f"{lang}/runs/2026-09-02-release.html"].decode()
        section = page[page.index('id="comparison-heading"'):]
        assert f"<p>{sentence}</p>" in section[: section.index("</section>")]


def test_pending_is_distinct_from_pass_and_block_by_word_and_symbol(site):
    row = run_row(site["en/index.html"], "2026-09-02-release")
    assert "Awaiting confirmation" in row and "Not passed" in row and "Passed" in row
    symbols = {state: section_text(site["en/index.html"], f'class="st-{state}"', "</span>") for state in ("pass", "block", "pending")}
    assert len(set(symbols.values())) == 3


def test_runs_are_newest_first_and_older_scorer_is_labelled(site):
    html = site["en/index.html"].decode()
    order = [html.index(f'<li class="run-card" id="run-{r}">') for r in ("2026-09-05-crash", "2026-09-02-release", "2026-08-01-old")]
    assert order == sorted(order)
    assert "as measured with scorer v5" in run_row(site["en/index.html"], "2026-08-01-old")
    assert "as measured with scorer v5" not in run_row(site["en/index.html"], "2026-09-02-release")


def test_each_measure_has_a_chart_with_a_text_equivalent(site):
    tree = parse(site["en/index.html"])
    charts = tree.find("svg")
    assert len(charts) == len(MEASURES)
    for svg in charts:
        # named by its <title> and described by its <desc> (issue 17), which screen readers read out
        title, desc = svg["aria-labelledby"].split()
        assert svg["role"] == "img" and title.endswith("-title") and desc.endswith("-desc")
    page = text(site["en/index.html"])
    assert "2026-08-01-old: 5 of 6" in page


def test_a_scorer_change_links_to_its_changelog_row(content_dir, records_dir):
    records = make_records(records_dir)
    rows = (
        _row("2026-09-02", "scorer", "scorer-6", run_id="2026-09-02-release", version=6),
        _row("2026-08-01", "scorer", "scorer-5", run_id="2026-08-01-old", version=5),
    )
    from sitegen.changelog.changes import Changelog

    pages = {p.path: p.data for p in render(records, content_dir, changelog=Changelog(rows))}
    row = run_card(pages["en/index.html"], "2026-09-02-release")
    assert 'href="changelog.html#scorer-6"' in row
    assert "scorer-5" not in row
    assert 'id="scorer-6"' in pages["en/changelog.html"].decode()
    assert "Poängsättning version 6" in text(pages["sv/changelog.html"]) or "version 6" in text(pages["sv/changelog.html"])


def _row(date, kind, anchor, **fields):
    from sitegen.changelog.changes import ChangelogRow

    return ChangelogRow(date=date, kind=kind, anchor=anchor, matching_method=m.MATCHING_METHODS.get(fields.get("version"), None), **fields)


# --- run and case pages ------------------------------------------------------------------


def test_run_page_links_each_observation_to_its_repetition_and_stage(site):
    hrefs = links("en/runs/2026-09-02-release.html", site)
    assert "en/cases/cu/cure-unchecked/2026-09-02-release.html#r2-reviewer" in hrefs
    assert "en/cases/cu/cure-unchecked/2026-09-02-release.html#r1-report" in hrefs  # a span of repetitions points at its first
    page = text(site["en/runs/2026-09-02-release.html"])
    assert "ab" * 32 in page and "structured-identity/whitespace-collapsed/v6" in page
    assert "passage not pointed at" in page
    target = site["en/cases/cu/cure-unchecked/2026-09-02-release.html"]
    assert parse(target).find("section", id="r2-reviewer")


def test_case_page_shows_the_document_exactly_with_numbered_lines(site):
    html = site["en/cases/cu/cure-unchecked/index.html"].decode()
    tree = parse(site["en/cases/cu/cure-unchecked/index.html"])
    assert [a["id"] for a in tree.find("li") if a.get("id", "").startswith("L")] == [f"L{n}" for n in range(1, 6)]
    assert '<span class="text">Läckan är  åtgärdad.</span>' in html  # two spaces kept
    assert '<span class="text"></span>' in html  # the empty line is still a line
    hrefs = links("en/cases/cu/cure-unchecked/index.html", site)
    assert "sv/cases/cu/cure-unchecked/index.html" in hrefs
    assert "en/cases/ta/tap-sample/index.html" in hrefs  # the pair's twin
    # a repetition whose state differs from the one before is linked on its own; agreeing ones are one span, linked to its first
    assert "en/cases/cu/cure-unchecked/2026-09-02-release.html#r2" in hrefs or \
        re.search(r'<a href="2026-09-02-release.html#r1">Repetitions 1–\d</a>', html)


def test_case_run_page_marks_categories_misses_and_the_rerun(site):
    data = site["en/cases/cu/cure-unchecked/2026-09-02-release.html"]
    html = data.decode()
    r2 = html[html.index('id="r2"'):]
    assert "missed" in r2[: r2.index('id="r2-report"')]
    assert "not found in the document" in r2[: r2.index('id="r2-report"')]
    assert 'id="r2-rerun"' in r2 and "GROUNDING only" in text(r2.encode())
    assert "Läckan  lagad" in r2  # the quote correction, before
    assert "<mark>Läckan är  åtgärdad.</mark>" in html
    assert "r1-f1" in section_text(data, 'id="r1-report"', "</section>")  # report trace
    praise = section_text(data, 'id="r1-reviewer-f-r1-p1"', "</tr>")
    assert "prohibited" in praise and "praise-fixed" in praise


def test_passage_lines_marks_a_quote_across_whitespace_and_lines():
    doc = "first\nsecond part\nthird line\nfourth"
    lines = passage_lines(doc, "part third", None)
    assert [(l.number, l.before, l.marked, l.after) for l in lines] == [(2, "second ", "part", ""), (3, "", "third", " line")]
    assert passage_lines(doc, "absent words", (4, 4))[0].marked == "fourth"
    assert passage_lines(doc, "absent words", None) == ()


def test_unpublished_run_appears_nowhere(site, content_dir, records_dir):
    for path, data in site.items():
        assert "secret-hidden-run" not in path
        assert b"secret-hidden-run" not in data, path
    published = {p.path for p in render(make_records(records_dir, publish_hidden=True), content_dir)}
    assert "en/runs/secret-hidden-run.html" in published  # the same records, published, do show it


# --- untrusted text ------------------------------------------------------------------------


class Inert(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed"):
            self.problems.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"{tag} {name}")
            if name in ("href", "src", "action", "xlink:href") and value and re.sub(r"[\x00-\x20]", "", value).lower().startswith(("javascript:", "data:", "vbscript:")):
                self.problems.append(f"{tag} {name}={value}")

    handle_startendtag = handle_starttag


def test_hostile_documents_answers_and_prose_render_inert(site):
    checked = 0
    for path, data in html_pages(site).items():
        parser = Inert()
        parser.feed(data.decode())
        assert parser.problems == [], path
        checked += 1
    case = site["en/cases/ho/hostile-doc/index.html"].decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in case
    run_page = site["en/cases/ho/hostile-doc/2026-09-02-release.html"].decode()
    assert "&lt;script&gt;alert(&#34;wording&#34;)&lt;/script&gt;" in run_page
    method = site["en/method.html"].decode()
    assert "&lt;script&gt;alert('prose')&lt;/script&gt;" in method
    assert ">bad</a>" in method and "alert(11)" not in method
    assert 'href="https://example.org/"' in method
    assert checked > 10


def test_prose_headings_move_one_level_down():
    prose = render_prose("# Title\n## Part\n### Sub\ntext <b>bold</b>")
    assert prose.heading == "Title"
    assert "<h3>Part</h3>" in prose.html and "<h4>Sub</h4>" in prose.html
    assert "&lt;b&gt;" in prose.html


# --- downloads, sitemap, determinism ---------------------------------------------------------


def test_downloads_page_shows_size_and_checksum_of_the_exact_bytes(site, records_dir):
    records = make_records(records_dir)
    page = site["sv/downloads.html"].decode()
    for record, name in (("cases.json", "granska-quality-cases.json"), ("results.json", "granska-quality-results.json")):
        data = records.files[record].data
        assert hashlib.sha256(data).hexdigest() in page
        assert name in page
    assert f"{len(records.files['cases.json'].data)}\u00a0B" in page
    assert "sha256sum -c --strict SHA256SUMS" in page and "Get-FileHash" in page


def test_the_footer_date_is_labelled_as_what_it_is(site):
    # build_date is SOURCE_DATE_EPOCH or else the newest published run's date, never the day of the build
    for lang, label in (("sv", "Uppgifter till och med 10 sep. 2026"), ("en", "Data up to Sep 10, 2026")):
        for path in (f"{lang}/index.html", f"{lang}/downloads.html", f"{lang}/runs/2026-09-02-release.html"):
            footer = section_text(site[path], '<footer class="site-footer">', "</footer>")
            assert footer.endswith(label), (path, footer)
            assert "Built" not in footer and "Byggd" not in footer


def test_sitemap_lists_every_page_of_both_languages_absolutely(site):
    sitemap = site["sitemap.xml"].decode()
    locs = set(re.findall(r"<loc>(.*?)</loc>", sitemap))
    expected = {f"https://quality.example.org/{p}" for p in html_pages(site) if p != "404.html"}
    assert locs == expected
    assert sitemap.count("<lastmod>2026-09-10</lastmod>") == len(locs)


def test_sitemap_has_no_lastmod_without_a_build_date(content_dir, records_dir):
    pages = {p.path: p.data for p in render(make_records(records_dir), content_dir, build_date="")}
    assert b"lastmod" not in pages["sitemap.xml"]


def test_two_renders_are_byte_identical(site, content_dir, records_dir):
    again = {p.path: p.data for p in render(make_records(records_dir), content_dir)}
    assert again == site


def test_pages_are_sorted_and_unique(content_dir, records_dir):
    pages = render(make_records(records_dir), content_dir)
    paths = [p.path for p in pages]
    assert paths == sorted(set(paths))
    assert all(isinstance(p, Page) for p in pages)


def test_case_pages_are_sharded_by_the_first_two_characters():
    assert case_path("tap-sample") == "cases/ta/tap-sample/index.html"
    assert case_path("tap-sample", "run-1") == "cases/ta/tap-sample/run-1.html"


def test_english_renders_with_the_msgids_themselves(content_dir, records_dir):
    """The English catalog says what the msgids say: rendering without any catalog gives the same English pages."""
    records = make_records(records_dir)
    null = {"sv": translations()["sv"], "en": NullTranslations()}
    plain = {p.path: p.data for p in render(records, content_dir, catalogs=null) if p.path.startswith("en/")}
    real = {p.path: p.data for p in render(records, content_dir) if p.path.startswith("en/")}
    assert plain == real


@pytest.mark.skipif(not (ROOT / "sitegen" / "templates" / "content" / "sv" / "method-intro.md").is_file(), reason="prose not written yet")
def test_the_bundled_prose_renders(records_dir):
    records = make_records(records_dir)
    pages = {p.path: p.data for p in render_pages(
        records, make_results(records), verdicts=verdicts_for(records), changelog=None,
        catalogs=translations(), build_date="", downloads=published_files(records), templates=TEMPLATES)}
    method = text(pages["sv/method.html"])
    assert "Öppna testfallet tap-sample" in method


def test_iter_pages_yields_what_render_pages_returns(content_dir, records_dir, site):
    records = make_records(records_dir)
    streamed = iter_pages(records, make_results(records), verdicts=verdicts_for(records), changelog=None,
                          catalogs=translations(), build_date="2026-09-10", content_dir=content_dir,
                          downloads=published_files(records), templates=TEMPLATES)
    assert {p.path: p.data for p in streamed} == site


def test_one_case_version_renders_from_picklable_input(records_dir):
    """Case pages can be rendered in another process: their input survives pickling and renders the same."""
    records = make_records(records_dir)
    published = tuple(r for r in records.runs if r.published)
    results = make_results(records)
    states = {r.id: {(c.case_version, c.repetition): c.state for c in results[r.id].cases} for r in published}
    found = {r.id: {(c.case_version, c.repetition): c for c in results[r.id].cases} for r in published}
    outcomes = {r.id: results[r.id].outcome for r in published}
    bundle = collect_case(records, "cure-unchecked", published, states, outcomes, verdicts=verdicts_for(records), case_results=found)
    copy = pickle.loads(pickle.dumps(bundle))
    assert copy == bundle
    renderer = Renderer("en", translations()["en"], templates=TEMPLATES, config=records.config, languages=("sv", "en"), build_date="")
    assert [p.path for p in render_case(renderer, copy)] == [
        "en/cases/cu/cure-unchecked/index.html", *(f"en/cases/cu/cure-unchecked/{r.id}.html" for r in published)]
    assert render_case(renderer, copy) == render_case(renderer, bundle)


def test_pairs_by_case_lists_what_a_search_of_every_pair_finds(records_dir):
    records = make_records(records_dir)
    index = pairs_by_case(records)
    assert index, "the corpus has pairs"
    for cv_id in records.case_versions:
        searched = tuple((p, p.versions[1] if p.versions[0] == cv_id else p.versions[0]) for p in records.pairs if cv_id in p.versions)
        assert index.get(cv_id, ()) == searched


@pytest.mark.parametrize("verdict", [
    m.ExpectedVerdict(m.KeyFinding("e-<§>", "flaw", ("R1",), False, m.Passage("says <§> here", (2, 2))), "f-<§>", "exact", None, None),
    m.ExpectedVerdict(m.KeyFinding("e2", "flaw", ("R1",), True, None), None, None, "rule", "f<§>1"),
    m.ExpectedVerdict(m.KeyFinding("e3", "strength", ("R2",), False, m.Passage(None, (1, 2))), None, None, "nothing", None),
])
def test_an_expected_row_is_the_macros_output_whatever_its_text_holds(records_dir, verdict):
    """Rows are rendered once with a stand-in for the section id; text that looks like the stand-in changes nothing."""
    records = make_records(records_dir)
    renderer = Renderer("en", translations()["en"], templates=TEMPLATES, config=records.config, languages=("sv", "en"), build_date="")
    document = "Heading\nThe note says <§> here\nand ends."
    rows = CaseRows(renderer.case_rows, document, renderer.env.globals["word"])
    for section in ("rep-1-reviewer", 'r"<§>&2'):
        assert rows.expected(section, verdict) == renderer.case_rows.expected_row(verdict, section)


# --- why an observation did not pass, on the case's own page ------------------------------


def test_case_run_page_says_why_each_observation_did_not_pass(site):
    """METHOD.md: a reader opens the case and sees why; each repetition lists its observations with reason and detail."""
    data = site["en/cases/cu/cure-unchecked/2026-09-02-release.html"]
    html = data.decode()
    r1, r2 = html[html.index('id="r1"'):html.index('id="r2"')], html[html.index('id="r2"'):]
    why2 = r2[r2.index('id="r2-why"'):]
    why2 = why2[: why2.index("</ul>")]
    assert "passage not pointed at" in why2 and "checker-missing" in why2
    assert '<span class="detail" lang="en">The quote &lt;b&gt;missed&lt;/b&gt;.</span>' in why2  # the record's own words, escaped
    assert 'href="#r2-reviewer"' in why2
    # a stability observation compares two repetitions: both show it, naming the pair (not a span: "1–3" would take in
    # 2); the first explains it, the second links there
    for section in (r1, r2):
        why = section[section.index('-why"'):]
        assert "repetitions 1 and 2" in why[: why.index("</ul>")]
    why1 = r1[r1.index('-why"'):]
    assert "number of flaws" in why1[: why1.index("</ul>")]
    assert 'explained under <a href="#r1-why">repetition 1</a>' in why2
    sv = site["sv/cases/cu/cure-unchecked/2026-09-02-release.html"].decode()
    assert "Observationer som inte godkändes rakt av, och varför" in sv
    # the record's own words are English: a Swedish page says so before them; an English page has no need to
    assert '<span class="note">I resultatfilen, på engelska:</span> <span class="detail" lang="en">' in sv
    assert "In the results file" not in html


def test_a_first_miss_row_says_what_the_rerun_made_of_it(site, records_dir):
    """METHOD.md: a dismissed miss is marked "dismissed by rerun" wherever it is shown; pending and confirmed ones say so too."""
    confirmed = section_text(site["en/cases/cu/cure-unchecked/2026-09-02-release.html"], 'id="r2-reviewer-checker-missing"', "</tr>")
    assert "missed" in confirmed and "miss confirmed by the rerun" in confirmed
    assert "dismissed" not in confirmed and "pending" not in confirmed
    # matched at once in the first repetition: counted in the stage's line, named in its finding's row, with no mark
    untouched = section_text(site["en/cases/cu/cure-unchecked/2026-09-02-release.html"], '<section id="r1-reviewer"', "</section>")
    assert "checker-missing" in untouched and "rerun" not in untouched

    records = make_records(records_dir)
    run = next(r for r in records.runs if r.id == "2026-09-02-release")
    result = make_results(records)[run.id]
    renderer = Renderer("en", translations()["en"], templates=TEMPLATES, config=records.config, languages=("sv", "en"), build_date="")
    for outcome, words in ((m.DISMISSED, "dismissed by rerun"), (m.PENDING, "awaiting confirmation: no rerun has confirmed the miss yet")):
        changed = tuple(o._replace(result=outcome) if o.measure == "GROUNDING" else o for o in result.observations)
        bundle = _case_bundle(records, run, replace(result, observations=changed))
        page = next(p for p in render_case(renderer, bundle) if p.path.endswith(f"{run.id}.html"))
        row = section_text(page.data, 'id="r2-reviewer-checker-missing"', "</tr>")
        assert words in row and "confirmed by the rerun" not in row


def _case_bundle(records, run, result):
    states = {run.id: {(c.case_version, c.repetition): c.state for c in result.cases}}
    found = {run.id: {(c.case_version, c.repetition): c for c in result.cases}}
    return collect_case(records, "cure-unchecked", (run,), states, {run.id: result.outcome}, verdicts=verdicts_for(records),
                        case_results=found, observations={run.id: index_observations(records, result)})


def test_observations_are_indexed_under_every_case_and_repetition_they_concern(records_dir):
    records = make_records(records_dir)
    pair = records.pairs[0]
    first, second = pair.versions
    grounding = m.Observation("GROUNDING", first, "2", "reviewer", "checker-missing", m.FAILED, "evidence", "")
    stability = m.Observation("IDENTICAL_INPUT_STABILITY", first, "1-3", "report", "-", m.FAILED, "count.flaws", "")
    twins = m.Observation("INVARIANT_PAIRS", first, "1", "report", pair.id, m.FAILED, "expected", "")
    result = m.RunResult("r", 6, m.MATCHING_METHODS[6], m.BLOCK, (), (), (grounding, stability, twins))
    index = index_observations(records, result)
    assert index == {
        (first, 1): (stability, twins),
        (first, 2): (grounding,),
        (first, 3): (stability,),
        (second, 1): (twins,),
    }
    assert index_observations(records, None) == {}


def test_a_crashed_runs_answers_are_shown_unjudged(records_dir):
    """METHOD.md: a CRASHED run says nothing about quality either way, so its case pages give no verdict, only the answers."""
    records = make_records(records_dir)
    run = next(r for r in records.runs if r.id == "2026-09-02-release")
    crashed = m.RunResult(run.id, 6, m.MATCHING_METHODS[6], m.CRASHED_STATE, (), (), ())
    bundle = _case_bundle(records, run, crashed)
    assert all(rep.verdicts == () and rep.rerun_verdicts == () for rep in bundle.runs[0].repetitions), "nothing is judged"
    renderer = Renderer("en", translations()["en"], templates=TEMPLATES, config=records.config, languages=("sv", "en"), build_date="")
    page = next(p for p in render_case(renderer, bundle) if p.path.endswith(f"{run.id}.html"))
    main = text(page.data)
    for verdict in ("matched", "missed", "prohibited", "duplicate", "unexpected", "Expected findings", "not found in the document"):
        assert verdict not in main
    assert "not judged against the key" in main
    html = page.data.decode()
    for finding_row in ('id="r1-reviewer-f-r1-f1"', 'id="r1-reviewer-f-r1-p1"', 'id="r1-report-f-rep-1"', 'id="r2-rerun-reviewer-f-r1-f1"'):
        assert finding_row in html


def test_the_document_type_is_a_word_of_the_page_language_and_an_unknown_one_its_id(site, records_dir):
    assert "<dd>inspektionsanteckning</dd>" in site["sv/cases/cu/cure-unchecked/index.html"].decode()
    assert "<dd>inspection note</dd>" in site["en/cases/cu/cure-unchecked/index.html"].decode()
    renderer = Renderer("sv", translations()["sv"], templates=TEMPLATES, config=make_records(records_dir).config, languages=("sv", "en"), build_date="")
    assert str(renderer.env.globals["word"].document_type["permit-<x>"]) == "<code>permit-&lt;x&gt;</code>"


def test_case_titles_and_pair_descriptions_carry_the_language_they_were_written_in(site, records_dir):
    """Accessibility: text in another language than the page's is marked, so a screen reader pronounces it right."""
    for lang in ("sv", "en"):
        for path in ("cases/cu/cure-unchecked/index.html", "cases/cu/cure-unchecked/2026-09-02-release.html"):
            html = site[f"{lang}/{path}"].decode()
            assert '<h1><span lang="en">Leak reported fixed, checker not named</span>' in html
        assert '<span lang="en">One detail.</span>' in site[f"{lang}/cases/cu/cure-unchecked/index.html"].decode()
    records = make_records(records_dir)
    unmarked = replace(records, config=replace(records.config, case_text_language=None))
    renderer = Renderer("sv", translations()["sv"], templates=TEMPLATES, config=unmarked.config, languages=("sv", "en"), build_date="")
    bundle = collect_case(unmarked, "cure-unchecked", (), {}, {}, verdicts=None)
    page = render_case(renderer, bundle)[0].data.decode()
    assert "<h1><span>Leak reported fixed" in page and "<span>One detail.</span>" in page, "no language is claimed when none is known"


UNTRANSLATED = {  # the note a case page gives once, worded for what it shows: its title alone, or its pairs' descriptions too
    "sv": ("Fallets titel visas så som testsvitens författare skrev den, utan översättning.",
           "Fallets titel och beskrivningarna av dess par visas så som testsvitens författare skrev dem, utan översättning."),
    "en": ("The case title is shown as the test suite's authors wrote it, not translated.",
           "The case title and the descriptions of its pairs are shown as the test suite's authors wrote them, not translated."),
}


@pytest.mark.parametrize(("written_in", "noted_in"), [("en", {"sv"}), ("en-GB", {"sv"}), ("sv", {"en"}), (None, {"sv", "en"})])
def test_a_case_page_says_once_that_its_case_texts_are_not_translated_unless_they_are_in_its_language(records_dir, written_in, noted_in):
    """A Swedish reader meets an English title: the page says it is the authors' own, untranslated. sitegen knows the
    texts' language only from the configuration, so a page leaves the note out only in the language it names."""
    records = make_records(records_dir)
    records = replace(records, config=replace(records.config, case_text_language=written_in))
    for lang in ("sv", "en"):
        renderer = Renderer(lang, translations()[lang], templates=TEMPLATES, config=records.config, languages=("sv", "en"), build_date="")
        for cv, with_pairs in (("cure-unchecked", True), ("hostile-doc", False)):
            page = render_case(renderer, collect_case(records, cv, (), {}, {}, verdicts=None))[0].data.decode()
            assert ('id="pairs-heading"' in page) == with_pairs
            title_only, with_pair_texts = UNTRANSLATED[lang]
            shown = [note for note in (title_only, with_pair_texts) if note in page]
            if lang in noted_in:
                assert shown == [with_pair_texts if with_pairs else title_only], (lang, cv)
                assert page.count("suite's authors wrote" if lang == "en" else "testsvitens författare") == 1
            else:
                assert shown == [], (lang, cv)


# --- what rendering is given, not what it fetches ----------------------------------------------


def test_pages_come_from_the_templates_folder_they_are_given(records_dir, content_dir, tmp_path):
    """The assembly owns where templates live and passes it in: rendering reads no folder of its own choosing."""
    import shutil

    records = make_records(records_dir)
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    (templates / "static" / "site.css").write_text("/* the given folder's stylesheet */\n", encoding="utf-8")
    base = templates / "base.html.j2"
    base.write_text(base.read_text(encoding="utf-8").replace("<body", "<body data-from-given-folder", 1), encoding="utf-8")
    pages = {p.path: p.data for p in render_pages(
        records, make_results(records), verdicts=verdicts_for(records), changelog=None, catalogs=translations(),
        build_date="", content_dir=content_dir, downloads=published_files(records), templates=templates)}
    assert pages["static/site.css"] == b"/* the given folder's stylesheet */\n"
    assert b"<body data-from-given-folder" in pages["en/index.html"]
    assert b"<body data-from-given-folder" in pages["en/cases/cu/cure-unchecked/2026-09-02-release.html"]


def test_the_downloads_page_lists_exactly_the_files_it_is_given(records_dir, content_dir):
    """Rendering never collects the downloads again: the writer's list is a required input and the only one shown."""
    import inspect

    assert inspect.signature(iter_pages).parameters["downloads"].default is inspect.Parameter.empty
    records = make_records(records_dir)
    given = (("only-this.json", m.InMemoryFile(b'{"x": 1}\n')),)
    pages = {p.path: p.data for p in render_pages(
        records, make_results(records), verdicts=verdicts_for(records), changelog=None, catalogs=translations(),
        build_date="", content_dir=content_dir, downloads=given, templates=TEMPLATES)}
    listed = set(re.findall(r'href="(?:\.\./)*downloads/([^"]+)"', pages["en/downloads.html"].decode()))
    assert listed - {"SHA256SUMS"} == {"only-this.json"}
    assert hashlib.sha256(b'{"x": 1}\n').hexdigest() in pages["en/downloads.html"].decode()


def test_a_pair_of_repetitions_is_named_as_a_pair_never_as_a_span(site):
    """IDENTICAL_INPUT_STABILITY observes each unordered pair of repetitions (METHOD.md): the pair 1-3 is repetitions 1
    and 3, and "repetition 1–3" read as a span would take in repetition 2, which the observation does not look at."""
    named = 0
    for path, data in site.items():
        if not path.endswith(".html"):
            continue
        html = data.decode()
        assert not re.search(r"[Rr]epetitions? \d+–\d+(?!\d)[^:]", html.replace("Repetitions ", "")), path
        assert not re.search(r"upprepning \d+–\d+", html), path
        named += len(re.findall(r"repetitions (\d) and (\d)|upprepning (\d) och (\d)", html))
    assert named > 10


def test_the_reruns_stages_are_headed_below_the_reruns_heading_and_no_level_is_skipped(site):
    """A rerun's stages were h3 like the repetition's own, so the outline showed the rerun's "Reviewers" beside the
    answer's: now h4 under the h3 "The rerun's answer", and no page skips a heading level going down."""
    reruns = 0
    for path, data in site.items():
        if "/cases/" not in path or path.endswith("index.html") or not path.endswith(".html"):
            continue
        html = data.decode()
        for section_id, level in re.findall(r'<section id="([^"]+)" class="stage">\n<h(\d)>', html):
            assert level == ("4" if "-rerun-" in section_id else "3"), (path, section_id, level)
            reruns += "-rerun-" in section_id
        levels = [int(h) for h in re.findall(r"<h(\d)[ >]", html)]
        assert all(b <= a + 1 for a, b in zip(levels, levels[1:])), (path, levels)
    assert reruns > 0


def test_every_table_of_every_page_has_a_caption(site):
    """A sighted reader sees what a table holds from its caption, as a screen reader hears it from its name: the overview's
    tables of a run's measures had none, only the card's heading naming them for assistive technology."""
    tables = 0
    for path, data in site.items():
        if path.endswith(".html"):
            for table in re.findall(r"<table[^>]*>\s*<([a-z]+)", data.decode()):
                assert table == "caption", (path, table)
                tables += 1
    assert tables > 20
