"""The maintainer's workflow, as a new user would try it: a run with a new report version needs its explaining entry."""

import json
import re
import shutil
from pathlib import Path
from xml.etree import ElementTree

from sitegen.cli import main

RECORDS = Path(__file__).resolve().parent.parent / "records"
NEW_RUN = "2026-11-20-nightly"
COPIED_RUN = "2026-10-01-engine-change"


def add_run_with_new_report_version(root: Path) -> None:
    """A published run like the engine-change run, but recorded by runner 4: a report version change."""
    runs = json.loads((root / "runs.json").read_text(encoding="utf-8"))
    template = next(r for r in runs["runs"] if r["id"] == COPIED_RUN)
    new = {k: v for k, v in template.items() if k != "internal"}
    new.update(id=NEW_RUN, date="2026-11-20", report={"version": 5, "runner": 4, "run_record": 5})
    runs["runs"].append(new)
    (root / "runs.json").write_text(json.dumps(runs, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    answers = json.loads((root / "answers.json").read_text(encoding="utf-8"))
    answers["answers"] += [dict(a, run=NEW_RUN) for a in answers["answers"] if a["run"] == COPIED_RUN]
    (root / "answers.json").write_text(json.dumps(answers, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def test_a_new_version_is_refused_until_explained_then_shown_in_both_languages_and_the_feed(tmp_path, capsys):
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    add_run_with_new_report_version(root)
    assert main(["score", NEW_RUN, "--records", str(root)]) == 0
    capsys.readouterr()

    out = tmp_path / "site"
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "report version 5 (runner 4, run record 5)" in err
    command = re.search(r"`?(sitegen entry new [^`\n]*--explains report:5/runner:4/run-record:5)", err).group(1)
    assert not out.exists()

    argv = command.split()[1:] + ["--records", str(root), "--date", "2026-11-21",
                                  "--source", "https://github.com/example/granska-quality/pull/77"]
    assert main(argv) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.parent == root / "changelog" and path.is_file()
    assert main(argv) != 0  # never overwrites
    capsys.readouterr()

    # the placeholder sentence must be replaced before the entry is published
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet"]) == 2
    assert "changelog.placeholder" in capsys.readouterr().err
    text = path.read_text(encoding="utf-8")
    body = "Runner 4 records every reviewer's answer before quote correction as well."
    path.write_text(text.split("\n---\n")[0] + "\n---\n" + body + "\n", encoding="utf-8")

    assert main(["build", "--records", str(root), "--out", str(out), "--quiet"]) == 0
    anchor = "report-5-runner-4-run-record-5"
    for lang in ("sv", "en"):
        page = (out / lang / "changelog.html").read_text(encoding="utf-8")
        assert f'id="{anchor}"' in page
        assert body in page and 'lang="en"' in page
    feed = ElementTree.parse(out / "changelog.atom").getroot()
    ns = {"a": "http://www.w3.org/2005/Atom"}
    ids = [e.findtext("a:id", namespaces=ns) for e in feed.findall("a:entry", ns)]
    assert any(i.endswith(f"#{anchor}") for i in ids)
    assert any(i.endswith(f"#entry-{path.stem}") for i in ids)
    # the run page marks the run and the overview lists it
    assert NEW_RUN in (out / "sv" / "index.html").read_text(encoding="utf-8")
