"""`sitegen serve` builds, serves on 127.0.0.1 and rebuilds when a record changes."""

import re
import shutil
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from sitegen.errors import OutFolderError, ServeError
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


def test_serve_refuses_a_port_number_beyond_65535_as_a_typed_error(tmp_path):
    with pytest.raises(ServeError) as caught:
        serve(SMALL, tmp_path / "site", port=99999, log=[].append, stop=threading.Event())
    assert "cannot serve on 127.0.0.1:99999" in str(caught.value)
    assert not (tmp_path / "site").exists()
