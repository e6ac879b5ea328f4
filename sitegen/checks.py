"""`sitegen check`: the deterministic checks a release may be gated on, each reported on its own line."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sitegen.build import (Checked, build_date, catalogs_phase, changelog_phase, downloads_phase, exports_phase, load_phase,
                           provenance_phase, published_files, recorded_phase, render_site, verify_phase)
from sitegen.core.errors import SitegenError
from sitegen.publish.site import DOWNLOADS, MARKER, MARKER_TEXT, SUMS, sha256sums


@dataclass(frozen=True)
class CheckOutcome:
    lines: tuple[str, ...]
    passed: bool


def _tree_digest(files) -> dict[str, str]:
    return {path: hashlib.sha256(data).hexdigest() for path, data in files}


def _site_files(pages, published, extra) -> list[tuple[str, bytes]]:
    files = [(p.path, p.data) for p in pages] + list(extra) + [(f"{DOWNLOADS}/{n}", f.data) for n, f in published]
    files.append((f"{DOWNLOADS}/{SUMS}", sha256sums(published)))
    files.append((MARKER, MARKER_TEXT))
    return files


def _disk_digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def run_checks(records_dir: Path) -> CheckOutcome:
    """Run every check even after one fails, so a single run lists everything that needs mending.

    Each check is one of the build's own phases (build.py), so what is checked is what a build does.
    """
    lines: list[str] = []
    failed = False
    state: dict[str, object] = {}

    def step(name: str, action) -> None:
        nonlocal failed
        started = time.perf_counter()
        try:
            action()
        except SitegenError as exc:
            failed = True
            lines.append(f"FAIL {name}")
            lines.extend(f"     {line}" for line in exc.lines())
            return
        lines.append(f"ok   {name} ({time.perf_counter() - started:.2f} s)")

    def load():
        state["records"] = load_phase(records_dir)

    step("records load and validate", load)
    records = state.get("records")
    if records is None:
        lines.append("skip the other checks: they need records that load")
        return CheckOutcome(tuple(lines), False)

    def results():
        recorded = recorded_phase(records, records_dir)
        state["verified"] = verify_phase(records, recorded)
        state["results"] = recorded

    def changelog():
        state["changelog"] = changelog_phase(records)

    def catalogs():
        state["catalogs"] = catalogs_phase(records)

    def published():
        state["downloads"] = downloads_phase(records)

    def provenance():
        state["exports"] = exports_phase(records, state["results"], state["catalogs"], state["downloads"])
        state["provenance"] = provenance_phase(records_dir, state["results"], published_files(records, state["downloads"], state["exports"]))

    step("every results entry reproduces with its scorer version", results)
    step("every version change is explained", changelog)
    step("the catalogs are complete for every language", catalogs)
    step("published files hold no internal field and no unpublished run", published)
    if "results" in state and "downloads" in state and "catalogs" in state:
        step("the publication log's chain holds and every run it sealed is recorded alike", provenance)

    def reproducible():
        checked = Checked(records, state["results"], state["downloads"], state["changelog"], state["catalogs"],
                          build_date(records), state["verified"].comparisons, state["provenance"], state["exports"],
                          state["verified"].reasons)
        first = _tree_digest(_site_files(*render_site(checked)))
        with tempfile.TemporaryDirectory(prefix="sitegen-check-") as tmp:
            env = dict(os.environ, PYTHONHASHSEED="12345", TZ="Pacific/Chatham", LC_ALL="C", LANG="C")
            env.pop("SITEGEN_SIGNING_KEY", None)  # the first build is not signed either: compare like with like
            if "SOURCE_DATE_EPOCH" not in os.environ:
                env.pop("SOURCE_DATE_EPOCH", None)
            done = subprocess.run([sys.executable, "-m", "sitegen", "build", "--records", str(records_dir), "--out", str(Path(tmp) / "site"),
                                   "--quiet"], env=env, capture_output=True, text=True)
            if done.returncode != 0:
                raise SitegenError(f"the second build failed: {done.stderr.strip()}")
            second = _disk_digest(Path(tmp) / "site")
        if first != second:
            differing = sorted(p for p in set(first) | set(second) if first.get(p) != second.get(p))
            raise SitegenError(f"two builds differ in {len(differing)} file(s), first {differing[0]}")

    if not failed:
        step("a build is byte-identical to a second build (other hash seed, time zone and locale)", reproducible)
    else:
        lines.append("skip a build is byte-identical to a second build: the checks above must pass first")
    return CheckOutcome(tuple(lines), not failed)
