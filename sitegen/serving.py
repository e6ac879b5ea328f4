"""`sitegen serve`: a local look at the site on 127.0.0.1, rebuilt whenever a record changes."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from typing import Callable

from .errors import ServeError, SitegenError


def records_state(records_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times of every records file: a change in any means rebuild."""
    return tuple(sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in records_dir.rglob("*") if p.is_file()))


def rebuild(records_dir: Path, out: Path, log: Callable[[str], None]) -> bool:
    from .build import build_site

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
    from .site import check_out_dir

    check_out_dir(out, records_dir=records_dir)
    server = bind(port, out)
    try:
        if not rebuild(records_dir, out, log) and not out.is_dir():
            raise ServeError("the first build failed; nothing to serve")
        _serve_until_stopped(server, records_dir, out, log, poll_seconds, stop or threading.Event())
    finally:
        server.server_close()


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # keep the terminal for build messages
        pass


def bind(port: int, out: Path) -> http.server.ThreadingHTTPServer:
    """Take 127.0.0.1:port for serving the files under `out` (0: any free port); ServeError when it cannot be taken."""
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(_Handler, directory=str(out)))
    except (OSError, OverflowError) as exc:  # OverflowError: a port number beyond 65535
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ServeError(f"cannot serve on 127.0.0.1:{port}: {reason[:1].lower()}{reason[1:]}") from None


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
