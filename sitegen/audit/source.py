"""Reads a publication, from a folder or over HTTP, into a private snapshot, so every check sees the very same bytes.

Over HTTP only the standard library is used: a timeout on every request, a slowest rate every file must keep to once
that timeout has passed, no redirect to another scheme, host or port, and a size limit on every file (SHA256SUMS smaller
still), so a hostile address can neither hang (not even by sending a byte now and then) nor flood the reader.
"""

from __future__ import annotations

import hashlib
import http.client
import io
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from sitegen import __version__
from sitegen.core.errors import Diagnostic, UnreadableError

TIMEOUT = 30.0  # seconds for one request to answer or to send more of a file
SUMS_LIMIT = 16 * 2**20  # SHA256SUMS: a line per file
FILE_LIMIT = 8 * 2**30  # any other file: the largest records of a large publication are a few hundred megabytes
CHUNK = 2**20
SLOWEST = 16 * 2**10  # bytes a second a file must come at, on average, once the timeout has passed since it was asked for
GONE = (404, 410)  # a file the server does not have: missing, not unreadable


def unreadable(where: str, message: str, code: str = "verify.unreadable") -> UnreadableError:
    return UnreadableError([Diagnostic(where, None, None, None, message, code)])


@dataclass(frozen=True)
class Copied:
    """One file read into the snapshot, with the SHA-256 and size of exactly the bytes written there."""

    sha256: str
    size: int


@dataclass(frozen=True)
class FolderReader:
    """Files below a folder on this machine."""

    root: Path

    def shown(self, name: str) -> str:
        return str(self.root / name)

    def names(self) -> tuple[str, ...] | None:
        """Every regular file below the folder, as POSIX paths relative to it."""
        try:
            return tuple(sorted(p.relative_to(self.root).as_posix() for p in self.root.rglob("*") if p.is_file()))
        except OSError as exc:
            raise unreadable(str(self.root), f"cannot list the folder: {exc.strerror or exc}") from None

    def copy(self, name: str, target: Path, *, limit: int = FILE_LIMIT) -> Copied | None:
        """Copy `name` to `target`; None when there is no such file."""
        source = self.root / name
        try:
            if not source.is_file() or not source.resolve().is_relative_to(self.root.resolve()):
                return None
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(source, "rb") as file, open(target, "wb") as out:
                return _copy(file, out, limit=limit, shown=str(source))
        except OSError as exc:
            raise unreadable(str(source), f"cannot read the file: {exc.strerror or exc}") from None

    def read(self, name: str, *, limit: int = FILE_LIMIT) -> bytes | None:
        """The bytes of `name`, or None when there is no such file."""
        buffer = io.BytesIO()
        source = self.root / name
        try:
            if not source.is_file() or not source.resolve().is_relative_to(self.root.resolve()):
                return None
            with open(source, "rb") as file:
                _copy(file, buffer, limit=limit, shown=str(source))
        except OSError as exc:
            raise unreadable(str(source), f"cannot read the file: {exc.strerror or exc}") from None
        return buffer.getvalue()


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the scheme, host and port the reader named."""

    def __init__(self, origin: tuple[str, str]):
        super().__init__()
        self.origin = origin

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        target = urllib.parse.urlsplit(urllib.parse.urljoin(req.full_url, newurl))
        if (target.scheme, target.netloc) != self.origin:
            raise unreadable(req.full_url, f"the server redirects to {newurl}, off the host {self.origin[1]}: not followed",
                             "verify.redirect")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


@dataclass(frozen=True)
class HttpReader:
    """Files below an address, read with urllib."""

    base: str  # ends with a slash
    timeout: float = TIMEOUT

    def shown(self, name: str) -> str:
        return self.base + name

    def names(self) -> tuple[str, ...] | None:
        return None  # a web server lists no folder: only the files SHA256SUMS names can be read

    def copy(self, name: str, target: Path, *, limit: int = FILE_LIMIT) -> Copied | None:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as out:
            return self._get(name, out, limit)

    def read(self, name: str, *, limit: int = FILE_LIMIT) -> bytes | None:
        buffer = io.BytesIO()
        return None if self._get(name, buffer, limit) is None else buffer.getvalue()

    def _get(self, name: str, out, limit: int) -> Copied | None:
        url = self.base + urllib.parse.quote(name)
        parts = urllib.parse.urlsplit(self.base)
        opener = urllib.request.build_opener(_SameOrigin((parts.scheme, parts.netloc)))
        request = urllib.request.Request(url, headers={"User-Agent": f"sitegen-verify/{__version__}", "Accept-Encoding": "identity"})
        try:
            with opener.open(request, timeout=self.timeout) as response:
                length = response.headers.get("Content-Length")
                if length is not None and length.isdigit() and int(length) > limit:
                    raise unreadable(url, f"the server announces {length} bytes, over the limit of {limit}", "verify.too-large")
                return _copy(response, out, limit=limit, shown=url, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            if exc.code in GONE:
                return None
            raise unreadable(url, f"the server answers {exc.code} {exc.reason}") from None
        except UnreadableError:
            raise
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise unreadable(url, f"cannot read it: {reason}") from None


def _copy(file, out, *, limit: int, shown: str, timeout: float | None = None) -> Copied:
    """Copy a readable stream to `out` as it comes, hashing what is written; refuse more than `limit` bytes and, with
    `timeout`, a file still coming `timeout` seconds after it was asked for at fewer than SLOWEST bytes a second on average
    (each read takes what has arrived, so a server sending a byte now and then is caught between two of them)."""
    digest = hashlib.sha256()
    size = 0
    started = time.monotonic()
    while chunk := file.read1(CHUNK):
        size += len(chunk)
        if size > limit:
            raise unreadable(shown, f"the file is larger than the limit of {limit} bytes", "verify.too-large")
        if timeout is not None and time.monotonic() - started > timeout + size / SLOWEST:
            raise unreadable(shown, f"the server sends the file at fewer than {SLOWEST} bytes a second ({size} bytes in "
                             f"{time.monotonic() - started:.1f} s)", "verify.too-slow")
        digest.update(chunk)
        out.write(chunk)
    return Copied(digest.hexdigest(), size)


@dataclass(frozen=True)
class Origin:
    """Where a publication is read from: its downloads folder, and the site around it when there is one."""

    given: str
    downloads: FolderReader | HttpReader
    site: FolderReader | HttpReader | None


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def locate(given: str, *, sums: str, marker: str, downloads: str, timeout: float = TIMEOUT) -> Origin:
    """The downloads folder and the site of what the reader named: a downloads folder or a site folder, or an address of
    either (http or https); raise UnreadableError when it is none of these."""
    if _URL.match(given):
        try:
            parts = urllib.parse.urlsplit(given)
            parts.port  # noqa: B018 (read for its check: a port that is not a number from 0 to 65535 raises)
        except ValueError as exc:  # an unclosed [ of an IPv6 host, say
            raise unreadable(given, f"not an address that can be read: {exc}", "verify.address") from None
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise unreadable(given, "only http:// and https:// addresses can be read", "verify.scheme")
        if parts.username is not None or parts.password is not None:  # never sent: it would be taken as part of the host
            raise unreadable(given, "name the site's address without a user name or password", "verify.address")
        if parts.query or parts.fragment:
            raise unreadable(given, "name the site's address without a query or fragment", "verify.scheme")
        path = parts.path if parts.path.endswith("/") else parts.path + "/"
        if path.endswith(f"/{downloads}/"):
            site_path = path[: -len(downloads) - 1]
        else:
            site_path, path = path, path + f"{downloads}/"
        root = f"{parts.scheme}://{parts.netloc}"
        return Origin(given, HttpReader(root + path, timeout), HttpReader(root + site_path, timeout))
    folder = Path(given)
    if not folder.is_dir():
        said = "no such folder" if not folder.exists() else "not a folder"
        raise unreadable(given, f"{said}: name a site's downloads folder (such as site/downloads) or its address",
                         "verify.no-folder")
    if (folder / sums).is_file():
        site = folder.parent if (folder.parent / marker).is_file() else None
        return Origin(given, FolderReader(folder), FolderReader(site) if site is not None else None)
    if (folder / downloads / sums).is_file():
        return Origin(given, FolderReader(folder / downloads), FolderReader(folder))
    raise unreadable(given, f"the folder holds no {sums} (and no {downloads}/{sums}): name a site's downloads folder, "
                     "such as site/downloads", "verify.no-sums")
