"""Where pages and anchors are, and the links a reason names (expected findings, findings, repetitions, versions), made
in Python: a page's reasons name many ids, and a macro per link was the render's most frequent call."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from sitegen.render.templating import escape_text


def case_path(case_version: str, run: str | None = None) -> str:
    """Where a case version's page (or its page for one run) lives below a language folder; sharded by the id's first two characters."""
    return f"cases/{case_version[:2]}/{case_version}/{run + '.html' if run else 'index.html'}"


def repetition_anchor(repetition: str | int, stage: str | None = None) -> str:
    """The anchor of a repetition (and stage) on a case's run page; a span of repetitions points at its first."""
    first = str(repetition).split("-", 1)[0]
    return f"r{first}-{stage}" if stage else f"r{first}"


def relative_href(rest: str, target: str) -> str | None:
    """`target` (below the language folder, with its fragment) as written from the page `rest` of the same language: a
    fragment alone on that page itself, a file name alone in its folder; None where the link must start from `base`.

    A case-run page's reasons link mostly to its own rows and to its case page beside it: this keeps those links short.
    """
    path, hash_, fragment = target.partition("#")
    folder, slash, _ = rest.rpartition("/")
    if path == rest:
        return f"#{fragment}" if hash_ else path.rpartition("/")[2]
    if slash and path.startswith(folder + "/") and "/" not in path[len(folder) + 1:]:
        return path[len(folder) + 1:] + hash_ + fragment
    return None


def _link(target: Any, text: Any) -> Markup:
    return Markup(f'<a href="{escape_text(target)}">{escape_text(text)}</a>')


def _code_link(target: Any, text: Any) -> Markup:
    return Markup(f'<a href="{escape_text(target)}"><code>{escape_text(text)}</code></a>')


class PageLinks:
    """The links a reason names, as written from one page: a page's reasons get it as an argument (`links`), so
    reasons.html.j2 is one module per language instead of one imported with every page's context.

    `rest`: the page below its language folder (None: no page, links start from `base`); `base`: the way from the page
    to its language folder; `detailed`: environment.Detail; `word`: the language's environment.Words.
    """

    __slots__ = ("rest", "base", "detailed", "word")

    def __init__(self, rest: str | None, base: str, detailed: Any, word: Any):
        self.rest = rest
        self.base = base
        self.detailed = detailed
        self.word = word

    def href(self, target: str) -> str:
        """A link from the page to `target` (below the language folder): relative_href, else from `base`."""
        return (relative_href(self.rest, target) if self.rest is not None else None) or f"{self.base}{target}"

    def expected(self, cv: str, id: str) -> Markup:
        """An expected finding, linked to its row of the key on the case page."""
        return _code_link(self.href(f"{case_path(cv)}#key-{id}"), id)

    def finding(self, run_id: str, cv: str, repetition: Any, stage: str, id: str, rerun: bool = False) -> Markup:
        """A finding, linked to its row on the case-run page; named without a link when that page is not kept
        (`--detail-runs`): the case page shows states only, so every such link led to the same place as the
        observation's own link to it."""
        if not self.detailed(cv, run_id):
            return code(id)
        section = f"{repetition_anchor(repetition)}-rerun-{stage}" if rerun else repetition_anchor(repetition, stage)
        return _code_link(self.href(self.detailed.link(cv, run_id, f"{section}-f-{id}")), id)

    def findings(self, run_id: str, cv: str, repetition: Any, stage: str, ids: Any) -> Markup:
        """Several findings of one stage, linked, separated by commas."""
        return Markup(", ").join(self.finding(run_id, cv, repetition, stage, id) for id in ids)

    def repetition(self, run_id: str, cv: str, repetition: Any, capital: bool = False) -> Markup:
        """A repetition (or a pair of them, at its first), named in the page's language and linked to its section."""
        name = self.word.repetition[repetition] if capital else self.word.repetition_ref[repetition]
        if not self.detailed(cv, run_id):  # no case-run page to land on: as finding
            return Markup(name)
        return _link(self.href(self.detailed.link(cv, run_id, repetition_anchor(repetition))), Markup(name))

    def version(self, run_id: str, cv: str, repetition: Any) -> Markup:
        """A case version of a pair, linked to the repetition on its case-run page."""
        return _code_link(self.href(self.detailed.link(cv, run_id, repetition_anchor(repetition))), cv)


def row_link(section_id: str, finding: str) -> Markup:
    """A finding of the same page, linked to its row in a stage's section (the row ids CaseRows writes)."""
    return _code_link(Markup(f"#{escape_text(section_id)}-f-{escape_text(finding)}"), finding)  # a Markup section id stays as it is


def code(text: Any) -> Markup:
    return Markup(f"<code>{escape_text(text)}</code>")


LINKS = {"code": code, "row_link": row_link}
