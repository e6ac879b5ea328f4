"""The long prose per language (Markdown files beside the templates) and the sitemap of every page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence
from xml.sax.saxutils import escape

from sitegen.changelog.markup import render_markdown
from sitegen.core.errors import Diagnostic, PublicationError
from sitegen.core.invisibles import visible
from sitegen.score.measures.registry import MEASURES
from sitegen.render.environment import Page

SECTIONS = ("matching", "glossary", "outcomes", "release", "downloads", "changelog-intro", "accessibility")
PAGE_PROSE = frozenset({"accessibility"})  # prose that is a whole page rather than a section of one

# A sitemap file may list at most 50,000 URLs (sitemaps.org); beyond that an index points to parts.
SITEMAP_LIMIT = 50_000


@dataclass(frozen=True)
class Prose:
    """A Markdown file of prose: its first-line heading and its body as HTML."""

    heading: str
    html: str


def load_content(content_dir: Path, lang: str) -> Mapping[str, Prose]:
    """Read and render one language's prose files; a missing file is named, not skipped."""
    names = ("method-intro", *SECTIONS, *(f"measure-{m}" for m in MEASURES))
    content = {}
    missing = []
    for name in names:
        path = content_dir / lang / f"{name}.md"
        if not path.is_file():
            missing.append(Diagnostic(str(path), None, None, None, "prose file is missing", "content.missing"))
            continue
        # a page of its own keeps its "##" sections at h2; the method page's prose sits under its own h2s
        content[name.replace("-", "_")] = render_prose(path.read_text(encoding="utf-8"), 0 if name in PAGE_PROSE else 1)
    if missing:
        raise PublicationError(missing)
    return content


def render_prose(text: str, shift_headings: int = 1) -> Prose:
    """Split off the "# heading" line and render the rest, raw HTML escaped and headings one level down (a section's)."""
    heading = ""
    lines = text.split("\n")
    if lines and lines[0].startswith("# "):
        heading, text = lines[0][2:].strip(), "\n".join(lines[1:])
    return Prose(heading, str(render_markdown(text, extensions=("tables", "def_list"), shift_headings=shift_headings)))


def render_sitemap(paths: Iterable[str], *, base_url: str, build_date: str) -> list[Page]:
    """Absolute URLs of every HTML page but the 404; split into parts under an index past the protocol's limit."""
    urls = sorted(p for p in paths if p.endswith(".html") and p != "404.html")
    lastmod = f"<lastmod>{escape(build_date)}</lastmod>" if build_date else ""

    def urlset(chunk: Sequence[str]) -> bytes:
        body = "".join(f"<url><loc>{escape(visible(base_url + u))}</loc>{lastmod}</url>\n" for u in chunk)
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + body + "</urlset>\n").encode("utf-8")

    if len(urls) <= SITEMAP_LIMIT:
        return [Page("sitemap.xml", urlset(urls))]
    parts = [urls[i : i + SITEMAP_LIMIT] for i in range(0, len(urls), SITEMAP_LIMIT)]
    out = [Page(f"sitemap-{n}.xml", urlset(chunk)) for n, chunk in enumerate(parts, start=1)]
    index = "".join(f"<sitemap><loc>{escape(visible(base_url + p.path))}</loc>{lastmod}</sitemap>\n" for p in out)
    out.append(Page("sitemap.xml", ('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + index + "</sitemapindex>\n").encode("utf-8")))
    return out
