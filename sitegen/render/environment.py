"""One Jinja environment per locale with its remembered translations and labels: templates compile once, strings translate once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from sitegen.core.invisibles import codes_as_text
from sitegen.score.measures.registry import (ACROSS_STAGES, INVARIANCE_MEASURE, MEASURES, PAIR_MEASURES, REASON_WORDS,
                                             REASON_WORDS_ABSENT, TITLES)
from sitegen.render.formatting import LocaleFormat
from sitegen.render.links import LINKS, PageLinks, case_path, repetition_anchor
from sitegen.render.reasons import REASON_FORMS, pair_reading
from sitegen.render.templating import SiteEnvironment, format_translation
from sitegen.render.views import grid_rows, listed_observations, page_window, same_runs


@dataclass(frozen=True)
class Page:
    """One file of the site: where it goes (POSIX, relative to the site root) and its exact bytes."""

    path: str
    data: bytes



class Detail:
    """Which case versions keep a page per run (`sitegen build --detail-runs K`): each its newest K runs, or every run.

    A run beyond them is summarised on the case page (its states per repetition), with its data in the downloads.
    """

    def __init__(self, runs_by_case: Mapping[str, tuple[Any, ...]] | None = None, newest: int | None = None):
        self.newest = newest
        self._kept = None if newest is None else {cv: frozenset(r.id for r in runs[:newest]) for cv, runs in (runs_by_case or {}).items()}
        self._runs = None if self._kept is None else frozenset().union(*self._kept.values())

    def __call__(self, case_version: str, run: str) -> bool:
        return self._kept is None or run in self._kept.get(case_version, ())

    def lists(self, run: str) -> bool:
        """Whether a run's long lists (its observations and regressions) get pages of their own beyond the run page: only
        for a run some case version keeps a page for. Another run's page shows the first items of each list; all of
        them are in the downloads, and its grid of states stays whole."""
        return self._runs is None or run in self._runs

    def link(self, case_version: str, run: str, anchor: str) -> str:
        """Where a link to a case version's page for a run (at `anchor`) goes: that page, or the case page's outcomes."""
        if self(case_version, run):
            return f"{case_path(case_version, run)}#{anchor}"
        return f"{case_path(case_version)}#outcomes-heading"


# Every page carries it in a <meta> element, and `sitegen serve` sends it as a header: no script, nothing from another host.
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"


class Renderer:
    """One compiled Jinja environment per locale, so templates compile once and gettext never crosses languages."""

    def __init__(self, lang: str, translations: Any, *, templates: Path, config: Any, languages: tuple[str, ...], build_date: str,
                 detail: Detail | None = None):
        self.lang = lang
        self.config = config
        self.languages = languages
        self.build_date = build_date
        env = SiteEnvironment(
            loader=FileSystemLoader(str(templates)),
            autoescape=True,
            undefined=StrictUndefined,
            extensions=["jinja2.ext.i18n"],
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # templates never change during a build; spares a stat per page and template
        )
        _RememberedTranslations(translations).install(env)
        env.constant_calls = _RememberedTranslations.CONSTANT  # before any template is compiled
        env.filters["codes_as_text"] = lambda html: Markup(codes_as_text(str(html)))
        env.globals.update(
            fmt=LocaleFormat(lang),
            lang=lang,
            MEASURES=MEASURES,
            PAIR_MEASURES=PAIR_MEASURES,
            ACROSS_STAGES=ACROSS_STAGES,
            INVARIANCE_MEASURE=INVARIANCE_MEASURE,
            config=config,
            build_date=build_date,
            case_path=case_path,
            detailed=detail or Detail(),
            anchor=repetition_anchor,
            pair_reading=pair_reading,
            same_runs=same_runs,
            listed_observations=listed_observations,
            grid_rows=grid_rows,
            page_window=page_window,
            **LINKS,
            reason_form=REASON_FORMS,
            case_text_untranslated=case_text_untranslated(config.case_text_language, lang),
            csp=Markup(CONTENT_SECURITY_POLICY),  # a constant, and no character in it needs escaping in an attribute
        )
        # the measures' titles and reasons' words are the registry's msgids, in this page's language
        gettext = env.globals["_"]
        env.globals["measure_title"] = Memo(lambda measure: gettext(TITLES[measure]) if measure in TITLES else escape(measure))
        env.globals["reason_word"] = Memo(lambda code: _reason_word(gettext, code))
        env.globals["reason_word_absent"] = Memo(lambda code: gettext(REASON_WORDS_ABSENT[code]) if code in REASON_WORDS_ABSENT
                                                 else env.globals["reason_word"][code])
        env.globals["word"] = Words(env.get_template("macros.html.j2").module, env.globals)
        self.env = env
        self.case_rows = env.get_template("case_rows.html.j2").module  # after `word`: a module sees the globals of its making

    def page(self, template: str, rest: str, context: Mapping[str, Any], *, at_root: bool = False, standalone: bool = False) -> Page:
        """Render `template` as the page `rest` of this language, or at the site root for the root copies.

        Every page links relatively, so the site works from whatever path it is served at; but a standalone page (the
        404, which has no alternates) is served in place of whatever address was missed, at any depth, so its links
        start from the path of the base URL on its host (same origin, for the CSP): a site served from a sub-path
        names it in `base_url`.
        """
        path = rest if at_root else f"{self.lang}/{rest}"
        url = self.config.base_url
        root = urlsplit(url).path if standalone else "../" * path.count("/")
        # a page of a language links to the pages of its own language from its own folder, not through the root
        base = f"{root}{self.lang}/" if at_root or standalone else "../" * (path.count("/") - 1)
        globals_ = self.env.globals
        html = self.env.get_template(template).render(
            **context,
            path=path,
            rest=rest,
            root=root,
            base=base,
            links=PageLinks(rest, base, globals_["detailed"], globals_["word"]),
            others=tuple(lang for lang in self.languages if lang != self.lang),
            switch_rest="index.html" if standalone else rest,
            alternates=() if standalone else tuple((lang, f"{url}{lang}/{rest}") for lang in self.languages),
            x_default=f"{url}{self.config.default_language}/{rest}",
            canonical=None if standalone else f"{url}{self.lang}/{rest}",
            site_url=url,
        )
        return Page(path, html.encode("utf-8"))


class _RememberedTranslations:
    """A catalog's answers remembered as the Markup templates get: every page asks for the same few hundred strings.

    The callables stand in for Jinja's newstyle gettext wrappers (autoescape is always on in these environments) and
    give the same values: the translation as Markup, %-formatted with the call's variables (escaped). A call with no
    variables of its own always yields the same Markup, so it is formatted once.
    """

    # what a call of these with constant arguments gives never varies: templating.SiteEnvironment makes it at compile time
    CONSTANT = frozenset({"_", "gettext", "pgettext"})

    def __init__(self, translations: Any):
        self._translations = translations
        self._fixed: dict[tuple, Markup] = {}
        self._singular: dict[tuple, Markup] = {}
        self._plural: dict[tuple, Markup] = {}

    def install(self, env: Environment) -> None:
        """Put the callables where the i18n extension's {% trans %} and _() look for them."""
        env.install_gettext_callables(self.gettext, self.ngettext, newstyle=True, pgettext=self.pgettext,
                                      npgettext=self.npgettext)
        # The extension wrapped them; these already are the wrapped kind, and _ need not look gettext up per call.
        env.globals.update(_=self.gettext, gettext=self.gettext, ngettext=self.ngettext, pgettext=self.pgettext,
                           npgettext=self.npgettext)

    def gettext(self, message: str, /, **variables: Any) -> Markup:
        if not variables:
            key = (None, message)
            found = self._fixed.get(key)
            if found is None:
                found = self._fixed[key] = Markup(self._translations.gettext(message)) % variables
            return found
        key = (None, message)
        if key not in self._singular:
            self._singular[key] = Markup(self._translations.gettext(message))
        return format_translation(self._singular[key], variables)

    def pgettext(self, context: str, message: str, /, **variables: Any) -> Markup:
        if not variables:
            key = (context, message)
            found = self._fixed.get(key)
            if found is None:
                found = self._fixed[key] = Markup(self._translations.pgettext(context, message)) % {"context": context}
            return found
        variables.setdefault("context", context)
        key = (context, message)
        if key not in self._singular:
            self._singular[key] = Markup(self._translations.pgettext(context, message))
        return format_translation(self._singular[key], variables)

    def ngettext(self, singular: str, plural: str, n: int, /, **variables: Any) -> Markup:
        variables.setdefault("num", n)
        key = (None, singular, plural, n)
        if key not in self._plural:
            self._plural[key] = Markup(self._translations.ngettext(singular, plural, n))
        return format_translation(self._plural[key], variables)

    def npgettext(self, context: str, singular: str, plural: str, n: int, /, **variables: Any) -> Markup:
        variables.setdefault("context", context)
        variables.setdefault("num", n)
        key = (context, singular, plural, n)
        if key not in self._plural:
            self._plural[key] = Markup(self._translations.npgettext(context, singular, plural, n))
        return format_translation(self._plural[key], variables)


class Memo(dict):
    """A macro's output per argument, rendered on first use: labels repeat on every page, their wording never varies.

    With `limit`, only the first `limit` arguments are kept (others are rendered each time): for a macro whose arguments
    are as many as the pages (a case's table of counts), so that a process rendering page after page does not grow."""

    def __init__(self, macro: Callable[..., Any], limit: int | None = None):
        super().__init__()
        self.macro = macro
        self.limit = limit

    def __missing__(self, key: Any) -> Any:
        value = self.macro(key)
        if self.limit is None or len(self) < self.limit:
            self[key] = value
        return value


def case_text_untranslated(case_text_language: str | None, lang: str) -> bool:
    """Whether a page in `lang` says case titles and pair descriptions are shown untranslated: their language is known
    only when the configuration names it, so only a page in that language leaves the note out."""
    return case_text_language is None or case_text_language.split("-")[0].lower() != lang


def _reason_word(gettext: Callable[[str], Markup], code: str) -> Markup:
    """A reason code's word on the pages: the registry's text in the page's language, else the code itself."""
    if code in REASON_WORDS:
        return gettext(REASON_WORDS[code])
    return Markup("<code>{}</code>").format(code) if code else Markup("–")


COUNTS_KEPT = 2000  # distinct tables of counts kept per language and process (about 1.5 KB each)


class Words:
    """The short labels of one language (states, kinds, categories, reasons), each macro of macros.html.j2 memoized."""

    def __init__(self, macros: Any, made: Mapping[str, Any]):
        self.state = Memo(lambda state: macros.state_badge(state, code=False))
        self.state_code = Memo(macros.state_badge)
        self.kind = Memo(macros.kind_word)
        self.yes_no = Memo(macros.yes_no)
        self.lines = Memo(macros.lines_ref)
        self.stage = Memo(macros.stage_name)  # a heading, or the start of a line
        self.stage_in_text = Memo(macros.stage_in_text)  # inside a sentence
        self.evidence = Memo(macros.evidence_word)
        self.reason = made["reason_word"]
        self.reason_absent = made["reason_word_absent"]  # when the expected finding has no passage
        self.measure = made["measure_title"]
        self.result = Memo(macros.result_word)
        self.first_miss = Memo(macros.first_miss_word)
        self.document_type = Memo(macros.document_type_word)
        self.category = Memo(macros.category_word)
        self.missed = macros.phrase("missed")
        self.not_found = macros.phrase("not_found")
        self.nothing_quoted = macros.phrase("nothing_quoted")
        self.location_only = macros.phrase("location_only")
        self.no_trace = macros.phrase("no_trace")
        self.support = macros.phrase("support")
        self.says_missing = macros.phrase("says_missing")
        self.stage_open = Memo(lambda key: macros.stage_open(*key))
        self.expected_open = Memo(macros.expected_open)
        self.findings_open = Memo(lambda key: macros.findings_open(*key))
        self.alike_open = macros.alike_open()
        self.repetition = Memo(macros.repetition_word)
        # (first, last): one repetition's label, or a span's ("Repetitions 1–3")
        self.repetitions = Memo(lambda span: macros.repetition_word(span[0]) if span[0] == span[1] else macros.repetitions_word(*span))
        self.repetition_ref = Memo(macros.repetition_ref)
        self.pair = Memo(macros.pair_ref)  # an observation of a pair of versions, named by the pair, not by a stage
        self.explained_under = Memo(macros.explained_under)
        self.outcome = Memo(macros.outcome_word)
        self.count = Memo(macros.count_word)
        self.number = Memo(made["fmt"].number)
        # one per distinct table of counts (passing cases repeat theirs, and come early), its labels and cells memoized
        # too; at 10,000 case versions, kept without a limit, the tables grew each rendering process by about 14 MiB a run
        self.counts = Memo(lambda counts: macros.counts_table(counts, self.passed_of), limit=COUNTS_KEPT)
        self.passed_of = Memo(macros.passed_of)
        self.matched_lead = Memo(lambda key: macros.matched_lead(*key))

