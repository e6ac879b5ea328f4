"""`sitegen verify`: a built site checked the way a reader checks it, from its downloads folder and over HTTP; every kind of
tampering is named with exit 1, a publication that cannot be read is exit 2, and the untouched site passes."""

import functools
import hashlib
import json
import shutil
import socket
import threading
import time
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sitegen.audit.rescore import run_differences
from sitegen.audit.source import HttpReader
from sitegen.cli import main
from sitegen.core import model as m
from sitegen.core.errors import Diagnostic, UnreadableError

RECORDS = Path(__file__).resolve().parent.parent / "records"
RESULTS = "granska-quality-results.json"
ANSWERS = "granska-quality-answers.json"
CASES = "granska-quality-cases.json"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "site"
    assert main(["build", "--records", str(RECORDS), "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture
def site(built, tmp_path):
    """A copy of the built site to tamper with."""
    target = tmp_path / "site"
    shutil.copytree(built, target)
    return target


@pytest.fixture
def no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


def verify(capsys, *argv):
    """Exit code and the JSON report of `sitegen verify ARGV --format json`."""
    code = main(["verify", *map(str, argv), "--format", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out)


def statuses(report) -> dict:
    return {c["name"]: c["status"] for c in report["checks"]}


def problems(report, check: str) -> list[tuple[str, str]]:
    """(code, formatted line) of every problem the check named."""
    found = next(c for c in report["checks"] if c["name"] == check)
    return [(p["code"], p["text"]) for p in found["problems"]]


def codes(report, check: str) -> list[str]:
    return [code for code, _ in problems(report, check)]


def rewrite(downloads: Path, name: str, old: bytes, new: bytes, *, resum: bool) -> None:
    """Replace the first `old` in the downloaded file by `new`; with `resum`, list its new checksum in SHA256SUMS too."""
    path = downloads / name
    data = path.read_bytes()
    assert old in data, f"{old!r} is not in {name}"
    path.write_bytes(data.replace(old, new, 1))
    if resum:
        sums = downloads / "SHA256SUMS"
        lines = [f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {name}" if line.endswith(f"  {name}") else line
                 for line in sums.read_text(encoding="utf-8").splitlines()]
        sums.write_text("\n".join(lines) + "\n", encoding="utf-8")


def sums_line(downloads: Path, name: str) -> int:
    """The line of SHA256SUMS that names `name`."""
    lines = (downloads / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.endswith(f"  {name}"))


# --- the untouched site passes --------------------------------------------------------------------------------------


def test_the_built_site_verifies_with_every_count_re_derived_and_no_page_differing(built, capsys):
    code, report = verify(capsys, built / "downloads", "--pages")
    assert code == 0, report["summary"]
    assert report["passed"] is True
    assert statuses(report) == {"sums": "ok", "signature": "ok", "records": "ok", "schemas": "ok", "seals": "ok", "chain": "ok", "results": "ok", "pages": "ok"}
    results = next(c for c in report["checks"] if c["name"] == "results")
    assert results["detail"].startswith("6 runs, ")  # the six published runs of the bundled records, each re-scored
    pages = next(c for c in report["checks"] if c["name"] == "pages")
    assert int(pages["detail"].split()[0]) > 300 and pages["problems"] == []


def test_the_text_output_is_a_line_per_check_and_a_summary(built, capsys):
    code = main(["verify", str(built)])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert code == 0 and err == ""
    assert [line.split()[0] for line in lines[:-1]] == ["ok"] * 7
    assert lines[-1].startswith(f"verified {built}: all 7 checks passed")


# --- each kind of tampering is named, exit 1 ------------------------------------------------------------------------


def test_a_changed_byte_without_its_checksum_is_named(site, capsys):
    rewrite(site / "downloads", CASES, "Läckan".encode(), "Lackan".encode(), resum=False)
    code, report = verify(capsys, site / "downloads")
    assert code == 1 and report["passed"] is False
    [(code_, text)] = problems(report, "sums")
    assert code_ == "verify.checksum" and text.startswith(f"{site / 'downloads' / CASES}: error: its SHA-256 is ")


def test_an_answer_changed_with_its_checksum_is_named_by_the_re_scoring(site, capsys):
    # the first answer of the first run quotes a sentence of its document; the quote now stands nowhere in it
    rewrite(site / "downloads", ANSWERS, '"quote": "Läckan är åtgärdad."'.encode(), '"quote": "Läckan är inte åtgärdad."'.encode(),
            resum=True)
    code, report = verify(capsys, site / "downloads")
    assert code == 1
    assert statuses(report) == {"sums": "ok", "signature": "ok", "records": "ok", "schemas": "ok", "seals": "fail", "chain": "ok",
                                "results": "fail"}  # the answer was sealed with its run
    found = problems(report, "results")
    assert found and all("run 2026-08-18-v1-baseline" in text for _, text in found)
    assert any(c == "verify.count" and "measure QUOTE_FIDELITY: passed is" in t for c, t in found)
    assert any(c == "verify.observation-missing" and "measure QUOTE_FIDELITY, observation case cure-unchecked repetition 1" in t
               for c, t in found)


def test_a_count_changed_in_the_results_is_named_with_its_run_and_measure(site, capsys):
    downloads = site / "downloads"
    data = (downloads / RESULTS).read_bytes()
    old = b'{"dismissed": 0, "failed": 0, "measure": "PROHIBITED_OUTPUT", "observed": 150, "passed": 150'
    assert old in data
    rewrite(downloads, RESULTS, old, old.replace(b'"passed": 150', b'"passed": 149'), resum=True)
    code, report = verify(capsys, downloads)
    assert code == 1 and statuses(report)["sums"] == "ok"
    [(code_, text)] = problems(report, "results")
    assert code_ == "verify.count"
    assert text.startswith(f"{downloads / RESULTS}:")
    assert ("/runs/1/measures/2/passed: error: run 2026-09-02-nightly, measure PROHIBITED_OUTPUT: passed is 149 in the published "
            "results, 150 re-scored [verify.count]") in text
    # the run was in the sealed publication: its results entry is no longer the one the log names
    assert statuses(report)["chain"] == "fail" and codes(report, "chain") == ["publication.run-changed"]


def test_a_listed_observation_changed_in_the_results_is_named(site, capsys):
    downloads = site / "downloads"
    old = b'"reason": "nothing", "repetition": "1", "result": "pending", "stage": "reviewer", "subject": "appeal-missing"'
    rewrite(downloads, RESULTS, old, old.replace(b'"pending"', b'"failed"'), resum=True)
    code, report = verify(capsys, downloads)
    assert code == 1
    [(code_, text)] = problems(report, "results")
    assert code_ == "verify.observation"
    assert ("run 2026-09-02-nightly, measure GROUNDING, observation case appeal-info-missing repetition 1 stage reviewer "
            "subject 'appeal-missing': failed (nothing: ") in text
    assert "pending (nothing: " in text and text.endswith("re-scored [verify.observation]")


def test_a_schema_invalid_file_is_named_at_the_download(site, capsys):
    downloads = site / "downloads"
    rewrite(downloads, "metadata/runs.json", b'"engine_version"', b'"engine_versoin"', resum=True)
    code, report = verify(capsys, downloads)
    assert code == 1
    assert statuses(report) == {"sums": "ok", "signature": "ok", "records": "fail", "schemas": "skip", "seals": "skip",
                                "chain": "skip", "results": "skip"}
    found = problems(report, "records")
    assert ("record.unknown-field" in codes(report, "records"))
    assert any(text.startswith(f"{downloads / 'metadata' / 'runs.json'}:") and '"engine_versoin"' in text for _, text in found)


def test_a_missing_file_is_named(site, capsys):
    downloads = site / "downloads"
    (downloads / ANSWERS).unlink()
    code, report = verify(capsys, downloads)
    assert code == 1
    line = sums_line(downloads, ANSWERS)
    assert problems(report, "sums") == [("verify.missing", f"{downloads / ANSWERS}: error: SHA256SUMS lists this file (line {line}), "
                                         "but it is missing [verify.missing]")]
    assert ("record.file-missing", f"{downloads / ANSWERS}: error: file is missing (expected the answers records here) "
            "[record.file-missing]") in problems(report, "records")


def test_a_file_sha256sums_does_not_list_is_named(site, capsys):
    (site / "downloads" / "notes.txt").write_text("added later\n")
    code, report = verify(capsys, site / "downloads")
    assert code == 1
    assert problems(report, "sums") == [("verify.unlisted", f"{site / 'downloads' / 'notes.txt'}: error: not listed in SHA256SUMS "
                                         "[verify.unlisted]")]


def test_a_changed_page_is_named_by_pages(site, capsys):
    page = site / "en" / "method.html"
    page.write_bytes(page.read_bytes().replace(b"<h1", b"<h1 class=\"x\"", 1))
    (site / "en" / "extra.html").write_text("<p>not built</p>")
    code, report = verify(capsys, site / "downloads", "--pages")
    assert code == 1
    assert statuses(report) == {"sums": "ok", "signature": "ok", "records": "ok", "schemas": "ok", "seals": "ok", "chain": "ok", "results": "ok", "pages": "fail"}
    found = problems(report, "pages")
    assert [c for c, _ in found] == ["verify.page-differs", "verify.page-extra"]
    assert found[0][1].startswith(f"{page}:") and found[0][1].endswith("differs from the page rebuilt from the downloads, first "
                                                                       "here [verify.page-differs]")
    assert found[1][1].startswith(f"{site / 'en' / 'extra.html'}: error: ")


def test_pages_are_compared_where_they_are_rendered_and_the_report_is_the_same(site, capsys, monkeypatch):
    # a case page's bytes never come back to the process that reports: the rendering processes compare it and send only
    # what differs, so memory does not grow with the pages; the report is the one comparing them here would give
    import sitegen.audit.pages as pages_module
    from sitegen.render.pages import Page

    case_page = sorted(site.glob("en/cases/*/*/index.html"))[0]
    case_page.write_bytes(case_page.read_bytes().replace(b"<h1", b"<h1 class=\"x\"", 1))
    gone = sorted(site.glob("sv/cases/*/*/*.html"))[-1]
    gone.unlink()
    arrived: list[str] = []
    real = pages_module.render_site

    def bytes_arrived(*args, **kwargs):
        pages, published, extra = real(*args, **kwargs)

        def each():
            for p in pages:
                if type(p) is Page and "/cases/" in p.path:
                    arrived.append(p.path)
                yield p
        return each(), published, extra

    monkeypatch.setattr(pages_module, "render_site", bytes_arrived)
    reports = []
    for jobs in ("1", "2"):
        code = main(["verify", str(site / "downloads"), "--pages", "--jobs", jobs])
        reports.append((code, capsys.readouterr().out))
    assert arrived == [], f"{len(arrived)} case pages came back with their bytes, e.g. {arrived[:2]}"
    assert reports[0] == reports[1] and reports[0][0] == 1
    out = reports[0][1]
    assert f"{case_page}:" in out and "[verify.page-differs]" in out
    assert f"{gone}: error: the site rebuilt from the downloads has this page; the published site does not" in out


def test_pages_are_rebuilt_with_the_collector_running_as_the_build_renders_them(built, capsys, monkeypatch):
    # templates leave cycles behind at every page: with the collector paused, each rendering process grew by them page
    # after page (to 690 MiB at 1,000 case versions, against 210 MiB with it running)
    import gc

    import sitegen.audit.checklist as checklist_module

    seen = []
    real = checklist_module.compare_pages

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(checklist_module, "compare_pages", watched)
    assert main(["verify", str(built / "downloads"), "--pages"]) == 0
    capsys.readouterr()
    assert seen == [True]


# --- a publication that cannot be read: exit 2 ----------------------------------------------------------------------


def test_no_such_folder_is_exit_2(tmp_path, capsys):
    code = main(["verify", str(tmp_path / "nowhere")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"{tmp_path / 'nowhere'}: error: no such folder") and err.rstrip().endswith("[verify.no-folder]")
    (tmp_path / "SHA256SUMS").write_text("")
    code = main(["verify", str(tmp_path / "SHA256SUMS")])  # a file named as the folder is called what it is
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"{tmp_path / 'SHA256SUMS'}: error: not a folder: ") and err.rstrip().endswith("[verify.no-folder]")


def test_a_folder_without_sha256sums_is_exit_2(tmp_path, capsys):
    code, report = verify(capsys, tmp_path)
    assert code == 2 and report["passed"] is False
    assert report["unreadable"][0].endswith("[verify.no-sums]")


def test_a_malformed_sha256sums_is_exit_2_with_every_bad_line(site, capsys):
    sums = site / "downloads" / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    lines[1] = "not a checksum"
    lines[2] = "0" * 64 + "  ../../etc/passwd"
    sums.write_text("\n".join(lines) + "\n")
    code = main(["verify", str(site / "downloads")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [
        f"{sums}:2:1: error: not a line of SHA256SUMS: 64 lower-case hexadecimal digits, two spaces and a file name [verify.sums-format]",
        f"{sums}:3:67: error: file name '../../etc/passwd' has an empty, . or .. part: it could name a file outside the downloads "
        "folder [verify.sums-name]",
    ]


def test_pages_without_a_site_around_the_downloads_is_exit_2(built, tmp_path, capsys):
    shutil.copytree(built / "downloads", tmp_path / "saved")
    code = main(["verify", str(tmp_path / "saved"), "--pages"])
    assert code == 2
    assert capsys.readouterr().err.rstrip().endswith("[verify.no-site]")
    assert main(["verify", str(tmp_path / "saved")]) == 0  # the downloads alone verify


# --- the same over HTTP -------------------------------------------------------------------------------------------


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def served(folder: Path, handler=_Quiet):
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_site_served_over_http_verifies_with_its_pages(built, capsys, no_proxy):
    with served(built) as url:
        code, report = verify(capsys, url, "--pages")
    assert code == 0, report["summary"]
    assert statuses(report) == {"sums": "ok", "signature": "ok", "records": "ok", "schemas": "ok", "seals": "ok", "chain": "ok", "results": "ok", "pages": "ok"}
    assert "over HTTP only the files SHA256SUMS lists can be seen" in report["checks"][0]["detail"]


def test_a_count_changed_over_http_is_named(site, capsys, no_proxy):
    old = b'{"dismissed": 0, "failed": 0, "measure": "PROHIBITED_OUTPUT", "observed": 150, "passed": 150'
    rewrite(site / "downloads", RESULTS, old, old.replace(b'"passed": 150', b'"passed": 149'), resum=True)
    with served(site) as url:
        code, report = verify(capsys, url + "downloads/")
    assert code == 1
    [(code_, text)] = problems(report, "results")
    assert code_ == "verify.count" and text.startswith(f"{url}downloads/{RESULTS}:")


def test_a_missing_file_over_http_is_named(site, capsys, no_proxy):
    (site / "downloads" / "metadata" / "setups.json").unlink()
    line = sums_line(site / "downloads", "metadata/setups.json")
    with served(site) as url:
        code, report = verify(capsys, url)
    assert code == 1
    assert problems(report, "sums") == [("verify.missing", f"{url}downloads/metadata/setups.json: error: SHA256SUMS lists this "
                                         f"file (line {line}), but it is missing [verify.missing]")]
    assert "record.file-missing" in codes(report, "records")


def test_an_address_without_sha256sums_is_exit_2(tmp_path, capsys, no_proxy):
    with served(tmp_path) as url:
        code, report = verify(capsys, url)
    assert code == 2
    assert report["unreadable"] == [f"{url}downloads/SHA256SUMS: error: there is no SHA256SUMS here: name a site's downloads "
                                    "folder or address [verify.no-sums]"]


def test_a_server_that_does_not_answer_is_exit_2_after_the_timeout(capsys, no_proxy):
    with socket.socket() as listening:  # takes connections into its backlog and never answers
        listening.bind(("127.0.0.1", 0))
        listening.listen(4)
        url = f"http://127.0.0.1:{listening.getsockname()[1]}/"
        code = main(["verify", url, "--timeout", "0.5"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"{url}downloads/SHA256SUMS: error: cannot read it: ") and "[verify.unreadable]" in err


def test_a_server_that_sends_a_byte_now_and_then_is_exit_2_once_the_file_comes_too_slowly(capsys, tmp_path, no_proxy):
    # every byte comes well within the timeout of one read, so only the file's rate can end it: never a hang
    ended = threading.Event()  # the handler's thread outlives the server: waited for, so it prints nothing into later tests

    class Trickle(_Quiet):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            for _ in range(100000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)

        def handle(self):
            try:
                super().handle()
            except OSError:  # the reader hung up, as it should
                pass
            finally:
                ended.set()

        def finish(self):
            try:
                super().finish()
            except OSError:
                pass

    with served(tmp_path, Trickle) as url:
        started = time.monotonic()
        code = main(["verify", url, "--timeout", "0.5"])
        took = time.monotonic() - started
    assert ended.wait(30)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"{url}downloads/SHA256SUMS: error: the server sends the file at fewer than ")
    assert "[verify.too-slow]" in err and took < 60


def test_a_redirect_off_the_host_is_not_followed(capsys, tmp_path, no_proxy):
    class Elsewhere(_Quiet):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", "http://example.org/downloads/SHA256SUMS")
            self.end_headers()

    with served(tmp_path, Elsewhere) as url:
        code = main(["verify", url])
    err = capsys.readouterr().err
    assert code == 2 and "redirects to http://example.org/downloads/SHA256SUMS, off the host" in err and "[verify.redirect]" in err


def test_a_file_over_the_size_limit_is_refused(built, tmp_path, no_proxy):
    with served(built) as url:
        with pytest.raises(UnreadableError) as caught:
            HttpReader(url + "downloads/").copy(RESULTS, tmp_path / "copy", limit=1000)
    assert [d.code for d in caught.value.diagnostics] == ["verify.too-large"]


def test_only_http_and_https_addresses_are_read(capsys):
    assert main(["verify", "file:///etc/"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("[verify.scheme]")


@pytest.mark.parametrize("address, says", [
    ("http://[::1/", "Invalid IPv6 URL"),
    ("https://127.0.0.1:99999/", "Port out of range"),
    ("http://127.0.0.1:port/", "Port could not be cast"),
    ("http://reader:secret@127.0.0.1:9/", "without a user name or password"),
])
def test_an_address_that_cannot_be_taken_apart_is_refused_as_such_before_any_request(capsys, address, says):
    assert main(["verify", address, "--timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith(f"{address}: error: ") and says in err, err
    assert err.rstrip().endswith("[verify.address]") and len(err.splitlines()) == 1, err


# --- the comparison names every difference, not only the first -----------------------------------------------------


def _result(observations, passed=1):
    return m.RunResult("r", 7, "method", "PASS", (m.MeasureResult("GROUNDING", "PASS", passed, 2, 0, 0, 0),),
                       (m.CaseResult("c", 1, "PASS", {"GROUNDING": (passed, 2)}),), tuple(observations))


def test_every_difference_of_a_run_is_named():
    kept = m.Observation("GROUNDING", "c", "1", "reviewer", "e1", "failed", "evidence", "d")
    changed = m.Observation("GROUNDING", "c", "1", "reviewer", "e2", "pending", "nothing", "d")
    dropped = m.Observation("GROUNDING", "c", "2", "reviewer", "e3", "failed", "kind", "d")
    added = m.Observation("GROUNDING", "c", "3", "report", "e4", "failed", "rule", "d")
    recorded = _result([kept, changed, dropped], passed=1)
    fresh = _result([kept, m.Observation("GROUNDING", "c", "1", "reviewer", "e2", "failed", "nothing", "d"), added], passed=2)

    def at(pointer, message, code):
        return Diagnostic("results.json", None, None, pointer, message, code)

    found = [(d.pointer, d.code) for d in run_differences(recorded, fresh, index=3, at=at)]
    assert found == [
        ("/runs/3/measures/0/passed", "verify.count"),
        ("/runs/3/cases/0/measures/GROUNDING", "verify.case-count"),
        ("/runs/3/observations/1", "verify.observation"),
        ("/runs/3/observations/2", "verify.observation-extra"),
        ("/runs/3/observations", "verify.observation-missing"),
    ]
    assert run_differences(recorded, recorded, index=3, at=at) == []


# --- the signature, the publication log and the seals ------------------------------------------------------------------


@pytest.fixture(scope="module")
def signed_site(tmp_path_factory):
    """The bundled records with a throwaway key pinned in allowed_signers, built signed."""
    import subprocess

    from sitegen.publish.signing import NAMESPACE

    if shutil.which("ssh-keygen") is None:
        pytest.skip("needs ssh-keygen (scripts/test.sh installs openssh-client)")
    root = tmp_path_factory.mktemp("signed")
    records = root / "records"
    shutil.copytree(RECORDS, records)
    key = root / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", str(key)], check=True)
    kind, blob = Path(f"{key}.pub").read_text().split()[:2]
    (records / "allowed_signers").write_text(f'maintainers@example.org namespaces="{NAMESPACE}" {kind} {blob}\n', encoding="utf-8")
    out = root / "site"
    assert main(["build", "--records", str(records), "--out", str(out), "--quiet", "--signing-key", str(key)]) == 0
    return out


def test_a_signed_site_verifies_with_its_signature_and_its_pages(signed_site, capsys):
    code, report = verify(capsys, signed_site / "downloads", "--pages")
    assert code == 0, report["summary"]
    signature = next(c for c in report["checks"] if c["name"] == "signature")
    assert signature["status"] == "ok" and signature["detail"].startswith("signed")


def test_a_signature_of_other_sums_is_named(signed_site, tmp_path, capsys):
    site = tmp_path / "site"
    shutil.copytree(signed_site, site)
    sums = site / "downloads" / "SHA256SUMS"
    lines = sums.read_text(encoding="utf-8").splitlines()
    sums.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")  # one file dropped from the sums: no longer what was signed
    code, report = verify(capsys, site / "downloads")
    assert code == 1
    assert codes(report, "signature") == ["sign.bad-signature"]


def test_a_rewritten_publication_log_is_named(site, capsys):
    log = site / "downloads" / "publications.jsonl"
    data = log.read_bytes()
    assert b'"sequence":1' in data
    log.write_bytes(data.replace(b'"date":"', b'"date":"1', 1))  # the line no longer has the digest it was sealed with
    code, report = verify(capsys, site / "downloads")
    assert code == 1 and statuses(report)["chain"] == "fail"
    assert problems(report, "chain")


def test_a_site_built_with_detail_runs_verifies_with_its_pages_when_told_how_it_was_built(built, tmp_path, capsys):
    """A site built with --detail-runs K lacks the older runs' case-run pages: rebuilt as a full site it differs, rebuilt
    with the same K it is the published site, byte for byte."""
    out = tmp_path / "site"
    assert main(["build", "--records", str(RECORDS), "--out", str(out), "--quiet", "--detail-runs", "1"]) == 0
    code, report = verify(capsys, out / "downloads", "--pages")
    assert code == 1 and statuses(report)["pages"] == "fail"
    assert "verify.page-missing" in codes(report, "pages")
    code, report = verify(capsys, out / "downloads", "--pages", "--detail-runs", "1")
    assert code == 0 and set(statuses(report).values()) == {"ok"}
    # the downloads page gives the reader the command with the option (a full site's gives it without)
    assert "--pages --detail-runs 1</code>" in (out / "en" / "downloads.html").read_text(encoding="utf-8")
    assert "--pages</code>" in (built / "en" / "downloads.html").read_text(encoding="utf-8")


def test_detail_runs_without_pages_is_a_usage_error(built, capsys):
    assert main(["verify", str(built / "downloads"), "--detail-runs", "1"]) == 2
    assert "--detail-runs" in capsys.readouterr().err
