"""`sitegen serve`: a local look at the site on 127.0.0.1, rebuilt whenever a record changes."""

from __future__ import annotations

import http.server
import os
import stat
import threading
import urllib.parse
from pathlib import Path
from typing import Callable

from sitegen.build import build_site, check_out
from sitegen.core.errors import ServeError, SitegenError
from sitegen.publish.site import is_site
from sitegen.render.environment import CONTENT_SECURITY_POLICY


def records_state(records_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times of every records file: a change in any means rebuild."""
    return tuple(sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in records_dir.rglob("*") if p.is_file()))


def rebuild(records_dir: Path, out: Path, log: Callable[[str], None]) -> bool:
    try:
        summary = build_site(records_dir, out)
    except SitegenError as exc:
        for line in exc.lines():
            log(line)
        log("build failed; still serving the previous site")
        return False
    log(f"built {summary.pages} pages")
    return True


def serve(records_dir: Path, out: Path, *, port: int, log: Callable[[str], None], poll_seconds: float = 1.0,
          stop: threading.Event | None = None) -> None:
    """Build, serve on 127.0.0.1:port, and poll the records until interrupted (or until `stop` is set).

    An `out` that may not be replaced by a site (site.check_out_dir) is refused, and the port is taken, before anything
    is built: a port in use fails at once, with OUT untouched.
    """
    check_out(out, records_dir=records_dir)
    server = bind(port, out)
    try:
        if is_site(out):
            rebuild(records_dir, out, log)  # a failed build leaves the site there to serve
        else:  # nothing to fall back on: the records' problems end the command as they end a build (exit 2)
            log(f"built {build_site(records_dir, out).pages} pages")
        _serve_until_stopped(server, records_dir, out, log, poll_seconds, stop or threading.Event())
    finally:
        server.server_close()


# What each kind of file the site holds is; anything else is sent as bytes to download, never sniffed.
_TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json",
          ".atom": "application/atom+xml", ".xml": "application/xml", ".svg": "image/svg+xml", ".txt": "text/plain; charset=utf-8",
          "": "text/plain; charset=utf-8"}  # SHA256SUMS


class SiteHandler(http.server.BaseHTTPRequestHandler):
    """Answers GET and HEAD with the built site's regular files only, as the site's host would: no listing, no link followed.

    A Host other than the bound address is refused (400), so a page of another site cannot reach this one through a
    name that resolves to 127.0.0.1; a missing file gets the site's own 404 page; every answer carries the site's CSP.
    """

    server_version = "sitegen"
    sys_version = ""
    root: Path  # set on the subclass `bind` makes for one folder
    host: str

    def log_message(self, format: str, *args) -> None:  # keep the terminal for build messages
        pass

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's API name
        self._answer(body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._answer(body=True)

    def _answer(self, *, body: bool) -> None:
        if self.headers.get("Host") != self.host:
            self._send(400, "text/plain; charset=utf-8", b"400 Bad Request: this server answers only to " + self.host.encode() + b"\n", body)
            return
        try:
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path, errors="strict") if self.path.startswith("/") else None
        except (UnicodeDecodeError, ValueError):  # not UTF-8 once decoded: no file of the site has such a name
            path = None
        found = self._find(path)
        if found is None:
            missing = self._find("/404.html")
            self._send(404, _TYPES[".html"], missing.read_bytes() if missing else b"404 Not Found\n", body)
        elif found.is_dir():
            self._send(301, _TYPES[".txt"], b"", body, location=urllib.parse.quote(path + "/"))
        else:
            self._send(200, _TYPES.get(found.suffix, "application/octet-stream"), found.read_bytes(), body)

    def _find(self, path: str | None) -> Path | None:
        """The regular file a URL path names (index.html for a folder ending in /), or a folder to redirect to; else None."""
        if path is None or "\0" in path or "\\" in path:
            return None
        parts = path.split("/")[1:]
        if any(part in (".", "..") for part in parts):
            return None
        index = parts[-1] == ""
        parts = [part for part in parts if part] + (["index.html"] if index else [])
        here = self.root
        for part in parts:  # step by step with lstat: a symbolic link anywhere below the root is never followed
            here = here / part
            try:
                mode = os.lstat(here).st_mode
            except (OSError, ValueError):
                return None
            if stat.S_ISLNK(mode):
                return None
        if here == self.root or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return None
        if stat.S_ISDIR(mode):
            return here if os.path.isfile(here / "index.html") and not os.path.islink(here / "index.html") else None
        return here

    def _send(self, status: int, kind: str, data: bytes, body: bool, *, location: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        if location is not None:
            self.send_header("Location", location)
        self.end_headers()
        if body:
            self.wfile.write(data)


def bind(port: int, out: Path) -> http.server.ThreadingHTTPServer:
    """Take 127.0.0.1:port for serving the files under `out` (0: any free port); ServeError when it cannot be taken."""
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), SiteHandler, bind_and_activate=True)
    except (OSError, OverflowError) as exc:  # OverflowError: a port number beyond 65535
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ServeError(f"cannot serve on 127.0.0.1:{port}: {reason[:1].lower()}{reason[1:]}") from None
    # the folder resolved once: a site swapped in later is found at the same path
    server.RequestHandlerClass = type("BoundSiteHandler", (SiteHandler,), {
        "root": Path(out).resolve(), "host": f"127.0.0.1:{server.server_address[1]}"})
    return server


def _serve_until_stopped(server: http.server.ThreadingHTTPServer, records_dir: Path, out: Path, log: Callable[[str], None],
                         poll_seconds: float, stop: threading.Event) -> None:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    log(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)")
    seen = records_state(records_dir)
    try:
        while not stop.wait(poll_seconds):
            now = records_state(records_dir)
            if now != seen:
                seen = now
                log("records changed; rebuilding")
                rebuild(records_dir, out, log)
    finally:
        server.shutdown()
