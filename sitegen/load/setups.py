"""Run setups and their fingerprints: SHA-256 of the canonical configuration, computed here and refused when it differs."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from sitegen.core import model as m
from sitegen.core.errors import RecordsError
from sitegen.load.jsonread import JsonText
from sitegen.load.reading import Collector, check_unique_ids, read_file, require_folder

SETUPS_FILE = "setups.json"


def fingerprint(configuration: object) -> str:
    """SHA-256 of the canonical JSON of a run setup's configuration."""
    return hashlib.sha256(canonical_configuration(configuration).encode("utf-8")).hexdigest()


def canonical_configuration(configuration: object) -> str:
    return json.dumps(configuration, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def read_setups(doc: JsonText, out: Collector) -> dict[str, m.Setup]:
    items = doc.value["setups"]
    check_unique_ids(doc, items, "/setups", "run setup", out)
    setups = {}
    for index, s in enumerate(items):
        computed = fingerprint(s["configuration"])
        if computed != s["fingerprint"]:
            out.at(doc, f"/setups/{index}/fingerprint",
                   f"fingerprint does not match the configuration: stored {s['fingerprint'][:12]}…, computed {computed} "
                   "(sitegen computes it; run `sitegen fingerprint` to print it)", "record.fingerprint")
        setups.setdefault(s["id"], m.Setup(s["id"], canonical_configuration(s["configuration"]), computed, s["configuration"]["merge"]))
    return setups


@dataclass(frozen=True)
class SetupFingerprint:
    """A run setup's fingerprint as computed from its configuration, and what setups.json stores (None: nothing)."""

    setup: str
    computed: str
    stored: str | None

    @property
    def matches(self) -> bool:
        return self.stored == self.computed


def setup_fingerprints(root: Path | str) -> tuple[SetupFingerprint, ...]:
    """Every setup's fingerprint from setups.json alone, in file order, beside the one it stores.

    For `sitegen fingerprint`, which is how a new or edited setup gets its fingerprint: a stored fingerprint that is
    missing, malformed or stale is therefore no problem here. Anything else wrong with setups.json (unreadable, not
    JSON, a setup without a valid configuration, a repeated id) is, and raises RecordsError with located diagnostics.
    """
    root = Path(root)
    require_folder(root)
    out = Collector()
    doc = read_file(root, SETUPS_FILE, "setups", out, {}, checked=_with_computed_fingerprints)
    if doc is not None:
        check_unique_ids(doc, doc.value["setups"], "/setups", "run setup", out)
    if out.diagnostics:
        raise RecordsError(out.diagnostics)
    return tuple(SetupFingerprint(s["id"], fingerprint(s["configuration"]), _stored(s)) for s in doc.value["setups"])


def _with_computed_fingerprints(value: object) -> object:
    """setups.json as it would be with every fingerprint right, to check everything else in it at the same places."""
    if not isinstance(value, dict) or not isinstance(value.get("setups"), list):
        return value
    setups = [dict(s, fingerprint=fingerprint(s.get("configuration"))) if isinstance(s, dict) else s for s in value["setups"]]
    return dict(value, setups=setups)


def _stored(setup: dict) -> str | None:
    if "fingerprint" not in setup:
        return None
    stored = setup["fingerprint"]
    return stored if isinstance(stored, str) else json.dumps(stored)


def fingerprint_line(found: SetupFingerprint) -> str:
    """`HASH  setup` (as `sitegen fingerprint` prints it), and what setups.json stores instead when it is not that hash."""
    line = f"{found.computed}  {found.setup}"
    if found.matches:
        return line
    return line + ("  (not stored yet)" if found.stored is None else f"  (stored: {found.stored})")
