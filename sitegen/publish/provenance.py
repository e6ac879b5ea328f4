"""What a build publishes beside SHA256SUMS for readers to check it with: signature, allowed_signers, the log, past sums."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from sitegen.core import model as m
from sitegen.core.errors import Diagnostic, PublicationError
from sitegen.load.publications import ALLOWED_SIGNERS, Publications
from sitegen.load.spool import each_run
from sitegen.publish.chain import FOLDER, LOG, LogEntry, check_log_chain, check_log_results, parse_log, result_digest, stored_name
from sitegen.publish.signing import NAMESPACE, SIGNATURE, principals, sign_sums

DOWNLOADS = "downloads"


@dataclass(frozen=True)
class Provenance:
    """This publication's SHA256SUMS digest, its signature if a key was given, and the log it extends."""

    sums_digest: str
    namespace: str = NAMESPACE
    allowed_signers: bytes | None = None
    signature: bytes | None = None
    log: bytes | None = None
    entries: tuple[LogEntry, ...] = ()
    past_sums: Mapping[str, bytes] = field(default_factory=dict)

    @property
    def signed(self) -> bool:
        return self.signature is not None

    @property
    def principals(self) -> tuple[str, ...]:
        return principals(self.allowed_signers) if self.allowed_signers else ()

    @property
    def signers_lines(self) -> tuple[str, ...]:
        text = (self.allowed_signers or b"").decode("utf-8", "replace")
        return tuple(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))

    @property
    def head(self) -> LogEntry | None:
        return self.entries[-1] if self.entries else None

    @property
    def sealed(self) -> bool:
        """Whether this very SHA256SUMS is the one the newest log entry names."""
        return self.head is not None and self.head.sha256sums == self.sums_digest

    def files(self) -> tuple[tuple[str, bytes], ...]:
        """Site paths and bytes, beside SHA256SUMS and not listed in it: they check it, or (allowed_signers) come from the repository."""
        out: list[tuple[str, bytes]] = []
        if self.signature is not None:
            out.append((f"{DOWNLOADS}/{SIGNATURE}", self.signature))
        if self.allowed_signers is not None:
            out.append((f"{DOWNLOADS}/{ALLOWED_SIGNERS}", self.allowed_signers))
        if self.log is not None:
            out.append((f"{DOWNLOADS}/{LOG}", self.log))
            for sums_digest in sorted(self.past_sums):
                out.append((f"{DOWNLOADS}/{FOLDER}/{stored_name(sums_digest)}", self.past_sums[sums_digest]))
        return tuple(out)


def check_provenance(publications: Publications, sums: bytes, results: Mapping[str, m.RunResult], *,
                     signing_key: Path | None, results_path: str) -> Provenance:
    """Check the log's chain and that the results keep every sealed run, sign when a key is given; raise on any problem."""
    problems: list[Diagnostic] = []
    log_path = publications.path(LOG)
    entries: tuple[LogEntry, ...] = ()
    if publications.log is not None:
        chain = check_log_chain(publications.log, publications.sums, path=log_path,
                                folder=publications.path(FOLDER))
        problems.extend(chain)
        if not chain:
            entries = parse_log(publications.log, path=log_path)[0]
            current = {run_id: result_digest(result) for run_id, result in each_run(results, list(results))}
            problems.extend(check_log_results(publications.log, current, path=log_path, results_path=results_path))
    signature = None
    if signing_key is not None:
        signers_path = publications.path(ALLOWED_SIGNERS)
        if publications.allowed_signers is None:
            problems.append(Diagnostic(signers_path, None, None, None, "a signing key was given, but the records pin no key: "
                                       f"check in the allowed_signers line of the key (namespace {NAMESPACE}) first",
                                       "sign.no-allowed-signers"))
        else:
            signature, found = sign_sums(sums, Path(signing_key), publications.allowed_signers, signers_path=signers_path)
            problems.extend(found)
    if problems:
        raise PublicationError(problems)
    named = {e.sha256sums: publications.sums[e.sha256sums] for e in entries}  # a stray stored file is not published
    return Provenance(hashlib.sha256(sums).hexdigest(), NAMESPACE, publications.allowed_signers, signature,
                      publications.log, entries, named)
