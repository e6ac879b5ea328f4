"""What a reader of the bundled site relies on: symbols every stock font draws, one word per state, a legend, a favicon,
a 404 page that works at any depth, an accessibility statement, and set-up commands that install into the project's own
virtual environment."""

from __future__ import annotations

import json
import re
import shutil
import struct
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from sitegen.cli import main

ROOT = Path(__file__).resolve().parent.parent
# Debian's stock font, the one a fresh Debian machine (and its Chromium) draws every page with.
DEJAVU_SANS = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
EPOCH = "1788220800"  # 2026-09-01


def build(records: Path, out: Path, monkeypatch) -> int:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    return main(["build", "--records", str(records), "--out", str(out), "--quiet"])


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("reader") / "site"
    with pytest.MonkeyPatch.context() as patch:
        assert build(ROOT / "records", out, patch) == 0
    return out


def pages(site: Path, prefix: str = "") -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in sorted(site.rglob("*.html"))
            if p.relative_to(site).as_posix().startswith(prefix)}


def text_of(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


# --- symbols ---------------------------------------------------------------------------------


def font_characters(path: Path) -> set[int]:
    """The code points a TrueType font maps to glyphs, from its cmap's Unicode subtables (formats 4 and 12)."""
    data = path.read_bytes()
    tables = {data[12 + 16 * i: 16 + 16 * i]: struct.unpack(">II", data[20 + 16 * i: 28 + 16 * i])
              for i in range(struct.unpack(">H", data[4:6])[0])}
    cmap = tables[b"cmap"][0]
    found: set[int] = set()
    for i in range(struct.unpack(">H", data[cmap + 2: cmap + 4])[0]):
        platform, encoding, offset = struct.unpack(">HHI", data[cmap + 4 + 8 * i: cmap + 12 + 8 * i])
        sub = cmap + offset
        form = struct.unpack(">H", data[sub: sub + 2])[0]
        if form == 4 and platform in (0, 3):
            segments = struct.unpack(">H", data[sub + 6: sub + 8])[0] // 2
            ends = struct.unpack(f">{segments}H", data[sub + 14: sub + 14 + 2 * segments])
            starts = struct.unpack(f">{segments}H", data[sub + 16 + 2 * segments: sub + 16 + 4 * segments])
            for start, end in zip(starts, ends):
                found.update(range(start, end + 1))  # glyph ids may still be 0 inside a range, but DejaVu has none such
        elif form == 12:
            groups = struct.unpack(">I", data[sub + 12: sub + 16])[0]
            for g in range(groups):
                start, end, _ = struct.unpack(">III", data[sub + 16 + 12 * g: sub + 28 + 12 * g])
                found.update(range(start, end + 1))
    found.discard(0xFFFF)
    return found


def test_every_symbol_on_the_pages_is_drawn_by_debians_stock_font(bundled):
    """Issue 17: the prohibited mark was an emoji DejaVu draws as an empty box; every mark must be in DejaVu Sans."""
    if not DEJAVU_SANS.is_file():
        pytest.fail(f"{DEJAVU_SANS} is missing: `apt-get install fonts-dejavu-core` (scripts/test.sh installs it)", pytrace=False)
    drawn = font_characters(DEJAVU_SANS)
    assert ord("✓") in drawn and ord("⛔") not in drawn  # the parser reads the font as fc-list does
    used = {}
    # a state's symbol is drawn by the stylesheet before its word (content: "\\2713" / "")
    for escape in re.findall(r'content: "([^"]*)" / ""', (bundled / "static" / "site.css").read_text(encoding="utf-8")):
        used.setdefault(re.sub(r"\\([0-9A-Fa-f]{1,6}) ?", lambda m: chr(int(m.group(1), 16)), escape), "static/site.css")
    for path, html in pages(bundled).items():
        for symbol in re.findall(r'<dt aria-hidden="true">([^<]*)</dt>', html):
            used.setdefault(symbol, path)
    assert {"✓", "✗", "?", "↺", "=", "+", "!", "⊘"} <= set(used), sorted(used)
    missing = {s: p for s, p in used.items() if any(ord(c) not in drawn for c in s)}
    assert not missing, f"symbols DejaVu Sans cannot draw (first page using each): {missing}"


def test_the_overview_explains_every_symbol_in_both_languages(bundled):
    for lang, words in (("sv", ("godkänd", "väntar på bekräftelse", "inte observerat", "avbruten")),
                        ("en", ("passed", "awaiting confirmation", "not observed", "crashed"))):
        html = (bundled / lang / "index.html").read_text(encoding="utf-8")
        legend = html[html.index('<dl class="legend">'): html.index("</dl>", html.index('<dl class="legend">'))]
        for symbol in ("✓", "✗", "?", "–", "⚠", "↺", "⊘", "!", "=", "+"):
            assert f'<dt aria-hidden="true">{symbol}</dt><dd>' in legend, (lang, symbol)
        assert all(w in legend.lower() for w in words), (lang, text_of(legend))


def test_swedish_pages_call_the_answer_key_facit_never_nyckel(bundled):
    """The Swedish legend said "matchade nyckeln" where every other Swedish page, and the method page's glossary, call
    the answer key "facit": a reader looked for a "nyckel" the site never defines. "Nyckel" is left to signing keys."""
    from babel.messages.pofile import read_po

    terms = [re.findall(r"^(\S[^\n]*)\n: ", (ROOT / "sitegen" / "templates" / "content" / lang / "glossary.md").read_text(encoding="utf-8"),
                        re.MULTILINE) for lang in ("en", "sv")]
    facit = dict(zip(*terms))["Answer key"]
    html = (bundled / "sv" / "index.html").read_text(encoding="utf-8")
    legend = html[html.index('<dl class="legend">'): html.index("</dl>", html.index('<dl class="legend">'))]
    passed = re.search(r'<dt aria-hidden="true">✓</dt><dd>(.*?)</dd>', legend).group(1)
    assert facit.lower() in passed, passed
    with open(ROOT / "sitegen" / "locales" / "sv" / "LC_MESSAGES" / "sitegen.po", "rb") as po:
        keys = [(str(m.id), str(m.string)) for m in read_po(po) if m.id and "nyckel" in str(m.string).lower()]
    assert [msgid for msgid, _ in keys if "sign" not in msgid.lower()] == []


def test_swedish_pages_word_passed_of_observed_one_way(bundled):
    """The overview said "godkända av gjorda observationer" in its first paragraph and "godkända av observerade" in the
    next, and the case-run table's caption the short form again: one count, two names. The method text (and the seed
    it conveys) says "godkända observationer av gjorda observationer", so every short form is "godkända av gjorda
    observationer"."""
    from babel.messages.pofile import read_po

    with open(ROOT / "sitegen" / "locales" / "sv" / "LC_MESSAGES" / "sitegen.po", "rb") as po:
        worded = [(str(m.id), str(m.string)) for m in read_po(po) if m.id and "passed of observed" in str(m.id).lower()]
    assert len(worded) >= 5
    assert [msgid for msgid, msgstr in worded if "godkända av gjorda observationer" not in msgstr.lower()] == []
    swedish = "\n".join(page.read_text(encoding="utf-8") for page in (bundled / "sv").rglob("*.html"))
    assert "av observerade" not in swedish.lower()
    assert "godkända av gjorda observationer, per upprepning" in swedish.lower()


# --- one word per state ----------------------------------------------------------------------------


def test_swedish_pages_call_awaiting_confirmation_by_one_name(bundled):
    """Issue 17: "Väntar på bekräftelse" and "obekräftad"/"Obekräftade" named one state on the same pages."""
    swedish = pages(bundled, "sv/")
    offending = [path for path, html in swedish.items() if re.search(r"obekräftad", html, re.IGNORECASE)]
    assert not offending, offending[:5]
    run = swedish["sv/runs/2026-09-02-nightly.html"]
    assert "Väntar på bekräftelse" in run  # the measure's state and the column of the measures table
    assert re.search(r'<span class="st-pending">väntar på bekräftelse<', run)  # its symbol ? is the stylesheet's


# --- the 404 page and the favicon ------------------------------------------------------------------


def links_of(html: str) -> list[str]:
    return re.findall(r'(?:href|src)="([^"]*)"', html)


@pytest.mark.parametrize("base_path", ["/", "/quality/sub/"])
def test_the_404_page_works_at_any_depth_of_the_path_the_base_url_names(base_path, tmp_path, monkeypatch):
    """A host serves the 404 page in place of any missed address, at any depth: relative links would lead nowhere from
    /sv/cases/ab/missing/. Its links start from the base URL's path, so they also work from a sub-path the site names."""
    records = tmp_path / "records"
    shutil.copytree(ROOT / "records", records)
    config = json.loads((records / "sitegen.json").read_text(encoding="utf-8"))
    config["base_url"] = "https://quality.example.org" + base_path
    (records / "sitegen.json").write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    out = tmp_path / "site"
    assert build(records, out, monkeypatch) == 0
    hrefs = links_of((out / "404.html").read_text(encoding="utf-8"))
    local = [h for h in hrefs if not urlsplit(h).scheme and not h.startswith("#")]
    assert local and all(h.startswith(base_path) for h in local), local
    for missed in ("nothing.html", "sv/cases/ab/missing/", "en/a/b/c/d.html"):
        served_at = "https://quality.example.org" + base_path + missed
        for href in local:
            target = urlsplit(urljoin(served_at, href)).path
            assert target.startswith(base_path) and (out / target[len(base_path):]).is_file(), (missed, href)
    assert not [h for h in hrefs if urlsplit(h).scheme and not h.startswith("https://github.com/")], hrefs


def test_the_404_page_says_in_every_language_of_the_site_that_the_page_is_missing(bundled):
    """One 404 page serves every missed address, /en/… as well: it was in Swedish alone, so a reader of the English pages
    who mistyped an address read "Sidan finns inte", while the accessibility statement says the page is checked in both."""
    from sitegen.render.catalogs import load_catalogs

    config = json.loads((ROOT / "records" / "sitegen.json").read_text(encoding="utf-8"))
    catalogs = load_catalogs(ROOT / "sitegen" / "locales", config["languages"])
    html = (bundled / "404.html").read_text(encoding="utf-8")
    main = html[html.index("<main"): html.index("</main>")]
    for lang in config["languages"]:
        said = [str(catalogs[lang].gettext(text)) for text in
                ("Page not found", "There is no page at this address. It may have moved, or the link may be mistyped.")]
        link = f'<a href="/{lang}/index.html">{catalogs[lang].gettext("Go to the overview")}</a>'
        if lang == config["default_language"]:
            part = main  # the page's own language, <html lang> says it
            assert f'<html lang="{lang}">' in html
        else:
            assert f'<section lang="{lang}"' in main, lang
            part = main[main.index(f'<section lang="{lang}"'):]
            part = part[: part.index("</section>")]
        assert all(text in part for text in said) and link in part, (lang, text_of(part))


def test_every_other_page_links_relatively(bundled):
    for path, html in pages(bundled).items():
        if path != "404.html":
            assert not [h for h in links_of(html) if h.startswith("/")], path


def test_every_page_links_a_favicon_the_build_writes(bundled):
    icon = bundled / "static" / "favicon.svg"
    assert icon.is_file()
    svg = icon.read_text(encoding="utf-8")
    assert svg.startswith("<svg") and not re.search(r"(href|src)=", svg)  # draws itself, loads nothing
    for path, html in pages(bundled).items():
        found = re.findall(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', html)
        assert len(found) == 1, path
        assert urlsplit(urljoin(f"http://x/{path}", found[0])).path == "/static/favicon.svg", (path, found)


# --- the accessibility statement ---------------------------------------------------------------------


def test_every_page_links_the_accessibility_statement_from_its_footer(bundled):
    for path, html in pages(bundled).items():
        footer = html[html.index('<footer class="site-footer">'):]
        links = [urlsplit(urljoin(f"http://x/{path}", h)).path.lstrip("/") for h in re.findall(r'href="([^"]+)"', footer)]
        statements = [link for link in links if link.endswith("/accessibility.html")]
        assert len(statements) == 1 and (bundled / statements[0]).is_file(), (path, links)
        lang = re.search(r'<html lang="([a-z]+)">', html).group(1)
        assert statements[0] == f"{lang}/accessibility.html", (path, statements)


def test_the_footer_dates_the_data_by_the_newest_published_run_not_by_the_build(bundled):
    """The footer said "Data up to Sep 1, 2026" (the build's SOURCE_DATE_EPOCH) under runs of Dec 1, 2026: a reader citing
    it would date the data three months too early. It names the newest published run's date, as its card shows it."""
    from sitegen.render.formatting import LocaleFormat

    runs = json.loads((ROOT / "records" / "runs.json").read_text(encoding="utf-8"))["runs"]
    newest = max(run["date"] for run in runs if run["published"])
    assert newest > "2026-09-01"  # the build's date (EPOCH) is earlier than the data, as a reader may meet it
    for lang, label in (("sv", "Uppgifter till och med %s"), ("en", "Data up to %s")):
        shown = LocaleFormat(lang).date(newest)
        overview = text_of((bundled / lang / "index.html").read_text(encoding="utf-8"))
        assert shown in overview  # the newest run's card carries the same date
        dated = {path: re.findall(label % r"([^<]+)</p>", html[html.index('<footer class="site-footer">'):])
                 for path, html in pages(bundled).items() if f'<html lang="{lang}">' in html}
        dated = {path: found for path, found in dated.items() if found}
        assert f"{lang}/index.html" in dated and f"{lang}/method.html" in dated
        assert {path: found for path, found in dated.items() if found != [shown]} == {}


# the build's date: EPOCH (Sep 1, 2026), but never before the newest published run (Dec 1, 2026)
@pytest.mark.parametrize(("lang", "phrases"), [
    ("sv", ("Tillgänglighetsredogörelse", "WCAG 2.1", "EN 301 549", "DOS-lagen", "axe-core", "Kända brister",
            "Rapportera ett problem", "1 dec. 2026")),
    ("en", ("Accessibility statement", "WCAG 2.1", "EN 301 549", "DOS law", "axe-core", "Known gaps",
            "Report a problem", "Dec 1, 2026")),
])
def test_the_accessibility_statement_says_what_the_law_asks_in_each_language(bundled, lang, phrases):
    html = (bundled / lang / "accessibility.html").read_text(encoding="utf-8")
    page = text_of(html)
    missing = [p for p in phrases if p not in page]
    assert not missing, missing
    # the build updates the statement and runs its checks; it reviews nothing (before: "last reviewed" / "sågs senast över")
    updated = {"en": "The statement was last updated on", "sv": "Redogörelsen uppdaterades senast den"}[lang]
    assert updated in page and "reviewed" not in page and "sågs senast över" not in page
    contact = json.loads((ROOT / "records" / "sitegen.json").read_text(encoding="utf-8"))["accessibility_contact"]
    assert f'<a href="mailto:{contact}">{contact}</a>' in html
    assert re.findall(r"<h([1-6])", html[html.index("<main"):])[:3] == ["1", "2", "2"]


def copy_records(tmp_path: Path, **changes) -> Path:
    records = tmp_path / "records"
    shutil.copytree(ROOT / "records", records)
    config = json.loads((records / "sitegen.json").read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    (records / "sitegen.json").write_text(json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return records


def test_a_build_without_a_contact_says_so_on_the_statement(tmp_path, monkeypatch):
    records = copy_records(tmp_path, accessibility_contact=None)
    assert build(records, tmp_path / "site", monkeypatch) == 0
    for lang, words in (("sv", "anger ingen kontakt för tillgänglighetsproblem"), ("en", "names no contact for accessibility problems")):
        html = (tmp_path / "site" / lang / "accessibility.html").read_text(encoding="utf-8")
        assert words in text_of(html) and "mailto:" not in html


def test_a_contact_given_as_an_https_address_is_linked(tmp_path, monkeypatch):
    records = copy_records(tmp_path, accessibility_contact="https://example.org/a11y")
    assert build(records, tmp_path / "site", monkeypatch) == 0
    html = (tmp_path / "site" / "en" / "accessibility.html").read_text(encoding="utf-8")
    assert '<a href="https://example.org/a11y">https://example.org/a11y</a>' in html


@pytest.mark.parametrize("field", ["accessibility_contact", "sitegen_source"])
def test_an_address_of_the_wrong_form_is_refused_at_its_place(tmp_path, monkeypatch, capsys, field):
    """A contact that is neither an e-mail address nor an https URL, and a sitegen_source that is not an https URL."""
    records = copy_records(tmp_path, **{field: "javascript:alert(1)"})
    assert build(records, tmp_path / "site", monkeypatch) == 2
    err = capsys.readouterr().err
    # refused for its form, not as an unknown field
    assert re.search(rf'sitegen\.json:\d+:\d+: /{field}: error: "javascript:alert\(1\)" does not have the expected form.*\[record\.value\]', err), err
    assert not (tmp_path / "site").exists()


def test_the_downloads_page_links_where_to_get_sitegen_or_says_it_names_no_address(bundled, tmp_path, monkeypatch):
    """The page told readers to install sitegen "in a folder holding the source code of sitegen 0.1.0" and never said
    where to get it. The configuration's sitegen_source is linked where the installation begins; without it the page
    says the publication names no address and points to where its records are kept."""
    config = json.loads((ROOT / "records" / "sitegen.json").read_text(encoding="utf-8"))
    source = config["sitegen_source"]
    for lang in ("sv", "en"):
        html = main_of((bundled / lang / "downloads.html").read_text(encoding="utf-8"))
        section = html[html.index('id="verify-all-heading"'):]
        first = section[:section.index("<pre>")]  # before the first command: where to get it comes before installing it
        assert f'<a href="{source}">{source}</a>' in first
    records = copy_records(tmp_path, sitegen_source=None)
    assert build(records, tmp_path / "site", monkeypatch) == 0
    for lang, words in (("sv", "anger ingen adress till källkoden för sitegen"), ("en", "names no address for the source code of sitegen")):
        html = main_of((tmp_path / "site" / lang / "downloads.html").read_text(encoding="utf-8"))
        assert words in text_of(html) and source not in html
        assert f'<a href="{config["source_repository"]}">' in html[html.index('id="verify-all-heading"'):]


# --- setting up ---------------------------------------------------------------------------------------


def readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_readmes_first_command_installs_into_the_projects_own_virtual_environment():
    first, second = readme_commands()[:2]
    steps = [s.strip() for s in first.split("&&")]
    assert steps[0] == "python3 -m venv .venv"
    assert all(s.startswith(".venv/bin/") for s in steps[1:]), steps  # nothing runs the bare interpreter's pip
    assert steps[-1].startswith(".venv/bin/sitegen build")
    assert second == "bash scripts/test.sh"
    assert "/.venv/" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()


def test_the_test_script_installs_only_into_an_active_or_the_projects_virtual_environment():
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    choice = script[script.index('in_venv="$('): script.index("export PIP_DISABLE_PIP_VERSION_CHECK")]
    # outside a virtual environment the interpreter is always swapped for .venv's, managed or not
    assert re.search(r'if \[ "\$in_venv" = 0 \]; then\n\s+venv="\$root/\.venv"', choice), choice
    assert "EXTERNALLY-MANAGED" not in choice and 'python="$venv/bin/python"' in choice
    installs = [line for line in script.splitlines() if "pip install" in line and not line.lstrip().startswith("#")]
    assert installs and all('"$python" -m pip install' in line for line in installs), installs


# --- text the records' authors wrote, shown as they wrote it -------------------------------------------


def test_swedish_case_pages_say_once_that_the_english_case_texts_are_not_translated(bundled):
    """The bundled case titles and pair descriptions are English (the configuration says so): a Swedish case page says
    once that they are the suite's authors' own words; English pages need no such note, case-run pages get nothing."""
    said = "så som testsvitens författare skrev"
    case_pages = pages(bundled, "sv/cases/")
    for path, html in case_pages.items():
        notes = re.findall(rf'<p class="note">([^<]*{said}[^<]*)</p>', html)
        if not path.endswith("/index.html"):
            assert not notes, path
            continue
        assert len(notes) == 1 and html.count(said) == 1, path
        assert ("beskrivningarna av dess par" in notes[0]) == ('id="pairs-heading"' in html), path
        assert notes[0].startswith("Fallets titel"), path
    cases = json.loads((ROOT / "records" / "cases.json").read_text(encoding="utf-8"))["case_versions"]
    assert sum(p.endswith("/index.html") for p in case_pages) == len(cases)
    assert not [p for p, html in pages(bundled, "en/").items() if "authors wrote" in html]


# --- the downloads page ---------------------------------------------------------------------------------


def main_of(html: str) -> str:
    return html[html.index("<main"):html.index("</main>")]


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_the_downloads_page_shows_how_to_install_the_sitegen_that_checks_everything(bundled, lang):
    """"With Python and sitegen installed" gave no way to install it; `pip install sitegen` would fetch another program
    of that name from PyPI. The page gives the commands that install sitegen from a checkout of its source."""
    from sitegen import __version__

    html = main_of((bundled / lang / "downloads.html").read_text(encoding="utf-8"))
    section = html[html.index('id="verify-all-heading"'):]
    section = section[:section.index("</section>")]
    section = section[:section.find("<h3", 1)] if "<h3" in section[1:] else section  # up to the next subsection
    blocks = re.findall(r"<pre><code>(.*?)</code></pre>", section, re.S)
    assert blocks[0].splitlines() == ["python3 -m venv .venv", ". .venv/bin/activate", "pip install ."], blocks
    assert blocks[2:] and all(b.startswith("sitegen verify ") for b in blocks[2:]), blocks
    assert "pip install sitegen" not in html
    # installing the checkout gives the command the page runs next, on the Python the project requires
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^\[project\.scripts\]\nsitegen = "', pyproject, re.M)
    python = re.search(r'^requires-python = ">=(\d+\.\d+)"$', pyproject, re.M).group(1)
    before = text_of(section[:section.index("<pre>")])
    assert f"sitegen {__version__}" in before and f"Python {python}" in before and "PyPI" in before, before


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_the_downloads_page_shows_the_install_in_powershell_too(bundled, lang):
    """The checksums had PowerShell's command beside the shell's, the install only a Linux and macOS shell's
    (`. .venv/bin/activate` does nothing on Windows). The same three steps follow in PowerShell, said to be that."""
    html = main_of((bundled / lang / "downloads.html").read_text(encoding="utf-8"))
    section = html[html.index('id="verify-all-heading"'):]
    section = section[:section.index("</section>")]
    blocks = re.findall(r"<pre><code>(.*?)</code></pre>", section, re.S)
    # Windows runs no script under its default execution policy: the first line allows them in this window only
    assert blocks[1].splitlines() == ["Set-ExecutionPolicy -ExecutionPolicy RemoteSigned -Scope Process",
                                      "py -m venv .venv", ".venv\\Scripts\\Activate.ps1", "pip install ."], blocks
    between = text_of(section[section.index("</pre>"):section.index("<pre>", section.index("</pre>"))])
    assert "PowerShell" in between and "Windows" in between and "py " in between, between
    # the checksums' PowerShell command stays where it was, before this section
    assert html.index("Get-FileHash") < html.index('id="verify-all-heading"')


@pytest.mark.parametrize(("lang", "elsewhere"), [("sv", "sidan Nedladdningar"), ("en", "downloads page")])
def test_the_standard_formats_are_below_on_the_downloads_page_and_a_link_away_on_the_method_page(bundled, lang, elsewhere):
    """One text opens both pages; it spoke of "the standard formats on the downloads page" on that very page."""
    downloads = main_of((bundled / lang / "downloads.html").read_text(encoding="utf-8"))
    intro = downloads[:downloads.index("<section")]
    assert '<a href="#exports-heading">' in intro and 'id="exports-heading"' in downloads
    assert elsewhere not in text_of(downloads)
    method = main_of((bundled / lang / "method.html").read_text(encoding="utf-8"))
    section = method[method.index('<section id="downloads"'):]
    link = re.search(r'<a href="downloads\.html#exports-heading">([^<]*)</a>', section[:section.index("</section>")])
    assert link and elsewhere in link.group(1), section


def test_the_downloads_page_names_the_site_by_the_configured_base_url_only(tmp_path, monkeypatch):
    """The addresses on the downloads page (the verify command, the alternates) come from `base_url`, none written in."""
    base = "https://kvalitet.example.net/granskning/"
    records = copy_records(tmp_path, base_url=base)
    assert build(records, tmp_path / "site", monkeypatch) == 0
    bundled_base = json.loads((ROOT / "records" / "sitegen.json").read_text(encoding="utf-8"))["base_url"]
    for lang in ("sv", "en"):
        html = (tmp_path / "site" / lang / "downloads.html").read_text(encoding="utf-8")
        assert f"<pre><code>sitegen verify {base} --pages</code></pre>" in html
        assert f'<link rel="canonical" href="{base}{lang}/downloads.html">' in html
        assert bundled_base not in html


@pytest.mark.parametrize("lang", ["en", "sv"])
def test_the_overviews_link_to_the_method_is_named_as_the_method_page_is(bundled, lang):
    """Before, the English overview linked "How the tests are scored" to a page headed "How the tests are counted"."""
    overview = (bundled / lang / "index.html").read_text(encoding="utf-8")
    (link,) = re.findall(r'<a href="method\.html">([^<]+)</a></p>', overview)
    heading = re.search(r"<h1>([^<]+)</h1>", (bundled / lang / "method.html").read_text(encoding="utf-8")).group(1)
    assert link == heading


CHART_SCALE = {"en": (r"Scale from 0 to (\d+) (observations?) not passed", "observation", "observations"),
               "sv": (r"Skala från 0 till (\d+) (observation(?:er)?) som inte godkändes", "observation", "observationer")}


@pytest.mark.parametrize("lang", ["en", "sv"])
def test_a_charts_scale_says_one_observation_in_the_singular(bundled, lang):
    """Before, a chart whose largest count was 1 said "Scale from 0 to 1 observations not passed"."""
    pattern, one, many = CHART_SCALE[lang]
    scales = re.findall(pattern, (bundled / lang / "index.html").read_text(encoding="utf-8"))
    assert {top for top, _ in scales} >= {"1"}, "the bundled overview has a chart whose scale ends at 1"
    assert all(noun == (one if top == "1" else many) for top, noun in scales), scales


def test_swedish_pages_name_the_changelog_one_way_in_running_text(bundled):
    """Before, Swedish pages linked "(ändringslistan)" beside a method page and statement speaking of "ändringsloggen"."""
    swedish = pages(bundled, "sv/")
    assert not [path for path, page in swedish.items() if "ändringslistan" in page]
    linked = {word for page in swedish.values()
              for word in re.findall(r'\(<a href="[^"]*changelog\.html#[^"]+">([^<]+)</a>\)', page)}
    assert linked == {"ändringsloggen"}


@pytest.mark.parametrize("lang", ["en", "sv"])
def test_a_compared_invariance_pair_links_to_the_measure_that_compares_it(bundled, lang):
    """Before, a case page said "invariance pair, compared" without saying by what or linking to how."""
    method = (bundled / lang / "method.html").read_text(encoding="utf-8")
    heading = re.search(r'<section id="invariant_pairs"[^>]*>\s*<h3[^>]*>(.*?)</h3>', method, flags=re.S)
    assert heading, "the method page has a section on INVARIANT_PAIRS"
    cases = pages(bundled, f"{lang}/cases/")
    pair_items = [item for path, page in cases.items() if path.endswith("/index.html")
                  for item in re.findall(r'<li><a href="[^"]+">[^<]+</a>: (.*?)</li>', page)]
    compared = [item for item in pair_items if "invariant_pairs" in item]
    assert compared, "the bundled cases have compared invariance pairs"
    for item in compared:
        (link, title) = re.search(r'<a href="((?:\.\./)+method\.html#invariant_pairs)">([^<]+)</a>', item).groups()
        assert title in heading.group(1)


def test_the_footer_speaks_of_the_measures_not_of_every_number(bundled):
    """Before, every footer said "Every number on these pages counts passed observations of observed observations", above
    charts that count the observations not passed, beside file sizes and dates."""
    words = {"en": ("Every measure", "Every number"), "sv": ("Varje mått", "Alla tal")}
    for path, page in pages(bundled).items():
        lang = path.split("/", 1)[0]
        if lang not in words or "<footer" not in page:
            continue
        footer = page[page.index("<footer"):]
        said, unsaid = words[lang]
        assert said in footer and unsaid not in footer, path


def test_a_run_setup_and_a_scorer_version_are_named_alike_on_every_page(bundled):
    """Before, the Swedish downloads and method pages spoke of "körningsuppsättningarna" and "uppsättningar" where every
    other page says "körningsupplägg"; and the changelog's scorer rows said "Scoring version 7" / "Poängsättning i version
    7" where the run pages say "scorer version" / "poängsättning version"."""
    swedish = pages(bundled, "sv/")
    assert not [p for p, page in swedish.items() if re.search(r"körningsuppsättning|[Uu]ppsättningar och", page)]
    assert "körningsupplägg" in swedish["sv/downloads.html"]
    for lang, scorer, wrong in (("en", "Scorer version 7 with matching method", "Scoring version"),
                                ("sv", "Poängsättning version 7 med matchningsmetoden", "Poängsättning i version")):
        changelog = (bundled / lang / "changelog.html").read_text(encoding="utf-8")
        assert scorer in changelog and wrong not in changelog


@pytest.mark.parametrize("lang", ["en", "sv"])
def test_the_charts_say_a_break_holds_also_for_a_measure_the_change_did_not_touch(bundled, lang):
    """The scorer-7 break stands in all seven charts, while the method page says scorer 7 changes two measures: the
    overview said only that counts across a break are not comparable, leaving a reader to see a contradiction."""
    overview = text_of((bundled / lang / "index.html").read_text(encoding="utf-8"))
    breaks = {"en": "Break in the series b2", "sv": "Brott i serien b2"}[lang]
    charts = {"en": "observations not passed in each of", "sv": "observationer som inte godkändes i var och en av"}[lang]
    assert overview.count(breaks) == overview.count(charts) == 7, "every chart of the bundled overview has the scorer-7 break"
    said = {"en": "also in a chart whose measure the change did not touch, since runs are compared only when they were "
                  "measured alike",
            "sv": "inte heller i ett diagram vars mått ändringen inte rörde, eftersom körningar bara jämförs när de mättes på "
                  "samma sätt"}[lang]
    assert said in overview
