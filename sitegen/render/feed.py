"""The changelog as Atom feeds and a JSON list, so readers can follow changes to the tests without visiting the site.

One feed per language, at `<lang>/changelog.atom` beside that language's changelog page: the rows sitegen derives
are worded in the feed's language through its catalog; hand-written entries stay in the language they were written
in (English), marked with `xml:lang`. Each entry links to its row on the changelog page of the feed's language, and
that link is also the entry's id, which stays the same across builds as long as the base URL and the row's anchor do.
`/changelog.atom`, the English feed's first address, is kept for the readers who follow it.
"""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET
from typing import Callable

from sitegen.changelog.changes import ASSESSMENT, ENTRY, REPORT, SCORER, SETUP, SUITE, Changelog, ChangelogRow
from sitegen.core.errors import UsageError
from sitegen.core.invisibles import visible

ATOM_NS = "http://www.w3.org/2005/Atom"
FEED_NAME = "changelog.atom"
FEED_PATH = FEED_NAME  # the English feed's first address, kept
PAGE_NAME = "changelog.html"
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


def describe_row(row: ChangelogRow, gettext: Callable[[str], str] | None = None) -> str:
    """One sentence for a row in the feed's language (`gettext` of its catalog; English without); entries stay English."""
    _ = gettext or _english
    if row.kind == SETUP:
        return _("Run setup %(setup)s with fingerprint %(fingerprint)s, first used in a published run.") % {
            "setup": row.setup_id, "fingerprint": row.fingerprint}
    if row.kind == SUITE:
        return _("Test suite %(suite)s, version %(version)s, first measured in a published run.") % {
            "suite": row.suite, "version": row.suite_version}
    if row.kind == SCORER:
        return _("Scorer version %(version)s with matching method %(method)s, first used in a published run.") % {
            "version": row.version, "method": row.matching_method}
    if row.kind == REPORT:
        return _("Report version %(version)s (runner %(runner)s, run record %(record)s), first used in a published run.") % {
            "version": row.version, "runner": row.runner_version, "record": row.run_record_version}
    if row.kind == ASSESSMENT:
        return _("Assessment version %(version)s under policy %(policy)s, first used in a published run.") % {
            "version": row.version, "policy": row.policy}
    return f"{CATEGORY_LABELS.get(row.category or '', row.category)}: {row.summary}"


def _english(message: str) -> str:
    return message


def feed_path(lang: str) -> str:
    """Where a language's feed lives, beside that language's changelog page."""
    return f"{lang}/{FEED_NAME}"


def render_atom(changelog: Changelog, *, base_url: str, title: str, updated: str, author: str | None = None,
                lang: str = "en", gettext: Callable[[str], str] | None = None, path: str | None = None) -> bytes:
    """A valid Atom 1.0 document in one language (`gettext` of its catalog), byte-identical for identical input.

    `path` is where the feed is served (its id and self link): `<lang>/changelog.atom` unless given.
    """
    base = base_url if base_url.endswith("/") else base_url + "/"
    page = f"{base}{lang}/{PAGE_NAME}"
    here = base + (path or feed_path(lang))
    feed = ET.Element("feed", {"xmlns": ATOM_NS, "xml:lang": lang})
    _child(feed, "id", here)
    _child(feed, "title", title)
    _child(feed, "updated", to_rfc3339(updated))
    ET.SubElement(_child(feed, "author"), "name").text = author if author is not None else title
    ET.SubElement(feed, "link", {"rel": "self", "type": "application/atom+xml", "href": here})
    ET.SubElement(feed, "link", {"rel": "alternate", "type": "text/html", "href": page})
    for row in changelog.rows:
        link = f"{page}#{row.anchor}"
        written_in = (row.lang or "en") if row.kind == ENTRY else lang
        entry = ET.SubElement(feed, "entry", {"xml:lang": written_in} if written_in != lang else {})
        _child(entry, "id", link)
        _child(entry, "title", describe_row(row, gettext))
        _child(entry, "updated", to_rfc3339(row.date))
        ET.SubElement(entry, "link", {"rel": "alternate", "type": "text/html", "href": link})
        ET.SubElement(entry, "category", {"term": row.category if row.kind == ENTRY else row.kind})
        if row.kind == ENTRY:
            _child(entry, "content", str(row.html), type="html")
            if row.source:
                ET.SubElement(entry, "link", {"rel": "related", "href": row.source})
        else:
            _child(entry, "content", describe_row(row, gettext), type="text")
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
