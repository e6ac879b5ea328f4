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


def escape_output(value: Any) -> str:
    """The text markupsafe.escape(value) gives, for printing only: Markup is passed on, a plain string escaped here,
    with any hidden character shown as its code."""
    kind = type(value)
    if kind is Markup:
        return value
    if kind is str:
        # markupsafe's entities, in an order that never escapes an entity twice
        value = (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                 .replace("'", "&#39;").replace('"', "&#34;"))
        return visible_html(value) if HIDDEN.search(value) else value
    escaped = escape(value)
    return Markup(visible_html(escaped)) if HIDDEN.search(escaped) else escaped


def escaped_variables(variables: dict[str, Any]) -> dict[str, Any]:
    """A translation's %-variables with every plain string escaped by escape_output, as a `{{ ... }}` would print it
    (markupsafe's own escaping, which Markup's % would use, knows nothing of hidden characters)."""
    return {name: Markup(escape_output(value)) if type(value) is str else value for name, value in variables.items()}


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
