"""The command line: the only module that prints or exits, so everything else stays testable as plain functions."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path
from typing import Sequence

from sitegen import __version__
from sitegen.core.collector import collector_paused
from sitegen.core.errors import SitegenError, UnreadableError, UsageError
from sitegen.core.fingerprint import sitegen_fingerprint
from sitegen.core.memory import give_back_large_buffers
from sitegen.core.termination import Terminated, terminated_raises
from sitegen.load.entries import create_entry
from sitegen.load.schemabasics import is_calendar_date
from sitegen.load.setups import fingerprint_line, setup_fingerprints
from sitegen.loading import load_phase
from sitegen.score.comparison import compare_runs, format_comparison
from sitegen.score.explanation import explain_case
from sitegen.score.release import decide_release, decode_release_input, format_release, parse_release_input
from sitegen.score.verify import score_into_record

DEFAULT_RECORDS = "records"
DEFAULT_OUT = "site"
MAX_JOBS = 256  # worker processes; more only compete for the cores, each with its own copy of what it touches


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would exit on its own; raise so main() chooses the exit code
        raise UsageError(f"{self.prog}: {message}")


class _Version(argparse.Action):
    """--version: the version number and the fingerprint of the source (core/fingerprint.py), taken only when asked."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"sitegen {__version__} (source fingerprint {sitegen_fingerprint()})")
        raise SystemExit(0)


def _records_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", default=DEFAULT_RECORDS, metavar="DIR",
                        help=f"the records folder to read (default: {DEFAULT_RECORDS})")


def _jobs_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--jobs", "-j", type=lambda text: _count(text, MAX_JOBS), default=1, metavar="N",
                        help=f"worker processes to use, 1 to {MAX_JOBS} (default: 1); results are identical for any N")


def _whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _count(text: str, most: int | None = None) -> int:
    """--detail-runs K: one or more; --jobs N: 1 to MAX_JOBS, each a process forked before any work is handed out."""
    value = _whole_number(text)
    if value < 1 or most is not None and value > most:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}" if value < 1 else f"must be at most {most}, not {value}")
    return value


def _port(text: str) -> int:
    """--port N: a TCP port, or 0 for one the system picks (the line saying where it serves names it)."""
    value = _whole_number(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port from 1 to 65535 (or 0 for any free port), not {value}")
    return value


def _seconds(text: str) -> float:
    """--timeout S: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 3600 seconds, not {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sitegen", description="Publish an AI review engine's measured quality as a static site readers can verify.")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and the source's fingerprint, and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("build", help="check the records and build the site", description=(
        "Read and check every record, verify the results record against a fresh scoring, and write the site "
        "(both languages, downloads with checksums) into a temporary folder that then replaces OUT. "
        "Dates the build stamps come from SOURCE_DATE_EPOCH."))
    _records_arg(p)
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=(
        f"the site folder to (re)place (default: {DEFAULT_OUT}): a new path, an empty folder or a site sitegen built; "
        "never the records, the current folder or one holding it"))
    p.add_argument("--cache", default=None, metavar="DIR", help=(
        "keep rendered pages in DIR (outside the site and the records) by the digest of what each is made of, so a "
        "rebuild renders only pages whose inputs changed and stops at once when nothing did; same bytes as without; "
        "what a build did not use is deleted after it"))
    p.add_argument("--detail-runs", type=_count, default=None, metavar="K", help=(
        "give each case version a page per run for its newest K runs only; older runs are summarised on the case page "
        "(states per repetition) and their answers stay in the downloads (default: every run)"))
    _jobs_arg(p)
    p.add_argument("--signing-key", metavar="KEY", help=(
        "an OpenSSH private key (Ed25519) to sign SHA256SUMS with, as downloads/SHA256SUMS.sig; default: the environment "
        "variable SITEGEN_SIGNING_KEY, else unsigned. The records' allowed_signers file must allow it"))
    noise = p.add_mutually_exclusive_group()
    noise.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    noise.add_argument("--verbose", "-v", action="store_true", help="print every build phase with counts")
    p.set_defaults(handler=_build)

    p = sub.add_parser("score", help="score runs into the results record", description=(
        "Score the named runs with the scorer version each run names and write their results into results.json. "
        "A run already in the record must reproduce byte for byte, and the inputs it was sealed with must be unchanged; "
        "otherwise nothing is written and the difference is shown. A newly recorded run is sealed."))
    _records_arg(p)
    which = p.add_mutually_exclusive_group()
    which.add_argument("runs", nargs="*", default=[], metavar="RUN", help="run ids to score")
    which.add_argument("--all", action="store_true", help="score every published run (not with RUN)")
    p.add_argument("--seal", action="store_true", help=(
        "also seal recorded runs that have no seal yet: each must reproduce its recorded counts, then only the seal "
        "(the SHA-256 of every input it was scored from) is added to its entry"))
    _jobs_arg(p)
    p.set_defaults(handler=_score)

    p = sub.add_parser("explain", help="show how one case's findings were matched against its key", description=(
        "For one case version of one run: each expected finding with the finding that matched it or why none did, "
        "then duplicates, prohibited, voluntary and unexpected findings, per repetition and stage."))
    _records_arg(p)
    p.add_argument("run", metavar="RUN")
    p.add_argument("case_version", metavar="CASE")
    p.add_argument("--repetition", type=int, metavar="N", help="only this repetition")
    p.add_argument("--stage", choices=["reviewer", "report"], help="only this stage")
    p.set_defaults(handler=_explain)

    p = sub.add_parser("fingerprint", help="print the fingerprint of run setups", description=(
        "Print the SHA-256 of the canonical JSON of each run setup's configuration, the value setups.json must carry. "
        "Reads setups.json alone, so it works for a new or edited setup whose fingerprint is missing or stale: "
        "such a line ends with what is stored instead, \"(stored: ...)\" or \"(not stored yet)\"."))
    _records_arg(p)
    p.add_argument("setups", nargs="*", metavar="SETUP", help="setup ids (default: all)")
    p.set_defaults(handler=_fingerprint)

    p = sub.add_parser("release-check", help="decide whether the NEW version may be released (exit 0 RELEASE, 1 BLOCK, 2 bad input)",
                       description="Read a golden-set comparison of an OLD and a NEW version and print the release decision.")
    p.add_argument("file", nargs="?", default="-", metavar="FILE", help="input file; omitted or - reads standard input")
    p.set_defaults(handler=_release_check)

    p = sub.add_parser("compare", help="compare two runs observation by observation", description=(
        "Compare two runs of the same suite version, scorer and assessment: the counts per measure, then every "
        "observation whose result changed, regressions first. Refuses incompatible runs (exit 2)."))
    _records_arg(p)
    p.add_argument("run_a", metavar="RUN_A")
    p.add_argument("run_b", metavar="RUN_B")
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
    p.set_defaults(handler=_compare)

    p = sub.add_parser("check", help="the deterministic checks a release may be gated on", description=(
        "Records load and validate; every results entry reproduces; every version change is explained; the catalogs "
        "are complete; published files hold no internal field; two builds are byte-identical. Exit 1 on any failure."))
    _records_arg(p)
    p.set_defaults(handler=_check)

    p = sub.add_parser("seal", help="append this publication to the checked-in publication log", description=(
        "Check everything a build checks, then append one entry to publications.jsonl in the records folder (the date, the "
        "SHA-256 of this publication's SHA256SUMS, the digest of each published run's results entry, and the SHA-256 of "
        "the entry before it) and store that SHA256SUMS as publications/<SHA-256>.SHA256SUMS. Commit both with the "
        "records. Writes nothing when the newest entry already names this publication."))
    _records_arg(p)
    p.add_argument("--date", metavar="YYYY-MM-DD", help="the publication's date (default: today)")
    p.set_defaults(handler=_seal)

    p = sub.add_parser("entry", help="hand-written changelog entries")
    entry_sub = p.add_subparsers(dest="entry_command", metavar="ACTION", parser_class=_Parser)
    entry_sub.required = True
    q = entry_sub.add_parser("new", help="write a new changelog entry file and print its path", description=(
        "Write <date>-<slug>.md into the changelog folder of --records (records/changelog by default) with the right header "
        "and a sentence to replace, and print its path. Never overwrites: an existing file is refused (exit 2); "
        "name another with --slug."))
    _records_arg(q)
    q.add_argument("--category", required=True, help="publication-rules, engine-change, measurement-method, test-cases, scoring-rules or run-setup")
    q.add_argument("--explains", metavar="KIND:VERSION", help="the version change it explains, e.g. scorer:7")
    q.add_argument("--date", metavar="YYYY-MM-DD", help="the entry's date (default: today)")
    q.add_argument("--source", metavar="URL", help="an https link to where the change was made or discussed")
    q.add_argument("--slug", help="file name part after the date (default: from category and explains)")
    q.set_defaults(handler=_entry_new)

    p = sub.add_parser("serve", help="build and serve the site on 127.0.0.1, rebuilding when records change", description=(
        "Take the port on 127.0.0.1, build the site into OUT as build does, and serve it there for a look in a browser; "
        "the records are checked every second and the site is rebuilt when one changes (a failed rebuild keeps the "
        "previous site). Stop with Ctrl-C."))
    _records_arg(p)
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"the site folder, checked as for build (default: {DEFAULT_OUT})")
    p.add_argument("--port", type=_port, default=8000, metavar="N",
                   help="port on 127.0.0.1, 1 to 65535, or 0 for any free port (default: 8000)")
    p.set_defaults(handler=_serve)

    p = sub.add_parser("verify", help="check a published site: checksums, schemas, every run re-scored, and the pages rebuilt",
                       description=(
        "Read a site's downloads folder (such as site/downloads) or its address over HTTP, and check every file against "
        "SHA256SUMS, the JSON Schemas, that the downloads load as records, and that every published run, re-scored from the "
        "published cases and answers with the scorer version it names, gives every published count and listed observation. "
        "Exit 0 when all checks pass, 1 naming every difference, 2 when the publication cannot be read."))
    p.add_argument("source", metavar="DIR|URL", help="a downloads folder or site folder, or the site's http(s) address")
    p.add_argument("--pages", action="store_true", help="also rebuild the site from the downloads alone and compare every page byte for byte")
    p.add_argument("--detail-runs", type=_count, default=None, metavar="K", help=(
        "with --pages: rebuild as `sitegen build --detail-runs K` built the site (its case pages say for how many runs "
        "they show answers against the key; default: every run)"))
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format (default: text)")
    p.add_argument("--timeout", type=_seconds, default=30.0, metavar="S", help="seconds to wait for the server (default: 30)")
    _jobs_arg(p)
    p.set_defaults(handler=_verify)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code (0 success, 1 failed check or BLOCK, 2 bad input or usage)."""
    try:
        args = build_parser().parse_args(argv)
        with terminated_raises():  # asked to stop, a command cleans up as on Ctrl-C
            return args.handler(args)
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    except SitegenError as exc:
        for line in exc.lines():
            print(line, file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, Terminated) as exc:  # Ctrl-C or SIGTERM, after the clean-up: 128 + the signal, as shells say
        interrupted = isinstance(exc, KeyboardInterrupt)
        print("interrupted" if interrupted else "terminated", file=sys.stderr)
        return 130 if interrupted else 143
    except BrokenPipeError:  # `sitegen compare A B | head`: the reader left; nothing is wrong with the data
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1
    except (OSError, MemoryError) as exc:  # disk full, permission denied, out of memory: the environment, not the records
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        print(f"error: {where}{getattr(exc, 'strerror', None) or str(exc) or 'out of memory'}", file=sys.stderr)
        return 1


def main_entry() -> None:
    give_back_large_buffers()  # the process's memory policy (core/memory.py): its own, so set here, once
    sys.exit(main())


# --- handlers (build, check, seal, serve and verify import the renderer when they run; the others never pay for it) ---


def _load(args, *, jobs: int = 1):
    """The build's load phase, so every command that reads records reports their problems (results.json's too) alike."""
    return load_phase(Path(args.records), jobs=jobs)


def _signing_key(args) -> Path | None:
    """--signing-key, else SITEGEN_SIGNING_KEY, else none: the key's path never comes from the records."""
    key = args.signing_key or os.environ.get("SITEGEN_SIGNING_KEY") or None
    return Path(key) if key else None


def _build(args) -> int:
    from sitegen.build import build_site
    progress = None if args.quiet else _Progress(verbose=args.verbose)
    summary = build_site(Path(args.records), Path(args.out), jobs=args.jobs, progress=progress, signing_key=_signing_key(args),
                         cache=Path(args.cache) if args.cache is not None else None, detail_runs=args.detail_runs)
    if not args.quiet:
        print(f"built {summary.pages} pages and {summary.downloads} downloads into {summary.out}")
        print(f"open {summary.out / 'index.html'}")
    return 0


class _Progress:
    """Stage lines on a terminal (or always with --verbose); silent in pipes unless asked."""

    def __init__(self, *, verbose: bool):
        self.verbose, self.tty = verbose, sys.stderr.isatty()

    def __call__(self, phase: str, detail: str = "") -> None:
        if self.verbose or self.tty:
            print(f"sitegen: {phase}{': ' + detail if detail else ''}", file=sys.stderr)


def _score(args) -> int:
    if not args.runs and not args.all:
        raise UsageError("name at least one RUN, or use --all")
    records = _load(args, jobs=args.jobs)
    with collector_paused():  # scoring makes many small acyclic objects: a collection meanwhile would only rescan them
        report = score_into_record(records, Path(args.records), run_ids=None if args.all else tuple(args.runs), jobs=args.jobs,
                                   seal=args.seal)
    for line in report.lines:
        print(line)
    return 0


def _explain(args) -> int:
    records = _load(args)
    with collector_paused():
        text = explain_case(records, args.run, args.case_version, repetition=args.repetition, stage=args.stage)
    print(text, end="")
    return 0


def _fingerprint(args) -> int:
    found = {f.setup: f for f in setup_fingerprints(Path(args.records))}
    unknown = [setup_id for setup_id in args.setups if setup_id not in found]
    if unknown:
        raise UsageError(f"unknown run setup(s): {', '.join(unknown)} (setups.json has: {', '.join(sorted(found))})")
    for setup_id in args.setups or sorted(found):
        print(fingerprint_line(found[setup_id]))
    return 0


def _release_check(args) -> int:
    try:
        if args.file == "-":
            data, source = sys.stdin.buffer.read(), "<stdin>"
        else:
            data, source = Path(args.file).read_bytes(), args.file
    except OSError as error:
        raise UsageError(f"cannot read {args.file}: {error}") from error
    decision = decide_release(parse_release_input(decode_release_input(data, source=source), source=source))
    sys.stdout.write(format_release(decision))
    return 0 if decision.release else 1


def _compare(args) -> int:
    records = _load(args)
    with collector_paused():
        comparison = compare_runs(records, args.run_a, args.run_b)
    if args.format == "json":
        print(json.dumps(comparison.to_json(), indent=2, ensure_ascii=False, sort_keys=True))
    else:
        print(format_comparison(comparison), end="")
    return 0


def _check(args) -> int:
    from sitegen.checks import run_checks
    outcome = run_checks(Path(args.records))
    for line in outcome.lines:
        print(line)
    return 0 if outcome.passed else 1


def _seal(args) -> int:
    from sitegen.sealing import seal_publication
    date = args.date or datetime.date.today().isoformat()
    if not is_calendar_date(date):
        raise UsageError(f'--date: "{date}" is not an ISO date (YYYY-MM-DD)')
    report = seal_publication(Path(args.records), date=date)
    for line in report.lines:
        print(line)
    return 0


def _entry_new(args) -> int:
    date = args.date or datetime.date.today().isoformat()
    print(create_entry(Path(args.records) / "changelog", category=args.category, explains=args.explains, date=date,
                       source=args.source, slug=args.slug))  # the new entry's path
    return 0


def _serve(args) -> int:
    from sitegen.serving import serve
    serve(Path(args.records), Path(args.out), port=args.port, log=lambda line: print(line, file=sys.stderr))
    return 0


def _verify(args) -> int:
    from sitegen.audit.checklist import verify_publication
    if args.detail_runs is not None and not args.pages:
        raise UsageError("verify: --detail-runs says how to rebuild the pages: use it with --pages")
    try:
        report = verify_publication(args.source, pages=args.pages, jobs=args.jobs, timeout=args.timeout,
                                    detail_runs=args.detail_runs)
    except UnreadableError as exc:
        if args.format != "json":
            raise
        print(json.dumps({"source": args.source, "passed": False, "unreadable": [d.format() for d in exc.diagnostics]},
                         indent=2, ensure_ascii=False, sort_keys=True))
        return exc.exit_code
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False, sort_keys=True))
    else:
        for line in report.lines():
            print(line)
    return report.exit_code

