"""The changelog's Atom feed and JSON list: valid, complete, stable ids, deterministic bytes."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from markupsafe import Markup

from sitegen.changelog.changes import Changelog, ChangelogRow
from sitegen.core.errors import UsageError
from sitegen.render.feed import render_atom, render_changelog_json

A = "{http://www.w3.org/2005/Atom}"
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
BASE = "https://quality.example.org/"
FP = "450b71051d07509fa3544e75d0c9bcb4e8cb42ce591f918d964d35568b0aceea"

ROWS = (
    ChangelogRow(date="2026-09-02", kind="setup", anchor=f"setup-{FP[:12]}", run_id="2026-09-02-release",
                 setup_id="regression-v2-release", fingerprint=FP),
    ChangelogRow(date="2026-09-02", kind="suite", anchor="suite-controlled-regression-1",
                 run_id="2026-09-02-release", suite="controlled-regression", suite_version=1),
    ChangelogRow(date="2026-09-02", kind="scorer", anchor="scorer-6", run_id="2026-09-02-release", version=6,
                 matching_method="structured-identity/whitespace-collapsed/v6", explains="scorer:6",
                 explained_by="entry-2026-08-20-scorer-6"),
    ChangelogRow(date="2026-09-02", kind="report", anchor="report-5-runner-2-run-record-4",
                 run_id="2026-09-02-release", version=5, runner_version=2, run_record_version=4,
                 explains="report:5/runner:2/run-record:4", explained_by="entry-x"),
    ChangelogRow(date="2026-09-02", kind="assessment", anchor="assessment-1-short-case-v1",
                 run_id="2026-09-02-release", version=1, policy="short-case-v1",
                 explains="assessment:1/policy:short-case-v1", explained_by="entry-y"),
    ChangelogRow(date="2026-08-20", kind="entry", anchor="entry-2026-08-20-scorer-6", explains="scorer:6",
                 explains_anchor="scorer-6", category="measurement-method",
                 source="https://github.com/example/granska-quality/pull/41",
                 html=Markup("<p>A quote on the same line &amp; wider is <em>contained</em>.</p>"),
                 summary="A quote on the same line & wider is contained.", lang="en"),
)
CHANGELOG = Changelog(rows=ROWS)


def atom(changelog: Changelog = CHANGELOG, **overrides) -> bytes:
    arguments = {"base_url": BASE, "title": "Engine quality: every change to the tests",
                 "updated": "2026-09-03T12:00:00Z"} | overrides
    return render_atom(changelog, **arguments)


def test_feed_has_the_required_atom_elements():
    feed = ET.fromstring(atom())
    assert feed.tag == f"{A}feed"
    assert feed.findtext(f"{A}id") == BASE + "en/changelog.atom"  # beside the English changelog page
    assert feed.findtext(f"{A}title") == "Engine quality: every change to the tests"
    assert feed.findtext(f"{A}updated") == "2026-09-03T12:00:00Z"
    assert feed.find(f"{A}author/{A}name").text
    links = {link.get("rel"): link.get("href") for link in feed.findall(f"{A}link")}
    assert links == {"self": BASE + "en/changelog.atom", "alternate": BASE + "en/changelog.html"}

    entries = feed.findall(f"{A}entry")
    assert len(entries) == len(ROWS)
    for element in entries:
        for required in ("id", "title", "updated"):
            assert element.findtext(f"{A}{required}"), required
        assert RFC3339.match(element.findtext(f"{A}updated"))
        assert element.find(f"{A}link[@rel='alternate']").get("href").startswith(BASE + "en/changelog.html#")
        assert element.find(f"{A}content") is not None


def test_entry_ids_are_unique_and_follow_the_row_anchors():
    entries = ET.fromstring(atom()).findall(f"{A}entry")
    ids = [element.findtext(f"{A}id") for element in entries]
    assert len(set(ids)) == len(ids)
    assert ids == [f"{BASE}en/changelog.html#{row.anchor}" for row in ROWS]


def test_entry_ids_are_stable_across_builds_and_bytes_are_identical():
    first, second = atom(), atom(Changelog(rows=tuple(ROWS)))
    assert first == second
    # A new change at the top leaves every earlier entry's id as it was.
    newer = ChangelogRow(date="2026-10-01", kind="scorer", anchor="scorer-7", run_id="r7", version=7,
                         matching_method="m/v7", explains="scorer:7", explained_by="entry-z")
    ids = lambda data: [e.findtext(f"{A}id") for e in ET.fromstring(data).findall(f"{A}entry")]  # noqa: E731
    assert ids(atom(Changelog(rows=(newer,) + ROWS)))[1:] == ids(first)


def test_derived_entries_are_worded_in_english_with_their_facts():
    titles = [e.findtext(f"{A}title") for e in ET.fromstring(atom()).findall(f"{A}entry")]
    assert titles[0] == f"Run setup regression-v2-release with fingerprint {FP}, first used in a published run."
    assert titles[1] == "Test suite controlled-regression, version 1, first measured in a published run."
    assert titles[2] == ("Scorer version 6 with matching method structured-identity/whitespace-collapsed/v6, "
                         "first used in a published run.")
    assert titles[3] == "Report version 5 (runner 2, run record 4), first used in a published run."
    assert titles[4] == "Assessment version 1 under policy short-case-v1, first used in a published run."
    assert titles[5] == "Measurement method: A quote on the same line & wider is contained."


def test_hand_written_entry_content_is_escaped_html_with_its_source():
    data = atom()
    assert b"<em>" not in data  # the entry's HTML travels as escaped text, never as feed markup
    [element] = [e for e in ET.fromstring(data).findall(f"{A}entry")
                 if e.findtext(f"{A}id").endswith("#entry-2026-08-20-scorer-6")]
    content = element.find(f"{A}content")
    assert content.get("type") == "html"
    assert content.text == str(ROWS[-1].html)
    assert element.find(f"{A}link[@rel='related']").get("href") == ROWS[-1].source
    assert element.findtext(f"{A}updated") == "2026-08-20T00:00:00Z"


def test_base_url_without_trailing_slash_and_date_only_updated():
    feed = ET.fromstring(atom(base_url="https://quality.example.org", updated="2026-09-03"))
    assert feed.findtext(f"{A}id") == BASE + "en/changelog.atom"
    assert feed.findtext(f"{A}updated") == "2026-09-03T00:00:00Z"


def test_updated_must_be_a_timestamp():
    with pytest.raises(UsageError):
        atom(updated="3 September 2026")


def test_an_empty_changelog_is_still_a_valid_feed():
    feed = ET.fromstring(atom(Changelog(rows=())))
    assert feed.findall(f"{A}entry") == [] and feed.find(f"{A}author") is not None


def test_json_list_is_canonical_and_complete():
    data = render_changelog_json(CHANGELOG)
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")
    document = json.loads(data)
    assert data == (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    assert document["format"] == "sitegen.changelog/1"
    assert [row["anchor"] for row in document["rows"]] == [row.anchor for row in ROWS]
    assert document["rows"][2]["matching_method"] == "structured-identity/whitespace-collapsed/v6"
    assert document["rows"][5]["html"] == str(ROWS[-1].html)
    assert render_changelog_json(Changelog(rows=tuple(ROWS))) == data


def test_json_keeps_non_ascii_as_utf8():
    row = ChangelogRow(date="2026-09-01", kind="entry", anchor="entry-a", category="test-cases",
                       source="https://a.example/", html=Markup("<p>Läckan är åtgärdad.</p>"),
                       summary="Läckan är åtgärdad.", lang="en")
    assert "Läckan är åtgärdad.".encode("utf-8") in render_changelog_json(Changelog(rows=(row,)))


# --- issue 17: one feed per language, each linked from its changelog page -----------------------------------------

from html.parser import HTMLParser  # noqa: E402
from pathlib import Path  # noqa: E402

RECORDS = Path(__file__).resolve().parent.parent / "records"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    from sitegen.build import build_site

    out = tmp_path_factory.mktemp("feeds") / "site"
    build_site(RECORDS, out)
    return out


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if "id" in attrs:
            self.ids.add(attrs["id"])


def page(site: Path, path: str) -> Links:
    parser = Links()
    parser.feed((site / path).read_text(encoding="utf-8"))
    return parser


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_each_language_has_its_own_valid_feed_beside_its_changelog_page(site, lang):
    """Parsed with an XML parser: Atom's required elements, the feed's language, its own address, rows on its own page."""
    feed = ET.fromstring((site / lang / "changelog.atom").read_bytes())
    assert feed.tag == f"{A}feed" and feed.get("{http://www.w3.org/XML/1998/namespace}lang") == lang
    assert feed.findtext(f"{A}id") == f"{BASE}{lang}/changelog.atom"
    assert feed.findtext(f"{A}title") and RFC3339.match(feed.findtext(f"{A}updated")) and feed.findtext(f"{A}author/{A}name")
    links = {link.get("rel"): link.get("href") for link in feed.findall(f"{A}link")}
    assert links == {"self": f"{BASE}{lang}/changelog.atom", "alternate": f"{BASE}{lang}/changelog.html"}
    anchors = page(site, f"{lang}/changelog.html").ids
    entries = feed.findall(f"{A}entry")
    assert entries
    for entry in entries:
        for child in ("id", "title", "updated"):
            assert entry.findtext(f"{A}{child}"), child
        link = entry.find(f"{A}link[@rel='alternate']").get("href")
        assert entry.findtext(f"{A}id") == link and link.startswith(f"{BASE}{lang}/changelog.html#")
        assert link.split("#", 1)[1] in anchors


def test_the_swedish_feed_words_the_derived_rows_in_swedish_and_keeps_entries_english(site):
    xml_lang = "{http://www.w3.org/XML/1998/namespace}lang"
    sv = ET.fromstring((site / "sv" / "changelog.atom").read_bytes())
    en = ET.fromstring((site / "en" / "changelog.atom").read_bytes())
    pairs = list(zip(sv.findall(f"{A}entry"), en.findall(f"{A}entry")))
    assert len(pairs) == len(sv.findall(f"{A}entry")) == len(en.findall(f"{A}entry"))
    derived = [(s, e) for s, e in pairs if s.find(f"{A}category").get("term") in ("scorer", "suite", "setup", "report", "assessment")]
    written = [(s, e) for s, e in pairs if (s, e) not in derived]
    assert derived and written
    for s, e in derived:
        assert s.get(xml_lang) is None and e.get(xml_lang) is None  # the feed's own language
        assert s.findtext(f"{A}title") != e.findtext(f"{A}title")
        assert re.search(r"(använd|använt|mätt) första gången i en publicerad körning", s.findtext(f"{A}title"))
    for s, e in written:
        assert s.get(xml_lang) == "en" and e.get(xml_lang) is None  # hand-written in English
        assert s.findtext(f"{A}title") == e.findtext(f"{A}title")
        assert s.findtext(f"{A}content") == e.findtext(f"{A}content")


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_each_changelog_page_links_to_the_feed_of_its_language(site, lang):
    tags = page(site, f"{lang}/changelog.html").tags
    feeds = [a for tag, a in tags if tag == "link" and a.get("rel") == "alternate" and a.get("type") == "application/atom+xml"]
    visible = [a for tag, a in tags if tag == "a" and a.get("type") == "application/atom+xml"]
    assert len(feeds) == 1 and len(visible) == 1
    for attrs in feeds + visible:
        assert (site / lang / attrs["href"]).resolve() == (site / lang / "changelog.atom").resolve()
    # the language alternates stay the pages, and the sitemap lists pages only
    alternates = {a["hreflang"]: a["href"] for tag, a in tags if tag == "link" and a.get("rel") == "alternate" and "hreflang" in a}
    assert alternates == {"sv": f"{BASE}sv/changelog.html", "en": f"{BASE}en/changelog.html", "x-default": f"{BASE}sv/changelog.html"}
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert ".atom" not in sitemap and f"{BASE}{lang}/changelog.html" in sitemap
