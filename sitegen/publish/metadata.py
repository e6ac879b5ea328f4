"""The public run metadata a reader needs to re-score and rebuild the site: published runs, their setups, the site's configuration.

The records hold an unpublished run's metadata beside the published ones, so these files are written from the records
(published runs only and without their internal bookkeeping, the setups they used, the configuration without the deny-list and unpublished answers files), in
canonical JSON: written again from what they hold, they come out byte for byte the same, so a site rebuilt from its
downloads publishes the very same files. Changelog entries are published as they were checked in.
"""

from __future__ import annotations

import json

from sitegen.core import model as m
from sitegen.core.files import InMemoryFile
from sitegen.score.results import canonical_json

FOLDER = "metadata"  # under downloads/, beside the records the configuration publishes
CONFIG = "sitegen.json"
RUNS = "runs.json"
SETUPS = "setups.json"
CHANGELOG = "changelog"
INTERNAL = "internal"  # a run's own bookkeeping (costs, storage): never published, never shown


def public_metadata(records: m.Records) -> tuple[tuple[str, str, InMemoryFile], ...]:
    """(name under downloads/, records file it stands for, bytes) of each metadata file, sorted by name."""
    published = {run.id for run in records.published_runs}
    runs = _value(records, RUNS)
    setups_used = {run["setup"] for run in runs["runs"] if run["id"] in published}
    config = _value(records, CONFIG)
    config["answers"] = [name for name in config["answers"] if name in {p.record for p in records.config.publish}]
    config["internal_fields"] = []  # which fields are internal is itself internal; nothing published holds one
    runs["runs"] = [{k: v for k, v in run.items() if k != INTERNAL} for run in runs["runs"] if run["id"] in published]
    setups = _value(records, SETUPS)
    setups["setups"] = [setup for setup in setups["setups"] if setup["id"] in setups_used]
    files = [(CONFIG, canonical_json(config)), (RUNS, canonical_json(runs)), (SETUPS, canonical_json(setups))]
    files += [(f"{CHANGELOG}/{_file_name(entry.path)}", _entry_bytes(entry)) for entry in records.entries]
    return tuple(sorted((f"{FOLDER}/{record}", record, InMemoryFile(data)) for record, data in files))


def _value(records: m.Records, name: str) -> dict:
    """A records file's JSON value as checked in (it loaded, so it parses), read again from its checked digest."""
    return json.loads(records.files[name].data)


def _file_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _entry_bytes(entry: m.Entry) -> bytes:
    with open(entry.path, "rb") as file:
        return file.read()
