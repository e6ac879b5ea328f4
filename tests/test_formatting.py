"""Exact strings per locale: Babel's CLDR data changes between releases, so the pinned version must keep producing these."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest
from babel.core import UnknownLocaleError

from sitegen.render.formatting import LocaleFormat

NBSP = "\u00a0"

SV = LocaleFormat("sv")
EN = LocaleFormat("en")

# Swedish: no-break space groups thousands, comma marks decimals; English: comma groups, point marks decimals.
NUMBERS = [
    (0, "0", "0"),
    (7, "7", "7"),
    (999, "999", "999"),
    (1000, f"1{NBSP}000", "1,000"),
    (12345, f"12{NBSP}345", "12,345"),
    (1234567, f"1{NBSP}234{NBSP}567", "1,234,567"),
    (-1234, f"-1{NBSP}234", "-1,234"),
]

DECIMALS = [
    (3, 2, "3,00", "3.00"),
    (1234.5, 1, f"1{NBSP}234,5", "1,234.5"),
    (-1234.5, 1, f"-1{NBSP}234,5", "-1,234.5"),
    (1 / 3, 3, "0,333", "0.333"),
    # halves round away from zero, not to even
    (0.125, 2, "0,13", "0.13"),
    (2.5, 0, "3", "3"),
    # 0.145 is stored as 0.14499…; the reader sees 0.145 and expects 0.15
    (0.145, 2, "0,15", "0.15"),
    (Decimal("12345.678"), 2, f"12{NBSP}345,68", "12,345.68"),
]

DATES = [
    ("2026-11-29", "29 nov. 2026", "Nov 29, 2026"),
    ("2026-05-03", "3 maj 2026", "May 3, 2026"),
    ("2026-09-02", "2 sep. 2026", "Sep 2, 2026"),
    ("2026-01-01", "1 jan. 2026", "Jan 1, 2026"),
]

# Decimal units (1 kB = 1000 B); a no-break space between number and unit.
SIZES = [
    (0, f"0{NBSP}B", f"0{NBSP}B"),
    (999, f"999{NBSP}B", f"999{NBSP}B"),
    (1000, f"1,0{NBSP}kB", f"1.0{NBSP}kB"),
    (12345, f"12,3{NBSP}kB", f"12.3{NBSP}kB"),
    (12350, f"12,4{NBSP}kB", f"12.4{NBSP}kB"),
    (999_949, f"999,9{NBSP}kB", f"999.9{NBSP}kB"),
    # would round to 1000,0 kB: moves up a unit instead
    (999_950, f"1,0{NBSP}MB", f"1.0{NBSP}MB"),
    (1_234_567, f"1,2{NBSP}MB", f"1.2{NBSP}MB"),
    (3_500_000_000, f"3,5{NBSP}GB", f"3.5{NBSP}GB"),
    (5 * 10**12, f"5,0{NBSP}TB", f"5.0{NBSP}TB"),
]


@pytest.mark.parametrize(("n", "sv", "en"), NUMBERS)
def test_number(n, sv, en):
    assert SV.number(n) == sv
    assert EN.number(n) == en


@pytest.mark.parametrize(("x", "digits", "sv", "en"), DECIMALS)
def test_decimal(x, digits, sv, en):
    assert SV.decimal(x, digits) == sv
    assert EN.decimal(x, digits) == en


@pytest.mark.parametrize(("iso", "sv", "en"), DATES)
def test_date_medium(iso, sv, en):
    assert SV.date(iso) == sv
    assert EN.date(iso) == en


@pytest.mark.parametrize(("nbytes", "sv", "en"), SIZES)
def test_filesize(nbytes, sv, en):
    assert SV.filesize(nbytes) == sv
    assert EN.filesize(nbytes) == en


def test_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SV.locale = "en"  # type: ignore[misc]


def test_unknown_locale_fails_when_made():
    with pytest.raises(UnknownLocaleError):
        LocaleFormat("xx")


@pytest.mark.parametrize("bad", ["2026-9-2", "20261129", "2026-11-29T10:00", "29 nov. 2026", "2026-02-30", ""])
def test_date_refuses_anything_but_iso(bad):
    with pytest.raises(ValueError):
        SV.date(bad)


def test_number_refuses_fractions_and_bools():
    with pytest.raises(TypeError):
        SV.number(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        SV.number(True)


def test_decimal_refuses_nan_and_negative_digits():
    with pytest.raises(ValueError):
        EN.decimal(float("nan"), 1)
    with pytest.raises(ValueError):
        EN.decimal(1.0, -1)


def test_filesize_refuses_negative():
    with pytest.raises(ValueError):
        EN.filesize(-1)


def test_formatting_never_touches_the_process_locale():
    import inspect

    import sitegen.render.formatting

    source = inspect.getsource(sitegen.render.formatting)
    assert "import locale" not in source
    assert "setlocale" not in source
