"""What every standard export is made from and how its JSON is written, in one place for the three formats."""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from sitegen.core import model as m
from sitegen.core.files import InMemoryFile, SourceFile
from sitegen.load.spool import each_run

Published = Sequence[tuple[str, SourceFile | InMemoryFile]]


@dataclass(frozen=True)
class ExportContext:
    """What every export is made from: the records, the recorded results (verified before this), the catalogs."""

    records: m.Records
    results: Mapping[str, m.RunResult]  # a run is unpacked each time it is read: read whole once, for the case table
    catalogs: Mapping[str, Any]  # language -> compiled Translations, for the names and descriptions in every language
    downloads: Published  # the published records files, as (name under downloads/, file)
    summaries: Mapping[str, m.RunResult]  # each published run's headline (RunResult.headline: no cases, observations, seal)

    @classmethod
    def of(cls, records: m.Records, results: Mapping[str, m.RunResult], catalogs: Mapping[str, Any],
           downloads: Published) -> "ExportContext":
        """The context, with every published run's summary taken in one pass over the results (each run unpacked once).
        No export reads a seal, and at 10,000 case versions a run's (a digest per answer) takes about 10 MiB."""
        summaries = {run_id: result.headline()
                     for run_id, result in each_run(results, [run.id for run in records.published_runs])}
        return cls(records, results, catalogs, downloads, MappingProxyType(summaries))

    @property
    def runs(self) -> tuple[m.Run, ...]:
        """The published runs, oldest first (date, then id): the order of every row and file of the exports."""
        return tuple(sorted(self.records.published_runs, key=lambda r: (r.date, r.id)))

    @property
    def date(self) -> str:
        """The publication's date: its newest published run's. Not the build's date (SOURCE_DATE_EPOCH), so the same
        records give the same exports, and the same checksums on the downloads page, whenever they are built."""
        return max((r.date for r in self.records.published_runs), default="1970-01-01")

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.records.config.languages)

    @property
    def title(self) -> str:
        """The site's title in English, the language these formats' plain-text fields are read in (else the first)."""
        return self.records.config.title.get("en") or next(iter(self.records.config.title.values()))

    @property
    def page_language(self) -> str:
        """The language of the pages the plain-text fields link to: English when the site has it."""
        return "en" if "en" in self.languages else self.records.config.default_language

    def texts(self, msgid: str, **values: object) -> dict[str, str]:
        """One English msgid in every language of the site, its named placeholders filled in."""
        return {lang: self.catalogs[lang].gettext(msgid) % values if values else self.catalogs[lang].gettext(msgid)
                for lang in self.languages}

    def url(self, path: str) -> str:
        return self.records.config.base_url + path

    def download_named(self, record: str) -> str | None:
        """The name a records file is published under (e.g. results.json), or None when it is not published."""
        for published in self.records.config.publish:
            if published.record == record:
                return published.name
        return None


def json_bytes(value: object) -> bytes:
    """Sorted keys, two-space indent, UTF-8 as it is, final newline: same value, same bytes."""
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
