"""A Jinja environment whose output escaping, translations and calls do Jinja's work without its per-call overhead.

A page prints hundreds of rows that macros already rendered (and so escaped) and hundreds of short strings; markupsafe's
`escape` checks each for `__html__` and wraps the result in a new Markup. What a `{{ ... }}` prints is only ever joined
into the page, so its text is all that counts: a Markup is passed on as it is (tested in the compiled code, without a
call), a plain string is escaped to exactly markupsafe's entities, anything else still goes through markupsafe.
Characters from records a reader could not see or that would reorder the text around them are shown as their code
(invisibles.py); this is the one place pages do that.

A call of a global the environment names in `constant_calls` (the page language's translations) with constant
arguments only, `_("Overview")` or a `{% trans %}` without variables, is made once, when the template is compiled for
the environment's language, and printed as the text it gave.

A page also calls a hundred macros and functions: a macro, or a function not marked to take the context, is called
without Jinja's checks for callables that do.
"""

from __future__ import annotations

from types import FunctionType, MethodType
from typing import Any

from jinja2 import Environment, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context, Macro
from jinja2.visitor import NodeTransformer
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
    """Compiles `{{ ... }}` under autoescape to pass a Markup on and give anything else to the environment's escape_output
    instead of markupsafe's escape. The value is kept in a name of its own (`t_out`: Jinja's names are `l_…` and `t_` with
    a number), assigned and read within the one expression."""

    def _output_child_pre(self, node, frame: Frame, finalize) -> None:
        if not frame.eval_ctx.volatile and frame.eval_ctx.autoescape and finalize.src is None:
            # `environment` and `Markup` are globals of every compiled template module
            self.write("(t_out if type(t_out := ")
            return
        super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node, frame: Frame, finalize) -> None:
        if not frame.eval_ctx.volatile and frame.eval_ctx.autoescape and finalize.src is None:
            self.write(") is Markup else environment.escape_output(t_out))")
            return
        super()._output_child_post(node, frame, finalize)


class _SiteContext(Context):
    """Jinja's Context, calling a macro, or a function or method not marked pass_context or the like, at once: Context.call
    looks for such marks on every callable and on its `__call__`."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        kind = type(__obj)
        # a function's or method's own mark is Jinja's `jinja_pass_arg` (a method reads its function's); a macro has none
        if not (kind is Macro or (kind is FunctionType or kind is MethodType) and not hasattr(__obj, "jinja_pass_arg")):
            return Context.call(__self, __obj, *args, **kwargs)
        kwargs.pop("_block_vars", None)
        kwargs.pop("_loop_vars", None)
        try:
            return __obj(*args, **kwargs)
        except StopIteration:  # as Context.call
            return __self.environment.undefined("value was undefined because a callable raised a StopIteration exception")


class _ConstantCalls(NodeTransformer):
    """Replaces each call of one of `names` with constant arguments by what it gives: a Markup as markup, a str as text."""

    def __init__(self, names: frozenset[str], functions: Any):
        self.names = names
        self.functions = functions

    def visit_Call(self, node: nodes.Call) -> nodes.Node:
        node = self.generic_visit(node)
        if not (isinstance(node.node, nodes.Name) and node.node.name in self.names and not node.kwargs
                and node.dyn_args is None and node.dyn_kwargs is None
                and all(isinstance(arg, nodes.Const) for arg in node.args)):
            return node
        value = self.functions[node.node.name](*(arg.value for arg in node.args))
        if type(value) is Markup:
            return nodes.MarkSafe(nodes.Const(str(value)), lineno=node.lineno)
        return nodes.Const(value, lineno=node.lineno) if type(value) is str else node


class SiteEnvironment(Environment):
    """Jinja's Environment with escape_output in the compiled templates, macros and plain functions called directly, and
    constant calls made at compile time; rendering gives the same text."""

    code_generator_class = _OutputCompiler
    context_class = _SiteContext
    escape_output = staticmethod(escape_output)
    # globals whose result depends on their arguments alone, called with the context's values never (not pass_context)
    constant_calls: frozenset[str] = frozenset()

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        """Jinja's parse, each call of a constant_calls global with constant arguments replaced by its result, unless the
        template itself binds that name (a set, a loop, a macro's parameter)."""
        tree = super()._parse(source, name, filename)
        bound = {n.name for n in tree.find_all(nodes.Name) if n.ctx != "load"}
        bound.update(arg.name for macro in tree.find_all(nodes.Macro) for arg in macro.args)
        names = self.constant_calls - bound
        return _ConstantCalls(names, self.globals).visit(tree) if names else tree
