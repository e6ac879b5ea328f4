"""Markdown made safe once for every caller: raw HTML escaped, script link targets dropped, headings shifted on request."""

from __future__ import annotations

import html as htmllib
import re

import markdown
from markdown.extensions import Extension
from markdown.treeprocessors import Treeprocessor
from markupsafe import Markup

SAFE_SCHEMES = ("http", "https", "mailto")


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
        for element in root.iter():
            tag = element.tag
            if self.shift_headings and isinstance(tag, str) and len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
                element.tag = f"h{min(int(tag[1]) + self.shift_headings, 6)}"
            for attribute in ("href", "src"):
                value = element.get(attribute)
                if value is not None and not is_safe_url(value):
                    del element.attrib[attribute]
