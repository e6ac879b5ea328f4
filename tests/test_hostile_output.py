"""A build of hostile records: every XML file parses, nothing in any output fetches from elsewhere, hidden characters show."""

from __future__ import annotations

import html.parser
import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.build import build_site
from sitegen.load.entries import parse_entry
from sitegen.core.errors import RecordsError
from sitegen.core.invisibles import HIDDEN, visible

SMALL = Path(__file__).parent / "data" / "records-small"
# Characters that would hide or reorder text: an override, an isolate, a zero-width space, a bell, a C1 control.
HOSTILE = "\u202e\u2066\u200b\u0007\u0085"
REMOTE = "https://evil.example"
IMAGES = (f"![tracker]({REMOTE}/t.png) and [![linked]({REMOTE}/l.png)](https://example.org/) and "
          f'<img src="{REMOTE}/raw.png"> and <iframe src="{REMOTE}/f"></iframe> and ![]({REMOTE.removeprefix("https:")}/p.png)\n')


def _edit_json(path: Path, edit) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=True) + "\n", encoding="utf-8")  # the characters as \u escapes


def _hostile(document_or_config, where: str):
    if where == "config":
        document_or_config["title"]["en"] = f"Engine{HOSTILE} quality"
        document_or_config["title"]["sv"] = f"Motorns{HOSTILE} kvalitet"
    elif where == "cases":
        case = document_or_config["case_versions"][0]
        case["title"] = f"Leak{HOSTILE} fixed"
        case["rules"][0]["title"] = f"Regel{HOSTILE} R-ATGARD-2"
        case["document"] += f"\nSlut{HOSTILE}."
    else:
        document_or_config["answers"][0]["reviewers"][0]["findings"][0]["wording"] = f"Det framgår{HOSTILE} inte."


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    """records-small with hidden characters in titles, a document and a wording, and remote images in an entry."""
    tmp = tmp_path_factory.mktemp("hostile")
    records = tmp / "records"
    shutil.copytree(SMALL, records)
    _edit_json(records / "sitegen.json", lambda d: _hostile(d, "config"))
    _edit_json(records / "cases.json", lambda d: _hostile(d, "cases"))
    _edit_json(records / "answers.json", lambda d: _hostile(d, "answers"))
    entry = records / "changelog" / "2026-01-01-scorer-5.md"
    entry.write_text(entry.read_text(encoding="utf-8") + "\n" + IMAGES, encoding="utf-8")
    out = tmp / "site"
    build_site(records, out)
    return records, out


def _files(out: Path, *suffixes: str) -> list[Path]:
    return sorted(p for p in out.rglob("*") if p.is_file() and p.suffix in suffixes)


def test_every_xml_file_of_the_site_parses(hostile_site):
    _, out = hostile_site
    files = _files(out, ".xml", ".atom", ".svg")
    assert {p.name for p in files} >= {"changelog.atom", "sitemap.xml"}
    for path in files:
        ET.parse(path)  # raises on ill-formed XML
    feed = ET.parse(out / "changelog.atom").getroot()
    title = feed.find("{http://www.w3.org/2005/Atom}title").text
    assert title == visible(f"Engine{HOSTILE} quality") == "Engine<U+202E><U+2066><U+200B><U+0007><U+0085> quality"


def test_every_inline_svg_chart_parses_as_xml(hostile_site):
    _, out = hostile_site
    charts = re.findall(r"<svg\b.*?</svg>", (out / "en" / "index.html").read_text(encoding="utf-8"), flags=re.S)
    assert charts
    for chart in charts:
        ET.fromstring(chart.replace("&nbsp;", "\u00a0"))


# Attributes that make a browser or feed reader fetch what they name, and <link> relations that fetch.
FETCH_ATTRIBUTES = {"src", "srcset", "poster", "data", "background", "action", "formaction", "ping", "xlink:href", "imagesrcset"}
FETCHING_LINKS = {"stylesheet", "icon", "preload", "prefetch", "modulepreload", "manifest", "apple-touch-icon", "dns-prefetch",
                  "preconnect"}
REMOTE_URL = re.compile(r"^\s*(//|[a-z][a-z0-9+.-]*:)", re.I)


class _Fetches(html.parser.HTMLParser):
    """Every remote fetch an HTML text asks for."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        for name, value in attrs:
            if value is None:
                continue
            urls = [part.strip().split(" ")[0] for part in value.split(",")] if name.endswith("srcset") else [value]
            if name in FETCH_ATTRIBUTES and any(REMOTE_URL.match(url) and not url.lower().startswith("data:") for url in urls):
                self.found.append(f"<{tag} {name}={value}>")
            if name == "style" and re.search(r"url\(|@import", value, re.I):
                self.found.append(f"<{tag} style={value}>")
        if tag in ("use", "image", "feimage") and REMOTE_URL.match(values.get("href") or ""):
            self.found.append(f"<{tag} href={values['href']}>")
        if tag == "link" and set((values.get("rel") or "").lower().split()) & FETCHING_LINKS and REMOTE_URL.match(values.get("href") or ""):
            self.found.append(f"<link rel={values['rel']} href={values['href']}>")
        self._in_style = tag == "style"

    def handle_data(self, data):
        if self._in_style and re.search(r"url\(\s*['\"]?\s*(//|https?:)|@import", data, re.I):
            self.found.append(f"<style>{data[:60]}")


def remote_fetches(text: str) -> list[str]:
    parser = _Fetches()
    parser.feed(text)
    parser.close()
    return parser.found


def test_the_scanner_finds_what_fetches():
    assert remote_fetches(f'<p><img alt="x" src="{REMOTE}/a.png"><a href="{REMOTE}/ok">a link is no fetch</a></p>') == [
        f"<img src={REMOTE}/a.png>"]
    assert remote_fetches('<img srcset="a.png 1x, //evil.example/b.png 2x"><link rel="stylesheet" href="https://e/x.css">'
                          '<link rel="alternate" href="https://e/en/">') == [
        "<img srcset=a.png 1x, //evil.example/b.png 2x>", "<link rel=stylesheet href=https://e/x.css>"]


def test_no_file_of_the_site_fetches_anything_from_another_host(hostile_site):
    _, out = hostile_site
    found = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", errors="replace")
        if path.suffix in (".html", ".svg"):
            problems = remote_fetches(text)
        elif path.suffix == ".atom":  # the entries' HTML, as a feed reader renders it
            problems = [f for content in ET.parse(path).getroot().iter("{http://www.w3.org/2005/Atom}content")
                        if content.get("type") == "html" for f in remote_fetches(content.text or "")]
        elif path.suffix == ".css":
            problems = re.findall(r"url\(\s*['\"]?\s*(?://|[a-z]+:)(?!data)[^)]*\)|@import[^;]*", text, flags=re.I)
        else:
            continue
        if problems:
            found[path.relative_to(out).as_posix()] = problems
    assert found == {}
    changelog = (out / "en" / "changelog.html").read_text(encoding="utf-8")
    assert f'<a href="{REMOTE}/t.png">tracker</a>' in changelog, "an image is shown as a plain link to it"
    assert '<a href="https://example.org/"><span>linked</span></a>' in changelog, "a linked image as the link's words"
    assert f"&lt;img src=&quot;{REMOTE}/raw.png&quot;&gt;" in changelog or f'&lt;img src="{REMOTE}/raw.png"&gt;' in changelog


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_hidden_characters_from_records_show_as_codes_that_reorder_nothing(hostile_site, lang):
    _, out = hostile_site
    shown = "".join(f"<span class=hidden-char dir=ltr>&lt;U+{ord(c):04X}&gt;</span>" for c in HOSTILE)
    pages = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in (out / lang).rglob("*.html")}
    case_page = next(text for path, text in pages.items() if path.endswith("cases/le/leak-unchecked/index.html"))
    assert f"Leak{shown} fixed" in case_page, "the case title"
    assert f"Regel{shown} R-ATGARD-2" in case_page, "a rule title"
    assert f"Slut{shown}." in case_page, "the document"
    assert any(f"Det framgår{shown} inte." in text for text in pages.values()), "a finding's wording"
    for path, text in pages.items():
        assert not HIDDEN.search(text), f"{path} shows a hidden character as it is"
    title = re.search(r"<title>(.*?)</title>", pages[f"{lang}/index.html"]).group(1)
    assert ("Engine" if lang == "en" else "Motorns") + visible(HOSTILE).replace("<", "&lt;").replace(">", "&gt;") in title, (
        "in the title element, where a tag would be text, the codes are plain text")
    assert "<span" not in re.search(r"<title>(.*?)</title>", case_page).group(1)


def test_the_published_records_keep_every_character_byte_for_byte(hostile_site):
    """Only the display changes: a quote can still be checked against the document in the published file."""
    records, out = hostile_site
    published = out / "downloads" / "quality-cases.json"
    assert published.read_bytes() == (records / "cases.json").read_bytes()
    assert json.loads(published.read_bytes())["case_versions"][0]["document"].endswith(f"Slut{HOSTILE}.")


ENTRY = "date: 2026-01-01\ncategory: measurement-method\nsource: https://example.org/pr/1\n---\nFirst line.\nA bell\u0007 and an override\u202e here.\n"


def test_a_hidden_character_in_a_changelog_entry_is_refused_at_its_line_and_column():
    with pytest.raises(RecordsError) as caught:
        parse_entry("changelog/2026-01-01-x.md", ENTRY)
    assert caught.value.lines() == [
        "changelog/2026-01-01-x.md:6:7: error: character <U+0007> (a control character) may not be in a changelog entry: it is "
        "invisible or reorders the text around it, and the feed's XML cannot carry every such character; remove it "
        "[entry.hidden-character]",
        "changelog/2026-01-01-x.md:6:24: error: character <U+202E> (RIGHT-TO-LEFT OVERRIDE) may not be in a changelog entry: it "
        "is invisible or reorders the text around it, and the feed's XML cannot carry every such character; remove it "
        "[entry.hidden-character]",
    ]


@pytest.fixture(scope="module")
def small_changelog():
    from sitegen.changelog.changes import build_changelog
    from sitegen.load.records import load_records

    return build_changelog(load_records(SMALL))


@settings(max_examples=150)
@given(title=st.text(), author=st.text())
def test_the_feed_parses_as_xml_whatever_text_the_records_give_it(small_changelog, title, author):
    from sitegen.render.feed import render_atom

    feed = ET.fromstring(render_atom(small_changelog, base_url="https://quality.example.org/", title=title, updated="2026-01-01",
                                     author=author))
    # an XML parser reads a carriage return (and CR LF) as a line feed
    assert (feed.find("{http://www.w3.org/2005/Atom}title").text or "") == visible(title).replace("\r\n", "\n").replace("\r", "\n")
