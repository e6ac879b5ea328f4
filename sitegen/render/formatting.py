"""Numbers, dates and file sizes written the way one locale writes them, through Babel and never the process locale."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from functools import lru_cache
from decimal import ROUND_HALF_UP, Decimal

from babel import Locale
from babel.dates import format_date
from babel.numbers import format_decimal

_ISO_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")

# Decimal (SI) units: 1 kB = 1000 B, the way browsers and most file managers count today.
_SIZE_UNITS = ("kB", "MB", "GB", "TB", "PB")
_SIZE_STEP = 1000

# A size's number and unit must not be split across lines; Babel's own group separator for sv is the same character.
_NO_BREAK_SPACE = "\u00a0"


@dataclass(frozen=True)
class LocaleFormat:
    """Formatting bound to one locale, so a page never mixes Swedish and English conventions."""

    locale: str

    def __post_init__(self) -> None:
        # Fail when the formatter is made, not on the first page that uses it.
        Locale.parse(self.locale)

    def number(self, n: int) -> str:
        """Write a count with the locale's group separator (sv: 12 345 with U+00A0, en: 12,345)."""
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"number() takes an int, not {type(n).__name__}; use decimal() for fractions")
        return _count(self.locale, n)

    def decimal(self, x: int | float | Decimal, digits: int) -> str:
        """Write a number with exactly `digits` decimals, rounding halves away from zero as readers expect."""
        if isinstance(x, bool) or not isinstance(x, (int, float, Decimal)):
            raise TypeError(f"decimal() takes a number, not {type(x).__name__}")
        if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
            raise ValueError(f"digits must be a non-negative int, not {digits!r}")
        return self._fixed(_to_decimal(x), digits)

    def date(self, iso: str) -> str:
        """Write an ISO date (YYYY-MM-DD) in the locale's medium style (sv: 29 nov. 2026, en: Nov 29, 2026)."""
        if not isinstance(iso, str) or not _ISO_DATE.match(iso):
            raise ValueError(f"not an ISO date (YYYY-MM-DD): {iso!r}")
        return _date(self.locale, iso)

    def filesize(self, nbytes: int) -> str:
        """Write a file size in decimal units (1 kB = 1000 B), one decimal from kB up, e.g. sv "12,3 kB"."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, int):
            raise TypeError(f"filesize() takes an int, not {type(nbytes).__name__}")
        if nbytes < 0:
            raise ValueError(f"a file size cannot be negative: {nbytes}")
        if nbytes < _SIZE_STEP:
            return f"{self.number(nbytes)}{_NO_BREAK_SPACE}B"
        value = Decimal(nbytes)
        for index, unit in enumerate(_SIZE_UNITS):
            value = value / _SIZE_STEP
            rounded = value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
            # 999 950 B rounds to 1000.0 kB, which is written as 1.0 MB instead.
            if rounded < _SIZE_STEP or index == len(_SIZE_UNITS) - 1:
                return f"{self._fixed(rounded, 1)}{_NO_BREAK_SPACE}{unit}"
        raise AssertionError("unreachable")

    def _fixed(self, value: Decimal, digits: int) -> str:
        """Round once here, so Babel's half-even rounding never gets a say."""
        quantum = Decimal(1).scaleb(-digits)
        rounded = value.quantize(quantum, rounding=ROUND_HALF_UP)
        pattern = "#,##0" + ("." + "0" * digits if digits else "")
        return format_decimal(rounded, format=pattern, locale=self.locale, decimal_quantization=False)


def _to_decimal(x: int | float | Decimal) -> Decimal:
    """Go through str() for floats, so 0.145 rounds as the 0.145 a reader sees rather than its binary neighbour."""
    if isinstance(x, float):
        if x != x or x in (float("inf"), float("-inf")):
            raise ValueError(f"cannot format {x!r}")
        return Decimal(str(x))
    return Decimal(x)


@lru_cache(maxsize=65536)
def _count(locale: str, n: int) -> str:
    """Counts repeat on every page (1 of 1, 2 of 3): Babel formats each once per locale."""
    return format_decimal(n, locale=locale)


@lru_cache(maxsize=4096)
def _date(locale: str, iso: str) -> str:
    """Run dates repeat on every case page: Babel formats each once per locale."""
    return format_date(datetime.date.fromisoformat(iso), format="medium", locale=locale)
