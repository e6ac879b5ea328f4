"""Issue 15, page weight (third part): the whole site says what it shows in fewer bytes, every download unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.build import build_site

RECORDS = Path(__file__).resolve().parent.parent / "records"
LEGEND = "✓✗?↺–⚠⊘!=+"  # the overview's legend of symbols (macros.html.j2's symbol_legend)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lighter") / "site"
    build_site(RECORDS, out)
    return out


def html_pages(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in site.rglob("*.html")}


def stylesheet_symbols(css: str) -> dict[str, str]:
    """Which symbol the stylesheet draws before a state's word, by the selector of its ::before rule."""
    found = {}
    for selector, body in re.findall(r"([^{}\n]+)::before \{([^}]*)\}", css):
        alt = re.search(r'content: "([^"]*)" / "";', body)
        if alt:
            found[selector.strip()] = re.sub(r"\\([0-9A-Fa-f]{1,6})", lambda m: chr(int(m.group(1), 16)), alt.group(1))
    return found


def drawn_symbol(classes: list[str], symbols: dict[str, str]) -> str | None:
    """The symbol the stylesheet's rules give a state element with these classes (a second class overrides its tone's)."""
    tone, *others = classes
    for other in others:
        if f'[class^="st-"].{other}' in symbols:
            return symbols[f'[class^="st-"].{other}']
    return symbols.get(f".{tone}")


def test_a_states_symbol_is_drawn_by_the_stylesheet_not_written_into_every_page(site):
    """Every state, result and category carried its symbol as `<i aria-hidden="true">✓</i> ` (27 bytes, 59 times on a
    large case-run page); the class alone names it now, and the stylesheet draws it with empty alternative text."""
    css = (site / "static" / "site.css").read_text(encoding="utf-8")
    symbols = stylesheet_symbols(css)
    assert set(LEGEND) <= set(symbols.values()), symbols
    seen: dict[str, set[str]] = {}
    for path, html in html_pages(site).items():
        assert '<i aria-hidden="true">' not in html, path
        for classes, word in re.findall(r'<span class="(st-[^"]+)">([^<]*)<', html):
            names = [c for c in classes.split() if c != "wrap"]
            symbol = drawn_symbol(names, symbols)
            assert symbol is not None and symbol in LEGEND + "·", (path, classes)
            assert word.strip(), (path, classes)
            seen.setdefault(symbol, set()).add(word.strip())
    assert set(seen) >= set("✓✗?↺!=+⊘–⚠"), sorted(seen)
    # the symbols keep their meaning: the one a word had before is the one drawn now
    assert {"matched", "passed", "Passed"} & seen["✓"] and "dismissed by rerun" in seen["↺"]
    assert "prohibited" in seen["⊘"] and "unexpected" in seen["!"] and "duplicate" in seen["="]
    assert "voluntary strength" in seen["+"] and {"failed", "missed"} <= seen["✗"]


def test_links_to_pages_of_the_same_language_start_from_the_pages_own_folder(site):
    """A link within a language went up to the site root and down again ("../../../en/cases/…" from en/runs/x/);
    it starts from the page's own folder now, and still lands on a file of the site."""
    checked = 0
    for path, html in html_pages(site).items():
        lang, _, rest = path.partition("/")
        if lang not in ("sv", "en") or not rest:
            continue
        depth = path.count("/")
        through_root = "../" * depth + lang + "/"
        for href in re.findall(r'href="([^"#][^"]*)"', html):
            if href.startswith(("http:", "https:", "mailto:")):
                continue
            assert not href.startswith(through_root), (path, href)
            target = (site / path).parent.joinpath(href.split("#", 1)[0])
            assert target.resolve().is_file(), (path, href)
            checked += 1
    assert checked > 5000
    run = (site / "en" / "runs" / "2026-09-16-release.html").read_text(encoding="utf-8")
    assert 'href="../cases/cu/cure-unchecked/2026-09-16-release.html#r1"' in run
    assert '<a href="../../sv/runs/2026-09-16-release.html" hreflang="sv"' in run  # the other language: through the root


def test_the_root_copy_and_the_404_page_still_link_through_the_root(site):
    """The Swedish overview copied to the root links into sv/, and the 404 page, served at any depth, from the base URL's path."""
    root = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="sv/method.html"' in root
    missing = (site / "404.html").read_text(encoding="utf-8")
    assert re.search(r'href="/(?:[^"]*/)?sv/method.html"', missing), missing[:2000]


def differences(html: str) -> list[str]:
    return re.findall(r'<ul class="reason-differences">(.*?)</ul>', html, re.S)


def test_a_reasons_repetitions_and_versions_are_linked_once_in_its_opening_sentence_not_in_every_difference(site):
    """A stability reason linked both repetitions again in each of its differences ("number of flaws: 3 in <a>repetition
    1</a>, 4 in <a>repetition 2</a>"), and a pair's reason both versions: eight links of ~70 bytes in a run page's item
    of four differences. The opening sentence links them; a difference names them, and links only the expected finding."""
    stability = pairs = 0
    for path, html in html_pages(site).items():
        for listed in differences(html):
            for href in re.findall(r'href="([^"]*)"', listed):
                assert "#key-" in href, (path, href)  # an expected finding of the key, never a repetition or version
            stability += listed.count(" in repetition ") + listed.count(" i upprepning ")
        for reason in html.split('<div class="reason">')[1:]:
            opening, has_list, _ = reason.split("</div>", 1)[0].partition('<ul class="reason-differences">')
            if not has_list:
                continue
            # the opening sentence: the two repetitions or versions, each linked to its section
            assert len(re.findall(r"<a href=", opening)) == 2, (path, opening)
            pairs += "read differently" in opening or "bedömdes olika" in opening
    assert stability > 20 and pairs > 2, (stability, pairs)
    page = (site / "en" / "cases" / "pa" / "papers-location-unstated" / "2026-09-16-release.html").read_text(encoding="utf-8")
    assert "<li>number of flaws: 2 in repetition 2, 1 in repetition 3</li>" in page
    assert '<a href="#r2">Repetition 2</a> and <a href="#r3">repetition 3</a> differ in 3 respects:' in page


def test_repetitions_that_show_the_same_state_are_said_once_on_case_pages_and_in_run_grids(site):
    """A case page's outcomes said "Repetition 1: Passed", "Repetition 2: Passed", "Repetition 3: Passed", each linked, for
    every run, and a run's grid a cell per repetition: repetitions that agree are one "Repetitions 1–3" now, linked to
    the first, a grid cell spanning their columns; every repetition is still accounted for."""
    spans = cells_checked = 0
    for lang, span_word in (("en", "Repetitions"), ("sv", "Upprepningar")):
        for page in (site / lang / "cases").rglob("index.html"):
            html = page.read_text(encoding="utf-8")
            for reps in re.findall(r'<ul class="reps">(.*?)</ul>', html):
                states = re.findall(r'(?:Repetition|Upprepning|Repetitions|Upprepningar) (\d+)(?:–(\d+))?</a>: (.*?)</li>', reps)
                assert states, (page, reps)
                covered = [n for first, last, _ in states for n in range(int(first), int(last or first) + 1)]
                assert covered == list(range(1, len(covered) + 1)), (page, reps)
                assert all(a[2] != b[2] for a, b in zip(states, states[1:])), (page, reps)  # neighbours differ
                spans += sum(1 for _, last, _ in states if last)
        for page in (site / lang / "runs").glob("*.html"):
            html = page.read_text(encoding="utf-8")
            if '<table class="grid stack">' not in html:
                continue
            repetitions = len(re.findall(r'<th scope="col">', html.split('<table class="grid stack">', 1)[1].split("</thead>", 1)[0])) - 1
            for row in re.findall(r'<tr><th scope="row">.*?</tr>', html.split('<table class="grid stack">', 1)[1], re.S):
                tds = re.findall(r'<td(?: colspan="(\d+)")? data-label="([^"]*)">(.*?)</td>', row)
                assert sum(int(n or 1) for n, _, _ in tds) == repetitions, (page, row)
                shown = [re.sub(r'href="[^"]*"', "", content) for _, _, content in tds]
                assert all(a != b for a, b in zip(shown, shown[1:])), (page, row)
                for n, label, _ in tds:
                    assert (span_word + " ") in label if n else "–" not in label, (page, label)
                cells_checked += len(tds)
    assert spans > 50 and cells_checked > 100, (spans, cells_checked)


def test_an_observation_whose_reason_follows_in_full_does_not_repeat_its_short_reason_word(site):
    """"failed: …, exp-1; passage not pointed at" was followed by "The closest finding, rep-1, names an accepted rule but
    does not point at the passage of exp-1.": the word is said only where no full reason follows (a reason the pages
    cannot derive). A pair's observation explained under its first repetition is only linked there, with no word either,
    so its stages are named in one line."""
    full = short = 0
    for path, html in html_pages(site).items():
        for listed in re.findall(r'<ul class="observations"[^>]*>\n(.*?)\n</ul>', html, re.S):
            for item in re.findall(r"<li>(.*?)</li>\n", listed, re.S):
                head, has_reason, _ = item.partition('<div class="reason">')
                if has_reason:
                    assert not re.search(r";[^;<>]+$", head.strip()), (path, head)
                    full += 1
                elif "explained under" in item or "förklaras under" in item:
                    assert re.search(r"</(code|a)>; (explained|förklaras) under <a href=\"#r\d+-why\">[^<]+</a>$", item), (path, item)
                    short += 1
    assert full > 100 and short > 5, (full, short)


def test_a_continuation_page_names_the_first_last_and_nearby_pages_not_every_page(tmp_path, monkeypatch):
    """Every continuation page of a list linked every other page of it through the site root: at 10,000 case versions
    a run's stability list has about 130 pages, 12.6 KB of links on each (66 MiB of the site). It names the first, the
    last and the NEARBY_PAGES on either side, by file name, with a gap between; the run page still links every page."""
    from sitegen.render import views

    monkeypatch.setattr(views, "LIST_PAGE_ITEMS", 2)  # the bundled publication's lists, two items a page: many pages
    out = tmp_path / "site"
    build_site(RECORDS, out)
    longest = 0
    for run_page in (out / "en" / "runs").glob("*.html"):
        folder = out / "en" / "runs" / run_page.stem
        pages = sorted(folder.glob("*.html"))
        listed = set(re.findall(r'href="(?:\.\./runs/)?' + re.escape(run_page.stem) + r'/([^"#]+)"', run_page.read_text(encoding="utf-8")))
        assert {p.name for p in pages} <= listed, run_page  # the run page links every continuation page
        for page in pages:
            html = page.read_text(encoding="utf-8")
            nav = re.search(r'<nav aria-label="Pages"><ul class="reps">\n(.*?)</ul></nav>', html, re.S).group(1)
            items = re.findall(r"<li>(.*?)</li>", nav)
            links = re.findall(r'<a href="([^"]+)">', nav)
            kind, number = page.stem.rsplit("-", 1)
            count = len([p for p in pages if p.stem.rsplit("-", 1)[0] == kind])
            longest = max(longest, count)
            expected = sorted({1, count, *range(max(1, int(number) - 2), min(count, int(number) + 2) + 1)})
            shown = [int(re.search(r"-(\d+)\.html", href).group(1)) for href in links]
            assert sorted(shown + [int(number)]) == expected, (page, nav)
            assert all("/" not in href for href in links), (page, links)  # by file name, beside it
            assert all((folder / href).is_file() for href in links), (page, links)
            assert sum(1 for item in items if item == "…") == sum(1 for a, b in zip(expected, expected[1:]) if b - a > 1)
            assert '<span aria-current="page">' in nav
    assert longest > 7, longest  # some list has pages beyond the window


def test_a_reason_of_a_run_without_case_run_pages_names_its_findings_and_repetitions_without_links(tmp_path):
    """With --detail-runs K an older run has no case-run pages, and every finding and repetition its reasons named was a
    link to the case page's outcomes, which show states only: the same place the observation's own link leads. Such a
    reason names them plainly (at 10,000 case versions with --detail-runs 1, nine runs in ten)."""
    out = tmp_path / "site"
    build_site(RECORDS, out, detail_runs=1)
    older = reasons_checked = 0
    for lang in ("en", "sv"):
        for page in (out / lang / "runs").rglob("*.html"):
            html = page.read_text(encoding="utf-8")
            for reason in html.split('<div class="reason">')[1:]:
                reason = reason.split("</div>", 1)[0]
                # only a pair's versions still lead to their own case pages; no finding or repetition leads there
                for target, text in re.findall(r'<a href="([^"]*#outcomes-heading)">(.*?)</a>', reason):
                    assert text == f"<code>{target.split('/')[-2]}</code>", (page, target, text)
                reasons_checked += 1
            for item in re.findall(r"<li>.*?</li>\n", html, re.S):
                if '#outcomes-heading">' in item.split('<div class="reason">', 1)[0] and '<div class="reason">' in item:
                    older += 1  # the observation itself still leads to its case page's outcomes
    assert older > 5 and reasons_checked > 50, (older, reasons_checked)
    newest = (out / "en" / "runs" / "2026-12-01-scorer-7.html").read_text(encoding="utf-8")
    assert re.search(r'<div class="reason">\n[^\n]*<a href="\.\./cases/[^"]+/2026-12-01-scorer-7\.html#r\d', newest)  # kept: links
