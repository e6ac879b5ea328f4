"""`sitegen serve`: a local look at the site on 127.0.0.1, rebuilt whenever a record changes."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from typing import Callable

from .errors import SitegenError


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

    An `out` that may not be replaced by a site (site.check_out_dir) is refused before anything is built or served.
    """
    from .site import check_out_dir

    check_out_dir(out, records_dir=records_dir)
    if not rebuild(records_dir, out, log) and not out.is_dir():
        raise SitegenError("the first build failed; nothing to serve")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args) -> None:  # keep the terminal for build messages
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Handler, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    log(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)")
    stop = stop or threading.Event()
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
        server.server_close()
