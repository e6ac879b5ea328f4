"""The site's Jinja environment prints exactly what plain Jinja with markupsafe prints, untrusted text escaped alike."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import DictLoader, Environment, StrictUndefined
from markupsafe import Markup, escape

from sitegen.core.invisibles import HIDDEN, visible_html
from sitegen.render.templating import SiteEnvironment, escape_output, escape_text, format_translation


class Html:
    """An object that renders itself as HTML, as markupsafe allows."""

    def __html__(self) -> str:
        return "<b>safe</b>"


@given(st.text().filter(lambda text: not HIDDEN.search(text)))
def test_a_plain_string_is_escaped_to_markupsafes_entities(text):
    assert escape_output(text) == str(escape(text))


@given(st.text())
def test_any_string_is_escaped_to_markupsafes_entities_with_hidden_characters_shown_as_codes(text):
    assert escape_output(text) == visible_html(str(escape(text)))


@pytest.mark.parametrize("value", [Markup("<i>already safe</i>"), 42, 2.5, None, Html(), ["<a>"], Markup("&amp;")])
def test_everything_else_prints_as_markupsafe_escapes_it(value):
    assert str(escape_output(value)) == str(escape(value))


@given(st.text())
def test_markup_built_in_python_escapes_any_string_exactly_as_markupsafe(text):
    assert escape_text(text) == str(escape(text))  # hidden characters included: showing them is escape_output's alone


@pytest.mark.parametrize("value", [Markup("<i>already safe</i>"), 42, 2.5, None, Html(), ["<a>"], Markup("&amp;"), True])
def test_markup_built_in_python_escapes_everything_else_as_markupsafe(value):
    assert str(escape_text(value)) == str(escape(value))


VALUES = st.one_of(st.text(), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(),
                   st.text().map(Markup), st.just(Html()), st.lists(st.text(), max_size=2))


@settings(max_examples=300)
@given(st.text().map(lambda text: text.replace("%", "%%")), st.dictionaries(st.sampled_from(["id", "num", "name"]), VALUES))
def test_a_translation_is_formatted_as_markups_percent_with_its_strings_printed_as_pages_print_them(text, variables):
    template = Markup(text + "".join(f" %({name})s" for name in variables))
    shown = {name: Markup(escape_output(value)) if type(value) is str else value for name, value in variables.items()}
    made = format_translation(template, variables)
    assert type(made) is Markup
    assert made == template % shown


def test_a_translations_plain_string_variable_is_escaped_with_its_hidden_characters_shown():
    made = format_translation(Markup("<b>%(id)s</b>"), {"id": "<x>\u202e"})
    assert made == Markup("<b>&lt;x&gt;") + Markup(visible_html("\u202e")) + Markup("</b>")


def test_markup_is_passed_on_without_a_copy():
    safe = Markup("<tr><td>row</td></tr>")
    assert escape_output(safe) is safe


TEMPLATES = {
    "macros.html": '{% macro row(x) %}<tr><td>{{ x }}</td></tr>{% endmacro %}',
    "page.html": (
        '{% import "macros.html" as m %}<p title="{{ title }}">{{ body }}</p>{{ m.row(body) }}{{ safe }}{{ n }}'
        '{% autoescape false %}{{ raw }}{% endautoescape %}{% set block %}<em>{{ body }}</em>{% endset %}{{ block }}'
        '{{ body|upper }}{{ items|join(", ") }}{% trans %}Hello {{ title }}{% endtrans %}'
        # attributes: of an object, of a property, an item of a mapping by name, a method; nested; in a macro and a loop
        '{{ thing.name }}{{ thing.shown }}{{ mapping.name }}{{ mapping.inner.name }}{{ thing.upper() }}{{ m.row(thing.name) }}'
        '{% for t in things %}{{ t.name }}{{ m.row(t.shown) }}{% endfor %}{{ thing.none is none }}'
    ),
}


class Thing:
    """An object whose attributes a template reads: one plain, one a property, one absent (an item of that name is not)."""

    def __init__(self, name):
        self.name = name
        self.none = None

    @property
    def shown(self):
        return Markup("<i>{}</i>").format(self.name)

    def upper(self):
        return self.name.upper()


def _environments():
    options = dict(loader=DictLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined, extensions=["jinja2.ext.i18n"])
    plain, site = Environment(**options), SiteEnvironment(**options)
    for env in (plain, site):
        env.install_null_translations(newstyle=True)
    return plain, site


SHOWN = st.text().filter(lambda text: not HIDDEN.search(text))  # hidden characters are the one difference: tested below


@settings(max_examples=200)
@given(SHOWN, SHOWN, st.integers())
def test_pages_render_exactly_as_with_plain_jinja(title, body, n):
    plain, site = _environments()
    context = dict(title=title, body=body, safe=Markup("<hr>"), n=n, raw="<raw>", items=["<a>", Markup("<b>")],
                   thing=Thing(body), mapping={"name": title, "inner": {"name": body}}, things=[Thing(title), Thing(body)])
    assert site.get_template("page.html").render(context) == plain.get_template("page.html").render(context)


def test_untrusted_text_is_still_escaped():
    _, site = _environments()
    html = site.get_template("page.html").render(
        title='"><script>alert(1)</script>', body="<img src=x onerror=alert(1)>", safe=Markup(""), n=0, raw="", items=[],
        thing=Thing("<s>"), mapping={"name": "<s>", "inner": {"name": "<s>"}}, things=[])
    assert "<script>" not in html and "<img" not in html
    assert "&#34;&gt;&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_missing_attribute_is_undefined_as_with_plain_jinja():
    plain, site = _environments()
    for env in (plain, site):
        template = env.from_string("{{ thing.absent }}")
        with pytest.raises(Exception) as raised:
            template.render(thing=Thing("x"))
        assert type(raised.value).__name__ == "UndefinedError" and "absent" in str(raised.value)
        assert env.from_string("{{ thing.absent is defined }}").render(thing=Thing("x")) == "False"


def _translating(calls):
    """A site environment whose `_` and `gettext` are plain callables giving Markup, each call counted in `calls`."""
    def gettext(message, **variables):
        calls.append(message)
        return Markup("[" + message + "]") % {name: escape(value) for name, value in variables.items()}
    site = SiteEnvironment(loader=DictLoader({
        "t.html": '<p title="{{ _("a & b") }}">{% trans %}Plain{% endtrans %} {% trans x=x %}with {{ x }}{% endtrans %}</p>',
        "bound.html": '{% set _ = shout %}{{ _("quiet") }}',
    }), autoescape=True, undefined=StrictUndefined, extensions=["jinja2.ext.i18n"])
    site.install_gettext_callables(gettext, lambda s, p, n, **v: Markup(s if n == 1 else p), newstyle=True)
    site.globals.update(_=gettext, gettext=gettext)
    site.constant_calls = frozenset({"_", "gettext"})
    return site


def test_a_constant_call_is_made_once_when_compiled():
    calls = []
    site = _translating(calls)
    template = site.get_template("t.html")
    compiled = list(calls)
    pages = [template.render(x="<y>") for _ in range(3)]
    assert pages == ['<p title="[a & b]">[Plain] [with &lt;y&gt;]</p>'] * 3
    assert compiled == ["a & b", "Plain"]  # the constant calls, at compile time
    assert calls == compiled + ["with %(x)s"] * 3  # the call with a variable, on every page


def test_a_name_the_template_binds_is_not_made_constant():
    calls = []
    site = _translating(calls)
    assert site.get_template("bound.html").render(shout=lambda text: text + "!") == "quiet!"
    assert calls == []
