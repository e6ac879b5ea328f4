"""A Jinja environment whose output escaping does markupsafe's work without its per-call overhead.

A page prints hundreds of rows that macros already rendered (and so escaped) and hundreds of short strings; markupsafe's
`escape` checks each for `__html__` and wraps the result in a new Markup. What a `{{ ... }}` prints is only ever joined
into the page, so its text is all that counts: a Markup is passed on as it is, a plain string is escaped to exactly
markupsafe's entities, anything else still goes through markupsafe. Characters from records a reader could not see or
that would reorder the text around them are shown as their code (invisibles.py); this is the one place pages do that.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment
from jinja2.compiler import CodeGenerator, Frame
from markupsafe import Markup, escape

from sitegen.core.invisibles import HIDDEN, visible_html


def _entities(text: str) -> str:
    """markupsafe's entities, in an order that never escapes an entity twice."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("'", "&#39;").replace('"', "&#34;"))


def escape_output(value: Any) -> str:
    """The text markupsafe.escape(value) gives, for printing only: Markup is passed on, a plain string escaped here,
    with any hidden character shown as its code."""
    kind = type(value)
    if kind is Markup:
        return value
    if kind is str:
        value = _entities(value)
        return visible_html(value) if HIDDEN.search(value) else value
    escaped = escape(value)
    return Markup(visible_html(escaped)) if HIDDEN.search(escaped) else escaped


def escape_text(value: Any) -> str:
    """The text markupsafe.escape(value) gives (no more: hidden characters are escape_output's), for markup built in
    Python: a Markup passed on, a plain string escaped here, anything else through markupsafe."""
    kind = type(value)
    if kind is Markup:
        return value
    if kind is str:
        return _entities(value)
    return escape(value)


def format_translation(template: Markup, variables: dict[str, Any]) -> Markup:
    """`template % variables` as Markup's % gives it, with every plain string escaped by escape_output, as a `{{ ... }}`
    would print it (markupsafe's own escaping knows nothing of hidden characters).

    Markup's % wraps the mapping and each value in an escaping helper; here each value is made text once: a Markup or a
    plain int or float is formatted as it is (the helper formats those alike), a plain string by escape_output,
    anything else by markupsafe's escape, as the helper would.
    """
    made = {}
    for name, value in variables.items():
        kind = type(value)
        if kind is str:
            value = Markup(escape_output(value))
        elif kind is not Markup and kind is not int and kind is not float:
            value = escape(value)
        made[name] = value
    return Markup(str.__mod__(template, made))


class _OutputCompiler(CodeGenerator):
    """Compiles `{{ ... }}` under autoescape to call the environment's escape_output instead of markupsafe's escape."""

    def _output_child_pre(self, node, frame: Frame, finalize) -> None:
        if not frame.eval_ctx.volatile and frame.eval_ctx.autoescape:
            # `environment` is a global of every compiled template module
            self.write("environment.escape_output(")
            if finalize.src is not None:
                self.write(finalize.src)
            return
        super()._output_child_pre(node, frame, finalize)


class SiteEnvironment(Environment):
    """Jinja's Environment with escape_output in the compiled templates; rendering gives the same text."""

    code_generator_class = _OutputCompiler
    escape_output = staticmethod(escape_output)
