"""`sitegen serve` builds, serves on 127.0.0.1 and rebuilds when a record changes."""

import re
import shutil
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from sitegen.core.errors import OutFolderError, ServeError
from sitegen.serving import serve

SMALL = Path(__file__).parent / "data" / "records-small"


def test_serve_builds_serves_and_rebuilds(tmp_path):
    records = tmp_path / "records"
    shutil.copytree(SMALL, records)
    out = tmp_path / "site"
    lines: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(target=serve, args=(records, out), kwargs=dict(port=0, log=lines.append, poll_seconds=0.1, stop=stop))
    thread.start()
    try:
        deadline = time.time() + 60
        while not any("serving" in line for line in lines) and time.time() < deadline:
            time.sleep(0.05)
        url = re.search(r"http://127\.0\.0\.1:\d+/", next(line for line in lines if "serving" in line)).group(0)
        with urllib.request.urlopen(url + "sv/index.html") as response:
            assert response.status == 200 and b'lang="sv"' in response.read()
        # an edit to a record triggers a rebuild; a broken record keeps the previous site
        cases = records / "cases.json"
        cases.write_text(cases.read_text(encoding="utf-8").replace('"pairs": []', '"pairs": [,]'), encoding="utf-8")
        while not any("build failed" in line for line in lines) and time.time() < deadline:
            time.sleep(0.05)
        assert any("build failed" in line for line in lines)
        with urllib.request.urlopen(url + "en/index.html") as response:
            assert response.status == 200
    finally:
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_serve_refuses_a_folder_that_is_not_a_site_instead_of_serving_it(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "important.txt").write_bytes(b"keep me")
    lines: list[str] = []
    with pytest.raises(OutFolderError) as caught:
        serve(SMALL, out, port=0, log=lines.append, stop=threading.Event())
    assert [d.code for d in caught.value.diagnostics] == ["out.not-a-site"]
    assert lines == [], "nothing was built or served"
    assert [p.name for p in tmp_path.iterdir()] == ["mine"] and (out / "important.txt").read_bytes() == b"keep me"


def test_serve_takes_the_port_before_building_and_names_it_when_it_is_in_use(tmp_path):
    import socket

    out = tmp_path / "site"
    lines: list[str] = []
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ServeError) as caught:
            serve(SMALL, out, port=port, log=lines.append, stop=threading.Event())
    assert str(caught.value) == f"cannot serve on 127.0.0.1:{port}: address already in use"
    assert lines == [] and not out.exists(), "nothing was built"


def test_bad_records_at_the_first_build_are_refused_as_build_refuses_them_with_nothing_served(tmp_path, capsys):
    """No site to fall back on: the records' problems end the command, exit 2 as for build, and no line claims a
    previous site is still served."""
    from sitegen.cli import main

    records = tmp_path / "records"
    shutil.copytree(SMALL, records)
    cases = records / "cases.json"
    cases.write_text(cases.read_text(encoding="utf-8").replace('"pairs": []', '"pairs": [,]'), encoding="utf-8")
    code = main(["serve", "--records", str(records), "--out", str(tmp_path / "site"), "--port", "0"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.splitlines() and all(line.startswith(f"{cases}:") for line in err.splitlines()), err
    assert "[json.syntax]" in err and "previous site" not in err and "serving" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records"]


def test_serve_refuses_a_port_number_beyond_65535_as_a_typed_error(tmp_path):
    with pytest.raises(ServeError) as caught:
        serve(SMALL, tmp_path / "site", port=99999, log=[].append, stop=threading.Event())
    assert "cannot serve on 127.0.0.1:99999" in str(caught.value)
    assert not (tmp_path / "site").exists()


# --- what the server answers: the built site's files only, as its host would --------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A real server on 127.0.0.1 serving a built site, with a secret beside the site and symbolic links inside it."""
    import http.client

    from sitegen.build import build_site
    from sitegen.serving import bind

    tmp = tmp_path_factory.mktemp("served")
    out = tmp / "site"
    build_site(SMALL, out)
    (tmp / "secret.txt").write_bytes(b"not part of the site")
    (out / "en" / "escape.txt").symlink_to(tmp / "secret.txt")
    (out / "en" / "outside").symlink_to(tmp)
    (out / "en" / "empty").mkdir()
    server = bind(0, out)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]

    def get(path: str, *, host: str | None = f"127.0.0.1:{port}", method: str = "GET"):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.putrequest(method, path, skip_host=True)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, dict(response.getheaders()), data

    yield out, get
    server.shutdown()
    server.server_close()


def test_a_page_is_served_with_its_bytes_type_and_the_sites_csp_as_a_header(served):
    from sitegen.render.environment import CONTENT_SECURITY_POLICY

    out, get = served
    status, headers, data = get("/en/index.html")
    assert status == 200 and data == (out / "en" / "index.html").read_bytes()
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert f'content="{CONTENT_SECURITY_POLICY}"' in data.decode(), "the header and the pages' meta element are the same policy"
    assert get("/")[2] == (out / "index.html").read_bytes() and get("/en/")[2] == data
    status, headers, _ = get("/en")
    assert (status, headers["Location"]) == (301, "/en/")
    status, headers, data = get("/downloads/SHA256SUMS", method="HEAD")
    assert status == 200 and data == b"" and headers["Content-Length"] == str((out / "downloads" / "SHA256SUMS").stat().st_size)


@pytest.mark.parametrize("path", [
    "/downloads/",  # a folder without index.html: no listing
    "/en/empty/",
    "/en/escape.txt",  # symbolic links inside the site, to a file and a folder outside it
    "/en/outside/secret.txt",
    "/../secret.txt", "/en/%2e%2e/%2e%2e/secret.txt", "/en/..%2f..%2fsecret.txt",
    "/%00", "/en/%ff.html", "/en/nothing-here.html", "/.sitegen-site/x",
])
def test_anything_but_a_file_of_the_site_gets_the_sites_own_404_page(served, path):
    out, get = served
    status, headers, data = get(path)
    assert status == 404, path
    assert data == (out / "404.html").read_bytes()
    assert b"not part of the site" not in data and b"Index of" not in data
    assert "Content-Security-Policy" in headers


@pytest.mark.parametrize("host", ["evil.example", "localhost:1", "127.0.0.1", "127.0.0.1:1", "", None])
def test_a_host_other_than_the_bound_address_is_refused_with_400(served, host):
    _, get = served
    status, headers, data = get("/en/index.html", host=host)
    assert status == 400
    assert b"<html" not in data and "Content-Security-Policy" in headers
