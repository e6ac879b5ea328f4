"""The changelog as an Atom feed and a JSON list, so readers can follow changes to the tests without visiting the site.

The feed is in English, the language the hand-written entries are recorded in. It lives at
`/changelog.atom`; each entry links to its row on `/en/changelog.html`, and that link is also the
entry's id, which stays the same across builds as long as the base URL and the row's anchor do.
"""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET

from sitegen.changelog.changes import ASSESSMENT, ENTRY, REPORT, SCORER, SETUP, SUITE, Changelog, ChangelogRow
from sitegen.core.errors import UsageError
from sitegen.core.invisibles import visible

ATOM_NS = "http://www.w3.org/2005/Atom"
FEED_PATH = "changelog.atom"
PAGE_PATH = "en/changelog.html"
JSON_FORMAT = "sitegen.changelog/1"

CATEGORY_LABELS = {
    "publication-rules": "Publication rules",
    "engine-change": "Change in the engine under test",
    "measurement-method": "Measurement method",
    "test-cases": "Test cases",
    "scoring-rules": "Scoring rules",
    "run-setup": "Run setup",
}

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def describe_row(row: ChangelogRow) -> str:
    """One English sentence for a row, for the feed only; the site's pages word rows through their catalogs."""
    if row.kind == SETUP:
        return (f"Run setup {row.setup_id} with fingerprint {row.fingerprint}, "
                "first used in a published run.")
    if row.kind == SUITE:
        return f"Test suite {row.suite}, version {row.suite_version}, first measured in a published run."
    if row.kind == SCORER:
        return (f"Scoring version {row.version} with matching method {row.matching_method}, "
                "first used in a published run.")
    if row.kind == REPORT:
        return (f"Report version {row.version} (runner {row.runner_version}, "
                f"run record {row.run_record_version}), first used in a published run.")
    if row.kind == ASSESSMENT:
        return f"Assessment version {row.version} under policy {row.policy}, first used in a published run."
    return f"{CATEGORY_LABELS.get(row.category or '', row.category)}: {row.summary}"


def render_atom(changelog: Changelog, *, base_url: str, title: str, updated: str, author: str | None = None) -> bytes:
    """A valid Atom 1.0 document with byte-identical output for identical input."""
    base = base_url if base_url.endswith("/") else base_url + "/"
    page = base + PAGE_PATH
    feed = ET.Element("feed", {"xmlns": ATOM_NS, "xml:lang": "en"})
    _child(feed, "id", base + FEED_PATH)
    _child(feed, "title", title)
    _child(feed, "updated", to_rfc3339(updated))
    ET.SubElement(_child(feed, "author"), "name").text = author if author is not None else title
    ET.SubElement(feed, "link", {"rel": "self", "type": "application/atom+xml", "href": base + FEED_PATH})
    ET.SubElement(feed, "link", {"rel": "alternate", "type": "text/html", "href": page})
    for row in changelog.rows:
        link = f"{page}#{row.anchor}"
        entry = ET.SubElement(feed, "entry")
        _child(entry, "id", link)
        _child(entry, "title", describe_row(row))
        _child(entry, "updated", to_rfc3339(row.date))
        ET.SubElement(entry, "link", {"rel": "alternate", "type": "text/html", "href": link})
        ET.SubElement(entry, "category", {"term": row.category if row.kind == ENTRY else row.kind})
        if row.kind == ENTRY:
            _child(entry, "content", str(row.html), type="html")
            if row.source:
                ET.SubElement(entry, "link", {"rel": "related", "href": row.source})
        else:
            _child(entry, "content", describe_row(row), type="text")
    for element in feed.iter():  # XML 1.0 cannot carry most of them, even as character references
        element.text = visible(element.text) if element.text else element.text
        element.attrib.update({name: visible(value) for name, value in element.attrib.items()})
    ET.indent(feed)
    return ET.tostring(feed, encoding="utf-8", xml_declaration=True) + b"\n"


def render_changelog_json(changelog: Changelog) -> bytes:
    """Canonical JSON of every row with all its fields, for readers who process the list."""
    rows = [{k: (str(v) if isinstance(v, str) else v) for k, v in dataclasses.asdict(row).items()}
            for row in changelog.rows]
    document = {"format": JSON_FORMAT, "rows": rows}
    return (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def to_rfc3339(value: str) -> str:
    """An RFC 3339 timestamp; a bare date means midnight UTC, so row dates need no invented time of day."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return f"{value}T00:00:00Z"
    if _RFC3339.fullmatch(value):
        return value
    raise UsageError(f"not an RFC 3339 timestamp or ISO date: {value!r}")


def _child(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attributes)
    element.text = text
    return element
