"""Markdown made safe once for every caller: raw HTML escaped, script link targets dropped, nothing that fetches, headings shifted.

Pages and the Atom feed carry this HTML; a feed reader applies no CSP, so an image would be fetched from wherever it
points. Every element that would fetch something becomes a plain link to it (an image: its alt text, linking to it),
and only attributes that fetch nothing are kept.
"""

from __future__ import annotations

import html as htmllib
import re

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor
from markupsafe import Markup

SAFE_SCHEMES = ("http", "https", "mailto")
# What Python-Markdown (with the extensions callers use) writes that fetches nothing; any other element or attribute goes.
KEPT_ATTRIBUTES = {"href", "title", "id", "start", "align"}
_TEXT_ALIGN = re.compile(r"text-align: (left|right|center);")  # the tables extension's only style
FETCHING = {"img", "image", "picture", "source", "video", "audio", "track", "iframe", "frame", "embed", "object", "link",
            "script", "style", "svg", "use", "input", "base", "meta", "form", "portal"}


def is_safe_url(url: str) -> bool:
    """Whether a browser would follow `url` to an http(s)/mailto target or a relative one, never to script."""
    # Browsers decode entities and ignore whitespace and control characters before reading the scheme.
    decoded = re.sub(r"[\x00-\x20\x7f]+", "", htmllib.unescape(url)).lower()
    scheme = re.match(r"([^/?#]*):", decoded)
    return scheme is None or scheme.group(1) in SAFE_SCHEMES


def render_markdown(text: str, *, extensions: tuple[str, ...] = (), shift_headings: int = 0) -> Markup:
    """Render Markdown with raw HTML escaped (Python-Markdown passes it through by default) and unsafe links removed."""
    md = markdown.Markdown(extensions=[*extensions, _SafeExtension(shift_headings)], output_format="html")
    return Markup(md.convert(text))


class _SafeExtension(Extension):
    def __init__(self, shift_headings: int):
        super().__init__()
        self.shift_headings = shift_headings

    def extendMarkdown(self, md: markdown.Markdown) -> None:  # noqa: N802 - Markdown's API name
        # Without these two, raw HTML blocks and inline tags are passed through untouched;
        # with them gone, tags are escaped like any other text.
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        # After 'inline' (20), which creates the links, and before 'prettify' (10).
        md.treeprocessors.register(_Guard(md, self.shift_headings), "sitegen-guard", 15)


class _Guard(Treeprocessor):
    def __init__(self, md: markdown.Markdown, shift_headings: int):
        super().__init__(md)
        self.shift_headings = shift_headings

    def run(self, root) -> None:
        in_link = {child for parent in root.iter("a") for child in parent.iter() if child is not parent}
        for element in root.iter():
            tag = element.tag
            if self.shift_headings and isinstance(tag, str) and len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
                element.tag = f"h{min(int(tag[1]) + self.shift_headings, 6)}"
            if isinstance(tag, str) and tag.lower() in FETCHING:
                _as_link(element, inside_a_link=element in in_link)
            for attribute, value in list(element.attrib.items()):
                keep = attribute in KEPT_ATTRIBUTES or (attribute == "style" and _TEXT_ALIGN.fullmatch(value))
                if not keep or (attribute == "href" and not is_safe_url(value)):
                    del element.attrib[attribute]


def _as_link(element, *, inside_a_link: bool) -> None:
    """An image (or anything else that would fetch) as a link to what it would have fetched, its alt text as the words;
    inside a link (a linked image) only the words, since links do not nest."""
    target = element.get("src") or element.get("href") or element.get("data") or ""
    words = element.get("alt") or element.get("title") or target
    tail = element.tail
    element.clear()  # attributes and children (and the tail, put back)
    element.tag, element.text, element.tail = ("span" if inside_a_link else "a"), words, tail
    if target and not inside_a_link:
        element.set("href", target)  # dropped below if it would run script
