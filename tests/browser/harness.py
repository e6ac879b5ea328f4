"""Browser-test machinery kept apart from the fixtures, so the harness can be proved on a throwaway site."""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_HOST = "127.0.0.1"
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
AXE_TAGS = ("wcag2a", "wcag2aa")

# One representative of each page type is picked from the sitemap by its path.
PAGE_TYPES = {
    "overview": re.compile(r"^(?P<lang>[a-z]{2})/(index\.html)?$"),
    "run": re.compile(r"^(?P<lang>[a-z]{2})/runs/[^/]+\.html$"),
    "run-list": re.compile(r"^(?P<lang>[a-z]{2})/runs/[^/]+/[^/]+\.html$"),
    "method": re.compile(r"^(?P<lang>[a-z]{2})/method\.html$"),
    "case": re.compile(r"^(?P<lang>[a-z]{2})/cases/[^/]+/[^/]+/(index\.html)?$"),
    "case-run": re.compile(r"^(?P<lang>[a-z]{2})/cases/[^/]+/[^/]+/(?!index\.html$)[^/]+\.html$"),
    "changelog": re.compile(r"^(?P<lang>[a-z]{2})/changelog\.html$"),
    "downloads": re.compile(r"^(?P<lang>[a-z]{2})/downloads\.html$"),
    "accessibility": re.compile(r"^(?P<lang>[a-z]{2})/accessibility\.html$"),
    "not-found": re.compile(r"^((?P<lang>[a-z]{2})/)?404\.html$"),
}


def require_chromium() -> Path:
    """Fail loudly, never skip: a suite that silently skips its browser proves nothing."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: run `apt-get install chromium` (Debian's package) "
            "or `bash scripts/test.sh`, which installs it",
            pytrace=False,
        )
    return CHROMIUM


def require_axe(root: Path) -> Path:
    """Fail loudly when axe-core is not installed, for the same reason as require_chromium."""
    path = root / "node_modules" / "axe-core" / "axe.min.js"
    if not path.is_file():
        pytest.fail(
            f"{path} is missing: run `npm ci` in the repository root or `bash scripts/test.sh`",
            pytrace=False,
        )
    return path


def launch_chromium(playwright):
    """Drive Debian's Chromium, never a browser build downloaded by Playwright."""
    return playwright.chromium.launch(executable_path=str(require_chromium()), args=CHROMIUM_ARGS)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a browser that closes a tab mid-response (its favicon request, say) is no error of the site
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve a built site over real HTTP on a free local port, so pages load as they will when published."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = _QuietServer((LOCAL_HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOCAL_HOST}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def read_sitemap(xml_text: str, *, public_base: str, local_base: str) -> tuple[str, ...]:
    """Map the sitemap's public URLs onto the local server; a URL outside the public base is an error."""
    root = ET.fromstring(xml_text)
    urls = []
    for loc in root.iter(f"{SITEMAP_NS}loc"):
        url = (loc.text or "").strip()
        if not url.startswith(public_base):
            raise AssertionError(f"sitemap URL {url!r} is not under the site's base_url {public_base!r}")
        urls.append(local_base + url[len(public_base):])
    return tuple(urls)


def site_path(url: str, local_base: str) -> str:
    """The path of a local URL relative to the site root, without query or fragment."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.unquote(parts.path)[len(urllib.parse.urlsplit(local_base).path):]


def classify(path: str) -> tuple[str, str | None] | None:
    """Page type and language of a site path, or None when it is none of the known types."""
    for page_type, pattern in PAGE_TYPES.items():
        match = pattern.match(path)
        if match:
            return page_type, match.group("lang")
    return None


def pick_representatives(urls: tuple[str, ...], local_base: str) -> dict[tuple[str, str | None], str]:
    """The first URL (in sorted order) of each page type and language."""
    picked: dict[tuple[str, str | None], str] = {}
    for url in sorted(urls):
        kind = classify(site_path(url, local_base))
        if kind is not None and kind not in picked:
            picked[kind] = url
    return picked


@dataclass(frozen=True)
class PageRef:
    """One representative page: its type, its language (None for language-neutral pages) and local URL."""

    page_type: str
    lang: str | None
    url: str

    @property
    def name(self) -> str:
        return f"{self.lang}-{self.page_type}" if self.lang else self.page_type


@dataclass(frozen=True)
class Visit:
    """What one page load showed: its status, what went wrong while loading, and what it links to."""

    url: str
    status: int | None
    console_errors: tuple[str, ...]
    failed_requests: tuple[str, ...]
    foreign_requests: tuple[str, ...]
    links: tuple[str, ...]  # absolute hrefs of every <a href>, as the browser resolved them
    ids: frozenset[str]  # every id (and <a name>) on the page, for fragment checks
    html_lang: str | None

    @property
    def problems(self) -> tuple[str, ...]:
        found = []
        if self.status != 200:
            found.append(f"HTTP status {self.status}")
        found += [f"console error: {e}" for e in self.console_errors]
        found += [f"failed request: {r}" for r in self.failed_requests]
        found += [f"request to another host: {r}" for r in self.foreign_requests]
        return tuple(found)


def is_local(url: str) -> bool:
    return urllib.parse.urlsplit(url).hostname == LOCAL_HOST


def guard_hosts(context, foreign: list[str]) -> None:
    """Let only requests to the local server through; record and abort every other one."""

    def handle(route):
        url = route.request.url
        if is_local(url) or url.startswith(("data:", "blob:", "about:")):
            route.continue_()
        else:
            foreign.append(url)
            route.abort()

    context.route("**/*", handle)


_PAGE_FACTS = """() => ({
    links: Array.from(document.querySelectorAll('a[href]'), a => a.href),
    ids: Array.from(document.querySelectorAll('[id]'), e => e.id)
        .concat(Array.from(document.querySelectorAll('a[name]'), a => a.name)),
    lang: document.documentElement.getAttribute('lang'),
})"""


def visit_all(browser, urls, **context_options) -> tuple[Visit, ...]:
    """Load each page in turn in one tab and record everything that went wrong on the way to each."""
    context = browser.new_context(**context_options)
    foreign: list[str] = []
    console_errors: list[str] = []
    failed: list[str] = []
    # routing also turns off the HTTP cache, so every page fetches its own assets again
    guard_hosts(context, foreign)
    page = context.new_page()
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    # The browser fetches a page's icon after its load event, so going on to the next page aborts that fetch; an icon
    # that is missing still shows, as an HTTP error in the response handler below.
    page.on(
        "requestfailed",
        lambda r: failed.append(f"{r.url} ({r.failure})")
        if is_local(r.url) and not (r.failure == "net::ERR_ABORTED" and r.url.endswith("/favicon.svg")) else None,
    )
    page.on("response", lambda r: failed.append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else None)
    visits = []
    try:
        for url in urls:
            for found in (foreign, console_errors, failed):
                found.clear()
            response = page.goto(url, wait_until="load")
            facts = page.evaluate(_PAGE_FACTS)
            visits.append(
                Visit(
                    url=url,
                    status=response.status if response else None,
                    console_errors=tuple(console_errors),
                    failed_requests=tuple(failed),
                    foreign_requests=tuple(foreign),
                    links=tuple(facts["links"]),
                    ids=frozenset(facts["ids"]),
                    html_lang=facts["lang"],
                )
            )
    finally:
        context.close()
    return tuple(visits)


def visit(browser, url: str, **context_options) -> Visit:
    """Load one page in a fresh context."""
    return visit_all(browser, [url], **context_options)[0]


def fetch(url: str) -> tuple[int, bytes, str]:
    """Status, body and content type of a local URL, for link targets that are not in the sitemap."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - local server only
            return response.status, response.read(), response.headers.get_content_type()
    except urllib.error.HTTPError as error:
        return error.code, b"", ""


_ID_ATTR = re.compile(rb"""\s(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)


def ids_in(html: bytes) -> frozenset[str]:
    """Every id or name attribute in an HTML document (for targets that were not visited in the browser)."""
    return frozenset(
        (m.group(1) or m.group(2) or m.group(3) or b"").decode("utf-8", "replace") for m in _ID_ATTR.finditer(html)
    )


def broken_links(visits: tuple[Visit, ...], *, public_base: str, local_base: str) -> tuple[str, ...]:
    """Every internal link that leads nowhere, or to an anchor its target page lacks."""
    known = {v.url.split("#")[0]: v for v in visits}
    fetched: dict[str, tuple[int, frozenset[str] | None]] = {}
    broken = []
    for v in visits:
        for href in v.links:
            target = href
            if target.startswith(public_base):
                target = local_base + target[len(public_base):]
            scheme = urllib.parse.urlsplit(target).scheme
            if scheme == "javascript":
                broken.append(f"{v.url}: javascript: link {href}")
                continue
            if not is_local(target):
                continue
            page_url, _, fragment = target.partition("#")
            if page_url in known:
                status, ids = known[page_url].status, known[page_url].ids
            else:
                if page_url not in fetched:
                    code, body, ctype = fetch(page_url)
                    fetched[page_url] = (code, ids_in(body) if ctype == "text/html" else None)
                status, ids = fetched[page_url]
            if status != 200:
                broken.append(f"{v.url}: link {href} -> HTTP {status}")
            elif fragment and (ids is None or urllib.parse.unquote(fragment) not in ids):
                broken.append(f"{v.url}: link {href} -> no element with id {fragment!r} on the target")
    return tuple(broken)


def run_axe(page, axe_path: Path) -> list[dict]:
    """axe-core's WCAG 2 A and AA violations on the loaded page (its context must bypass the CSP)."""
    page.add_script_tag(path=str(axe_path))
    result = page.evaluate(
        "tags => axe.run(document, {runOnly: {type: 'tag', values: tags}})",
        list(AXE_TAGS),
    )
    return result["violations"]


def describe_violations(violations: list[dict]) -> str:
    """One line per failing element, naming the rule and the element, so a report can point at it."""
    lines = []
    for v in violations:
        for node in v["nodes"]:
            html = node["html"] if len(node["html"]) <= 160 else node["html"][:157] + "..."
            lines.append(f"  [{v['id']}] ({v.get('impact')}) {v['help']}: {' '.join(map(str, node['target']))} {html}")
    return "\n".join(lines)


_OVERFLOW = """limit => {
    const width = document.documentElement.scrollWidth;
    const wide = [];
    for (const e of document.querySelectorAll('body *')) {
        const r = e.getBoundingClientRect();
        if (r.right > limit && r.width > 0) {
            wide.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
                (e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\\s+/).join('.') : '') +
                ' right=' + Math.round(r.right));
        }
    }
    return {width, wide: wide.slice(0, 10)};
}"""


def horizontal_overflow(page, width: int) -> tuple[int, list[str]]:
    """The document's scroll width and the first elements that stick out past the viewport."""
    result = page.evaluate(_OVERFLOW, width + 1)
    return result["width"], result["wide"]
