"""Translation catalogs checked against their template and compiled in memory, so a gap fails the build instead of showing English."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from babel import Locale
from babel.core import UnknownLocaleError
from babel.messages.catalog import PYTHON_FORMAT, Catalog, Message
from babel.messages.mofile import write_mo
from babel.messages.plurals import get_plural
from babel.messages.pofile import PoFileError, PoFileParser
from babel.support import Translations

from sitegen.core.errors import CatalogError, Diagnostic

DEFAULT_DOMAIN = "sitegen"


def load_catalogs(
    locales_dir: Path, languages: Sequence[str], *, domain: str = DEFAULT_DOMAIN
) -> Mapping[str, Translations]:
    """Check every language's catalog against the template and compile it, failing once with every problem found."""
    catalogs = _read_checked(Path(locales_dir), languages, domain=domain)
    return MappingProxyType({lang: _compile(catalog, domain=domain) for lang, catalog in catalogs.items()})


def check_catalogs(locales_dir: Path, languages: Sequence[str], *, domain: str = DEFAULT_DOMAIN) -> None:
    """Run the checks of load_catalogs without compiling, for `sitegen check`."""
    _read_checked(Path(locales_dir), languages, domain=domain)


# --- reading ---------------------------------------------------------------


class _TrackingCatalog(Catalog):
    """A Catalog that remembers what read_po's parser merges away silently: duplicate entries and the header's line."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.duplicates: list[tuple[Message, int | None]] = []
        self.header_lineno: int | None = None

    def __setitem__(self, id, message):
        if id == "":
            self.header_lineno = message.lineno
        else:
            earlier = self.get(id, context=message.context)
            if earlier is not None:
                self.duplicates.append((message, earlier.lineno))
        super().__setitem__(id, message)


@dataclass(frozen=True)
class _Read:
    catalog: _TrackingCatalog | None
    diagnostics: tuple[Diagnostic, ...]


def _template_path(locales_dir: Path, domain: str) -> Path:
    return Path(locales_dir) / f"{domain}.pot"


def _po_path(locales_dir: Path, lang: str, domain: str) -> Path:
    return Path(locales_dir) / lang / "LC_MESSAGES" / f"{domain}.po"


def _read(path: Path, *, locale: str | None, domain: str, what: str) -> _Read:
    """Parse one .po/.pot the way read_po(abort_invalid=True) does, but keeping duplicates and the header line."""
    where = str(path)
    if not path.is_file():
        return _Read(None, (_diag(where, None, f"{what} not found", code="catalog.file-missing"),))
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return _Read(None, (_diag(where, line, "not valid UTF-8", code="catalog.syntax"),))
    catalog = _TrackingCatalog(locale=locale, domain=domain)
    # read_po() is exactly these two calls; the subclass is the only difference.
    parser = PoFileParser(catalog, ignore_obsolete=False, abort_invalid=True)
    try:
        parser.parse(text.splitlines(keepends=True))
    except PoFileError as exc:
        message = str(exc).rsplit(" on ", 1)[0]
        return _Read(None, (_diag(where, exc.lineno + 1, message, code="catalog.syntax"),))
    except (ValueError, UnknownLocaleError) as exc:  # e.g. an unparsable header
        return _Read(None, (_diag(where, catalog.header_lineno, str(exc), code="catalog.syntax"),))
    return _Read(catalog, ())


def _read_checked(locales_dir: Path, languages: Sequence[str], *, domain: str) -> dict[str, Catalog]:
    """Read the template and every catalog, collect every problem across all languages, and raise once."""
    template_path = _template_path(locales_dir, domain)
    template = _read(template_path, locale=None, domain=domain, what="message template")
    diagnostics: list[Diagnostic] = list(template.diagnostics)
    catalogs: dict[str, Catalog] = {}
    for lang in languages:
        path = _po_path(locales_dir, lang, domain)
        read = _read(path, locale=lang, domain=domain, what=f"translation catalog for {lang!r}")
        diagnostics.extend(read.diagnostics)
        if read.catalog is None:
            continue
        found = _check(read.catalog, template.catalog, lang=lang, path=str(path), template_path=str(template_path))
        diagnostics.extend(found)
        if not found:
            catalogs[lang] = read.catalog
    if diagnostics:
        raise CatalogError(diagnostics)
    return catalogs


# --- checking ----------------------------------------------------------------


def _check(
    catalog: _TrackingCatalog, template: Catalog | None, *, lang: str, path: str, template_path: str
) -> list[Diagnostic]:
    """Every problem of one catalog: header, then entries in file order, then template entries it lacks."""
    found = _check_header(catalog, lang=lang, path=path)
    entries: list[Diagnostic] = []
    for message, first in catalog.duplicates:
        entries.append(
            _diag(path, message.lineno, f"{_name(message)} appears twice (first at line {first})", code="catalog.duplicate")
        )
    for message in catalog.obsolete.values():
        entries.append(_diag(path, message.lineno, f"{_name(message)} is obsolete (#~); remove it", code="catalog.obsolete"))
    for message in _entries(catalog):
        entries.extend(_check_entry(message, template, path=path, template_path=template_path))
    reported = {(d.line, d.code) for d in entries}
    for message, errors in catalog.check():
        for error in errors:
            code = "catalog.plural" if "plural" in str(error).lower() else "catalog.placeholder"
            if (message.lineno, code) not in reported:
                entries.append(_diag(path, message.lineno, f"{_name(message)}: {error}", code=code))
                reported.add((message.lineno, code))
    entries.sort(key=lambda d: d.line or 0)
    found.extend(entries)
    if template is not None:
        for wanted in _entries(template):
            if catalog.get(wanted.id, context=wanted.context) is None:
                found.append(
                    _diag(
                        path,
                        None,
                        f"{_name(wanted)} of {template_path}:{wanted.lineno} has no entry",
                        code="catalog.missing",
                    )
                )
    return found


def _check_header(catalog: _TrackingCatalog, *, lang: str, path: str) -> list[Diagnostic]:
    line = catalog.header_lineno
    found: list[Diagnostic] = []
    if catalog.fuzzy:
        found.append(_diag(path, line, "the header is marked fuzzy", code="catalog.fuzzy"))
    wanted = str(Locale.parse(lang))
    if catalog.locale_identifier != wanted:
        found.append(
            _diag(
                path,
                line,
                f"Language header says {catalog.locale_identifier or 'nothing'!r}, the folder says {wanted!r}",
                code="catalog.language",
            )
        )
    expected_plurals = get_plural(lang).num_plurals
    if catalog.num_plurals != expected_plurals:
        found.append(
            _diag(
                path,
                line,
                f"Plural-Forms has nplurals={catalog.num_plurals}; {lang!r} needs {expected_plurals}",
                code="catalog.plural",
            )
        )
    if catalog.charset.lower() != "utf-8":
        found.append(_diag(path, line, f"charset is {catalog.charset!r}; catalogs must be UTF-8", code="catalog.charset"))
    return found


def _check_entry(message: Message, template: Catalog | None, *, path: str, template_path: str) -> list[Diagnostic]:
    line = message.lineno
    found: list[Diagnostic] = []
    if template is not None:
        source = template.get(message.id, context=message.context)
        if source is None:
            found.append(_diag(path, line, f"{_name(message)} is not in {template_path}", code="catalog.extra"))
        elif source.pluralizable != message.pluralizable or (
            source.pluralizable and source.id[1] != message.id[1]
        ):
            plural = f"msgid_plural {_quote(source.id[1])}" if source.pluralizable else "no plural"
            found.append(_diag(path, line, f"{_name(message)} must have {plural}, as in {template_path}", code="catalog.plural"))
    if message.fuzzy:
        found.append(_diag(path, line, f"{_name(message)} is marked fuzzy", code="catalog.fuzzy"))
    strings = _strings(message)
    empty = [label for label, text in strings if not text]
    if empty:
        found.append(_diag(path, line, f"{_name(message)} is not translated ({', '.join(empty)} empty)", code="catalog.untranslated"))
    problems = _placeholder_problems(message)
    if problems:
        found.append(_diag(path, line, f"{_name(message)}: {'; '.join(problems)}", code="catalog.placeholder"))
    return found


@dataclass(frozen=True)
class _Placeholders:
    named: frozenset[str]
    positional: int
    lone_percent: bool


def _scan(text: str) -> _Placeholders:
    """The %-placeholders of a string as Jinja's newstyle gettext will apply them (it always %-formats)."""
    named: set[str] = set()
    positional = 0
    for match in PYTHON_FORMAT.finditer(text):
        name, _flags, typechar = match.groups()
        if typechar == "%" and name is None:
            continue
        if name is None:
            positional += 1
        else:
            named.add(name)
    rest = PYTHON_FORMAT.sub("", text)
    return _Placeholders(frozenset(named), positional, "%" in rest)


def _placeholder_problems(message: Message) -> list[str]:
    """Compare placeholders of each msgstr with its msgid: none unknown, none dropped, no lone %."""
    if message.pluralizable:
        singular, plural = (_scan(text) for text in message.id[:2])
        sources = [singular] + [plural] * (len(message.string) - 1)
        allowed = singular.named | plural.named
    else:
        sources = [_scan(message.id)]
        allowed = sources[0].named
    problems: list[str] = []
    for (label, text), source in zip(_strings(message), sources):
        if not text:
            continue
        got = _scan(text)
        # A singular form may say "one file" instead of "%(num)s file"; every other form keeps all of its source's.
        required = set() if message.pluralizable and label == "msgstr[0]" else source.named
        missing = sorted(required - got.named)
        unknown = sorted(got.named - allowed)
        if missing:
            problems.append(f"{label} lacks {', '.join(f'%({n})s' for n in missing)}")
        if unknown:
            problems.append(f"{label} has unknown {', '.join(f'%({n})s' for n in unknown)}")
        if got.positional != source.positional:
            problems.append(f"{label} has {got.positional} positional placeholder(s), msgid has {source.positional}")
        if got.lone_percent:
            problems.append(f"{label} has a lone % (write %% for a percent sign)")
    return problems


# --- compiling ---------------------------------------------------------------


def _compile(catalog: Catalog, *, domain: str) -> Translations:
    """Build the .mo in memory: Translations.load would silently fall back to no translation."""
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return Translations(fp=buffer, domain=domain)


# --- small helpers -------------------------------------------------------------


def _entries(catalog: Catalog) -> list[Message]:
    return [m for m in catalog if m.id]


def _strings(message: Message) -> list[tuple[str, str]]:
    if message.pluralizable:
        return [(f"msgstr[{i}]", s) for i, s in enumerate(message.string)]
    return [("msgstr", message.string)]


def _name(message: Message) -> str:
    msgid = message.id[0] if message.pluralizable else message.id
    text = f"msgid {_quote(msgid)}"
    if message.context is not None:
        text = f"msgctxt {_quote(message.context)} {text}"
    return text


def _quote(text: str, limit: int = 60) -> str:
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f'"{text}"'


def _diag(path: str, line: int | None, message: str, *, code: str) -> Diagnostic:
    return Diagnostic(path=path, line=line, column=None, pointer=None, message=message, code=code)
