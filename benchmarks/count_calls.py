"""Counts the Jinja calls of a whole build (one process, under cProfile): Context.call and macro calls per page written.

Usage: python benchmarks/count_calls.py RECORDS_DIR [--top 15]

Calls are counted, not timed, so the figure does not depend on how busy the machine is. RECORDS_DIR must hold scored
results. The build goes into a temporary folder, removed after.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitegen.build import build_site  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sitegen-calls-") as tmp:
        out = Path(tmp) / "site"
        profile = cProfile.Profile()
        profile.enable()
        build_site(args.records, out, jobs=1)
        profile.disable()
        pages = sum(1 for p in out.rglob("*.html"))
    stats = pstats.Stats(profile)
    rows = []
    context_call = macro_call = 0
    for (file, _, name), (_, calls, *_rest) in stats.stats.items():
        if name == "call" and file.endswith("jinja2/runtime.py"):
            context_call += calls
        if name == "__call__" and file.endswith("jinja2/runtime.py"):
            macro_call += calls
        rows.append((calls, f"{Path(file).name}:{name}"))
    print(f"{pages:,} pages; Context.call {context_call:,} ({context_call / pages:.1f} per page); "
          f"Macro.__call__ {macro_call:,} ({macro_call / pages:.1f} per page)")
    for calls, where in sorted(rows, reverse=True)[: args.top]:
        print(f"{calls:>12,}  {where}")


if __name__ == "__main__":
    main()
