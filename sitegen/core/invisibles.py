"""Characters from records that a reader could not see, or that would reorder the text around them, shown as their code.

Which characters, and how they look, is decided here once: bidirectional embeddings, overrides, isolates and marks
(U+202A-202E, U+2066-2069, U+200E, U+200F, U+061C), zero-width and other invisible format characters (U+200B-200D,
U+2060-2064, U+206A-206F, U+FEFF, U+FFF9-FFFB), line and paragraph separators (U+2028, U+2029), control characters
(C0 but tab, line feed and carriage return; DEL; C1), the noncharacters U+FFFE and U+FFFF, and lone surrogates. Each is
shown as `<U+XXXX>`: on pages inside an element of its own (templating.escape_output), in XML files as text (feed,
sitemap), since XML 1.0 cannot carry most of them at all. Only what is displayed changes: the records, and the quotes
checked against their documents, keep every character, and the published files are their bytes.
"""

from __future__ import annotations

import re

HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
                    "\ud800-\udfff\ufeff\ufff9-\ufffb\ufffe\uffff]")
HTML_CLASS = "hidden-char"


def code_of(char: str) -> str:
    """`<U+202E>`: how a hidden character is written out for a reader."""
    return f"<U+{ord(char):04X}>"


def visible(text: str) -> str:
    """`text` with every hidden character written as its code, for plain-text and XML output."""
    return HIDDEN.sub(lambda match: code_of(match.group(0)), text)


def visible_html(escaped: str) -> str:
    """Already escaped HTML text with every hidden character as its code, in a span that keeps its own direction.

    The span's attributes are unquoted on purpose: printed into a quoted attribute value (where a tag is only text) it
    holds no quote that could end the value.
    """
    return HIDDEN.sub(lambda match: f"<span class={HTML_CLASS} dir=ltr>&lt;U+{ord(match.group(0)):04X}&gt;</span>", escaped)


_SHOWN_HTML = re.compile(rf"<span class={HTML_CLASS} dir=ltr>(&lt;U\+[0-9A-F]{{4,6}}&gt;)</span>")


def codes_as_text(html: str) -> str:
    """Printed HTML with the codes' spans taken off again, for the one place where a tag is text: the <title> element."""
    return _SHOWN_HTML.sub(r"\1", html)
