"""The command line through main(argv): help for every command, usage errors, located diagnostics, and one real run."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen import __version__
from sitegen.cli import build_parser, main
from sitegen.core.fingerprint import sitegen_fingerprint

DATA = Path(__file__).parent / "data"
SMALL = DATA / "records-small"
REPO = Path(__file__).resolve().parent.parent

# What each command must offer, written from the command line's documentation; a command path is the words after `sitegen`.
OPTIONS = {
    ("build",): ["--records", "--out", "--jobs", "--quiet", "--verbose", "--signing-key"],
    ("score",): ["--records", "--all", "--seal", "--jobs", "RUN"],
    ("seal",): ["--records", "--date"],
    ("explain",): ["--records", "--repetition", "--stage", "RUN", "CASE"],
    ("fingerprint",): ["--records", "SETUP"],
    ("release-check",): ["FILE"],
    ("compare",): ["--records", "--format", "RUN_A", "RUN_B"],
    ("check",): ["--records"],
    ("entry",): ["new"],
    ("entry", "new"): ["--records", "--category", "--explains", "--date", "--source", "--slug"],
    ("serve",): ["--records", "--out", "--port"],
    ("verify",): ["DIR|URL", "--pages", "--format", "--timeout", "--jobs"],
}

# `path:line:col: pointer: error: message [code]`
DIAGNOSTIC = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<pointer>/\S*): error: (?P<message>.+) \[(?P<code>[a-z][a-z.-]+)\]$")


def _subparsers(parser):
    """Every (command path, parser) pair, found by walking argparse's own structure."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (name,), sub
                for path, inner in _subparsers(sub):
                    yield (name, *path), inner


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_every_command_is_covered_by_the_table():
    assert {path for path, _ in _subparsers(build_parser())} == set(OPTIONS)


def test_top_level_help_names_every_command(capsys):
    code, out, err = _run(capsys, "--help")
    assert code == 0 and err == ""
    for path in OPTIONS:
        assert path[0] in out
    assert "--version" in out


@pytest.mark.parametrize("path", sorted(OPTIONS), ids=" ".join)
def test_command_help_exits_0_and_mentions_every_option(capsys, path):
    code, out, err = _run(capsys, *path, "--help")
    assert code == 0
    assert err == ""
    assert out.startswith("usage: sitegen " + " ".join(path))
    for option in OPTIONS[path]:
        assert option in out, f"{' '.join(path)} --help does not mention {option}"
    parser = dict(_subparsers(build_parser()))[path]
    for action in parser._actions:  # and every option the parser really accepts
        for option in action.option_strings:
            assert option in out


@pytest.mark.parametrize("path", sorted(p for p in OPTIONS if p != ("entry",)), ids=" ".join)
def test_every_command_help_says_what_it_does(capsys, path):
    parser = dict(_subparsers(build_parser()))[path]
    assert parser.description, f"{' '.join(path)} --help has no description"
    code, out, _ = _run(capsys, *path, "--help")
    assert code == 0 and parser.description.split()[0] in out


def test_version(capsys):
    code, out, err = _run(capsys, "--version")
    assert code == 0
    # the version number names many states of the source: the fingerprint the downloads page gives names one
    assert out.strip() == f"sitegen {__version__} (source fingerprint {sitegen_fingerprint()})"


@pytest.mark.parametrize("argv", [
    [],
    ["no-such-command"],
    ["explain"],
    ["explain", "--records", str(SMALL), "r1"],
    ["explain", "--records", str(SMALL), "r1", "leak-unchecked", "--stage", "merged"],
    ["build", "--jobs", "many"],
    ["build", "--quiet", "--verbose"],
    ["compare", "a", "b", "--format", "xml"],
    ["score", "--records", str(SMALL)],
    ["entry"],
    ["build", "--no-such-option"],
], ids=lambda argv: " ".join(argv) or "nothing")
def test_usage_errors_exit_2_with_a_message_and_no_traceback(capsys, argv):
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.strip(), "a usage error must say what went wrong"
    assert "Traceback" not in err
    assert err.startswith("error: ")


@pytest.mark.parametrize("argv, fragment", [
    (["build", "--jobs", "0"], "argument --jobs/-j: must be at least 1, not 0"),
    (["build", "-j", "-1"], "argument --jobs/-j: must be at least 1, not -1"),
    (["build", "-j", "two"], "argument --jobs/-j: not a whole number: 'two'"),
    (["score", "--all", "-j", "-3"], "argument --jobs/-j: must be at least 1, not -3"),
    (["score", "r1", "--jobs", "0"], "argument --jobs/-j: must be at least 1, not 0"),
    # a worker process is forked per job before any work is handed out: a billion would never end forking
    (["build", "--jobs", "1000000000"], "argument --jobs/-j: must be at most 256, not 1000000000"),
    (["score", "--all", "-j", "257"], "argument --jobs/-j: must be at most 256, not 257"),
    (["verify", "x", "-j", str(10**30)], f"argument --jobs/-j: must be at most 256, not {10**30}"),
    (["score", "--all", "r1"], "argument RUN: not allowed with argument --all"),
    (["score", "r1", "--all"], "argument --all: not allowed with argument RUN"),
    (["serve", "--port", "99999"], "argument --port: must be a port from 1 to 65535"),
    (["serve", "--port", "65536"], "argument --port: must be a port from 1 to 65535"),
    (["serve", "--port", "-1"], "argument --port: must be a port from 1 to 65535"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else "")
def test_bad_numbers_and_conflicting_arguments_are_refused_before_anything_is_read(capsys, tmp_path, argv, fragment):
    site = ["--out", str(tmp_path / "site")] if argv[0] in ("build", "serve") else []
    code, out, err = _run(capsys, *argv, "--records", str(tmp_path / "nowhere"), *site)
    assert code == 2 and out == ""
    assert err.startswith(f"error: sitegen {argv[0]}: ") and fragment in err and "Traceback" not in err, err
    assert "nowhere" not in err and not (tmp_path / "site").exists()


def test_score_still_takes_runs_or_all_alone(capsys, tmp_path):
    root = tmp_path / "records"
    shutil.copytree(SMALL, root)
    assert _run(capsys, "score", "--records", str(root), "r1", "r2")[0] == 0
    assert _run(capsys, "score", "--records", str(root), "--all", "-j", "2")[0] == 0
    code, _, err = _run(capsys, "score", "--records", str(root))
    assert code == 2 and "--all" in err


def test_serve_on_a_port_in_use_says_so_before_building(capsys, tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = _run(capsys, "serve", "--records", str(SMALL), "--out", str(tmp_path / "site"), "--port", str(port))
    assert code == 1 and out == ""
    assert err.strip() == f"error: cannot serve on 127.0.0.1:{port}: address already in use"
    assert not (tmp_path / "site").exists(), "nothing was built"


def test_an_environment_error_without_a_file_name_has_no_empty_place(capsys, monkeypatch):
    import sitegen.cli as cli

    def fail(args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli, "_check", fail)
    code, _, err = _run(capsys, "check", "--records", str(SMALL))
    assert code == 1 and err == "error: No space left on device\n"


def test_unknown_run_and_case_are_usage_errors(capsys):
    code, _, err = _run(capsys, "explain", "--records", str(SMALL), "no-such-run", "leak-unchecked")
    assert code == 2 and "no-such-run" in err and "Traceback" not in err
    code, _, err = _run(capsys, "explain", "--records", str(SMALL), "r1", "no-such-case")
    assert code == 2 and "no-such-case" in err and "Traceback" not in err


def _broken_copy(tmp_path: Path, fixture: str) -> Path:
    root = tmp_path / "records"
    shutil.copytree(SMALL, root)
    for f in (DATA / "invalid" / fixture).glob("*.json"):
        shutil.copy(f, root / f.name)
    return root


@pytest.mark.parametrize("command", [["build", "--out", "SITE"], ["compare", "r2", "r3"], ["score", "--all"], ["explain", "r1", "leak-unchecked"]])
def test_bad_records_exit_2_with_located_diagnostics(capsys, tmp_path, command):
    root = _broken_copy(tmp_path, "dangling-rule")
    argv = [str(tmp_path / "site") if a == "SITE" else a for a in command] + ["--records", str(root)]
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines, "the problems go to standard error"
    for line in lines:
        assert DIAGNOSTIC.match(line), line
    (line,) = lines
    found = DIAGNOSTIC.match(line)
    assert found["path"] == str(root / "cases.json")
    assert found["pointer"] == "/case_versions/2/key/expected/0/rules/0"
    assert found["code"] == "record.dangling-rule"
    assert '"R-FORVARING"' in found["message"]
    # the line and column point at the offending value in the file
    text = (root / "cases.json").read_text(encoding="utf-8").split("\n")
    assert text[int(found["line"]) - 1][int(found["col"]) - 1:].startswith('"R-FORVARING"')
    assert not (tmp_path / "site").exists()


def test_every_problem_of_a_broken_folder_is_printed_once(capsys, tmp_path):
    root = _broken_copy(tmp_path, "unknown-field")
    for f in (DATA / "invalid" / "wrong-type").glob("*.json"):
        shutil.copy(f, root / f.name)
    code, _, err = _run(capsys, "compare", "r2", "r3", "--records", str(root))
    assert code == 2
    codes = sorted(DIAGNOSTIC.match(line)["code"] for line in err.splitlines() if ": note: " not in line)
    assert codes == ["record.type", "record.unknown-field"]


def test_missing_records_folder_is_reported_not_raised(capsys, tmp_path):
    code, out, err = _run(capsys, "build", "--records", str(tmp_path / "nowhere"), "--out", str(tmp_path / "site"))
    assert code == 2
    assert str(tmp_path / "nowhere") in err and "Traceback" not in err
    assert not (tmp_path / "site").exists()


def test_fingerprint_prints_each_setup_with_its_sha256(capsys):
    import json

    from sitegen.load.setups import fingerprint

    code, out, _ = _run(capsys, "fingerprint", "--records", str(SMALL))
    assert code == 0
    setups = json.loads((SMALL / "setups.json").read_text(encoding="utf-8"))["setups"]
    expected = [f"{fingerprint(s['configuration'])}  {s['id']}" for s in sorted(setups, key=lambda s: s["id"])]
    assert out.splitlines() == expected


def _edited_setups(tmp_path: Path, edit) -> Path:
    import json

    root = tmp_path / "records"
    shutil.copytree(SMALL, root)
    value = json.loads((root / "setups.json").read_text(encoding="utf-8"))
    edit(value["setups"])
    (root / "setups.json").write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    return root


def test_fingerprint_prints_it_for_a_new_or_edited_setup_and_what_is_stored_instead(capsys, tmp_path):
    """What the loader's refusal tells the publisher to run works exactly when the records do not load."""
    from sitegen.load.setups import fingerprint

    def edit(setups):
        solo, duo = setups
        del solo["fingerprint"]
        duo["configuration"]["model"] = "edited"
        setups.append({"id": "new", "configuration": {"merge": True}, "fingerprint": "x"})

    root = _edited_setups(tmp_path, edit)
    code, _, err = _run(capsys, "build", "--records", str(root), "--out", str(tmp_path / "site"))
    assert code == 2 and "/setups/0: error: missing required field \"fingerprint\"" in err and "/setups/2/fingerprint" in err
    code, out, err = _run(capsys, "fingerprint", "--records", str(root))
    assert code == 0 and err == ""
    import json

    setups = {s["id"]: s for s in json.loads((root / "setups.json").read_text(encoding="utf-8"))["setups"]}
    assert out.splitlines() == [
        f"{fingerprint(setups['duo']['configuration'])}  duo  (stored: {setups['duo']['fingerprint']})",
        f"{fingerprint({'merge': True})}  new  (stored: x)",
        f"{fingerprint(setups['solo']['configuration'])}  solo  (not stored yet)",
    ]
    code, out, _ = _run(capsys, "fingerprint", "--records", str(root), "solo")
    assert code == 0 and out.splitlines() == [f"{fingerprint(setups['solo']['configuration'])}  solo  (not stored yet)"]


def test_fingerprint_refuses_setups_without_a_valid_configuration_with_located_diagnostics(capsys, tmp_path):
    root = _edited_setups(tmp_path, lambda setups: setups[1]["configuration"].pop("merge"))
    code, out, err = _run(capsys, "fingerprint", "--records", str(root))
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    found = DIAGNOSTIC.match(line)
    assert found, line
    assert (found["path"], found["pointer"], found["code"]) == (str(root / "setups.json"), "/setups/1/configuration", "record.missing-field")


def test_fingerprint_refuses_an_unknown_setup_before_printing_anything(capsys):
    code, out, err = _run(capsys, "fingerprint", "--records", str(SMALL), "solo", "nope")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "nope" in err


# `place: error: message [code]`, the place being the option (or the file) the problem concerns
ENTRY_REFUSAL = re.compile(r"^(?P<place>.+?): error: (?P<message>.+) \[(?P<code>entry\.[a-z-]+)\]$")


@pytest.mark.parametrize("option, value, code", [
    ("--category", "measurement", "entry.unknown-category"),
    ("--explains", "scorer:seven", "entry.bad-explains"),
    ("--source", "http://example.org/", "entry.bad-source"),
    ("--date", "2026-13-01", "entry.bad-date"),
    ("--slug", "../escape", "entry.bad-name"),
])
def test_entry_new_refuses_a_bad_value_with_its_option_and_code(capsys, tmp_path, option, value, code):
    arguments = {"--category": "test-cases", "--date": "2026-10-01"} | {option: value}
    code_, out, err = _run(capsys, "entry", "new", "--records", str(tmp_path), *[x for pair in arguments.items() for x in pair])
    assert code_ == 2 and out == ""
    (line,) = err.splitlines()
    found = ENTRY_REFUSAL.match(line)
    assert found, line
    assert (found["place"], found["code"]) == (option, code) and value in found["message"]
    assert list(tmp_path.iterdir()) == []


def test_entry_new_refuses_an_existing_file_as_bad_input(capsys, tmp_path):
    argv = ["entry", "new", "--records", str(tmp_path), "--category", "scoring-rules", "--explains", "scorer:7", "--date", "2026-10-01"]
    code, out, _ = _run(capsys, *argv)
    path = tmp_path / "changelog" / "2026-10-01-scorer-7.md"
    assert code == 0 and out.strip() == str(path)
    before = path.read_bytes()
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    found = ENTRY_REFUSAL.match(err.strip())
    assert found and found["place"] == str(path) and found["code"] == "entry.exists" and "--slug" in found["message"], err
    assert path.read_bytes() == before
    assert _run(capsys, *argv, "--slug", "scorer-7-again")[0] == 0


def test_entry_new_refuses_a_records_folder_that_is_not_there_instead_of_making_it(capsys, tmp_path):
    """A mistyped --records is refused as every command that reads records refuses it, not made with a changelog in it."""
    argv = ["entry", "new", "--category", "test-cases", "--date", "2026-10-01", "--records"]
    code, out, err = _run(capsys, *argv, str(tmp_path / "recrods"))
    assert code == 2 and out == ""
    found = ENTRY_REFUSAL.match(err.strip())
    assert found and found["place"] == "--records" and found["code"] == "entry.no-records" and "recrods" in err, err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["records", "changelog"])
def test_entry_new_refuses_a_file_where_a_folder_belongs_as_bad_input(capsys, tmp_path, kind):
    records = tmp_path / "records"
    if kind == "records":
        records.write_text("not a folder\n", encoding="utf-8")
    else:
        records.mkdir()
        (records / "changelog").write_text("not a folder\n", encoding="utf-8")
    code, out, err = _run(capsys, "entry", "new", "--category", "test-cases", "--date", "2026-10-01", "--records", str(records))
    assert code == 2 and out == "" and "Traceback" not in err
    found = ENTRY_REFUSAL.match(err.strip())
    assert found, err
    assert (found["place"], found["code"]) == (("--records", "entry.no-records") if kind == "records" else
                                               (str(records / "changelog"), "entry.not-a-folder"))
    assert sorted(p.name for p in tmp_path.rglob("*")) == (["records"] if kind == "records" else ["changelog", "records"])


def test_entry_new_help_names_the_folder_it_writes_as_the_one_of_records(capsys):
    code, out, _ = _run(capsys, "entry", "new", "--help")
    assert code == 0
    assert "records/changelog/<date>" not in out
    assert "changelog folder of --records" in " ".join(out.split())


def test_end_to_end_as_a_user_runs_it(tmp_path):
    records = tmp_path / "my records"
    shutil.copytree(SMALL, records)
    out = tmp_path / "public site"
    done = subprocess.run(
        [sys.executable, "-m", "sitegen", "build", "--records", str(records), "--out", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    printed = done.stdout.splitlines()
    assert any(line.startswith("built ") and line.endswith(f"into {out}") for line in printed), done.stdout
    assert f"open {out / 'index.html'}" in printed
    assert (out / "index.html").is_file()
    assert (out / "downloads" / "SHA256SUMS").is_file()


# --- the site folder: refused before anything is read or written -----------------------------

# `path: error: message [code]`
def test_running_out_of_memory_is_one_line_not_a_traceback(capsys, monkeypatch):
    import sitegen.cli as cli

    def fail(args):
        raise MemoryError()

    monkeypatch.setattr(cli, "_check", fail)
    code, out, err = _run(capsys, "check", "--records", str(SMALL))
    assert (code, out, err) == (1, "", "error: out of memory\n")


OUT_REFUSAL = re.compile(r"^(?P<path>.+?): error: (?P<message>.+) \[(?P<code>out\.[a-z-]+)\]$")


def _listing(root: Path) -> dict[str, bytes | None]:
    """Every entry below root, hidden ones included: folders as None, files with their bytes."""
    return {p.relative_to(root).as_posix(): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("out", [".", "..", "bad/.."])
def test_build_refuses_the_current_folder_and_its_parents(capsys, tmp_path, monkeypatch, out):
    work = tmp_path / "public" / "work"
    shutil.copytree(SMALL, work / "records")
    (work / "important.txt").write_text("keep me\n", encoding="utf-8")
    monkeypatch.chdir(work)
    before = _listing(tmp_path)
    code, stdout, err = _run(capsys, "build", "--records", "records", "--out", out)
    assert code == 2 and stdout == ""
    (line,) = err.splitlines()
    found = OUT_REFUSAL.match(line)
    assert found, line
    assert found["path"] == out and found["code"] == "out.working-folder"
    assert "sub-folder" in found["message"]
    assert _listing(tmp_path) == before, "nothing changed, and no ..old- or ..tmp- folder is left anywhere"


@pytest.mark.parametrize("kind", ["records", "inside-records", "file", "not-a-site"])
def test_build_refuses_an_out_path_it_may_not_replace(capsys, tmp_path, monkeypatch, kind):
    records = tmp_path / "records"
    shutil.copytree(SMALL, records)
    out, expected = {
        "records": (records, "out.records-folder"),
        "inside-records": (records / "changelog", "out.records-folder"),
        "file": (tmp_path / "site", "out.not-a-folder"),
        "not-a-site": (tmp_path / "site", "out.not-a-site"),
    }[kind]
    if kind == "file":
        out.write_text("not a folder\n", encoding="utf-8")
    elif kind == "not-a-site":
        out.mkdir()
        (out / "important.txt").write_text("keep me\n", encoding="utf-8")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    before = _listing(tmp_path)
    code, stdout, err = _run(capsys, "build", "--records", str(records), "--out", str(out))
    assert code == 2 and stdout == ""
    (line,) = err.splitlines()
    found = OUT_REFUSAL.match(line)
    assert found, line
    assert found["path"] == str(out) and found["code"] == expected
    assert _listing(tmp_path) == before, "the records and the folder at --out are untouched; no temporary folder is left"


def test_serve_refuses_the_current_folder_before_building_or_serving(capsys, tmp_path, monkeypatch):
    shutil.copytree(SMALL, tmp_path / "records")
    monkeypatch.chdir(tmp_path)
    before = _listing(tmp_path)
    code, stdout, err = _run(capsys, "serve", "--records", "records", "--out", ".", "--port", "0")
    assert code == 2 and stdout == ""
    found = OUT_REFUSAL.match(err.strip())
    assert found and found["path"] == "." and found["code"] == "out.working-folder", err
    assert "serving" not in err
    assert _listing(tmp_path) == before


def test_build_into_an_empty_folder_and_again_over_the_site_it_built(capsys, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    assert _run(capsys, "build", "--quiet", "--records", str(SMALL), "--out", str(out))[0] == 0
    first = _listing(out)
    assert ".sitegen-site" in first and "index.html" in first
    assert _run(capsys, "build", "--quiet", "--records", str(SMALL), "--out", str(out))[0] == 0
    assert _listing(out) == first
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


@pytest.mark.parametrize("argv, wrong, right", [
    (["explain", "2026-09-16-releas", "cure-unchecked"], "2026-09-16-releas", "2026-09-16-release"),
    (["explain", "2026-09-16-release", "cure-uncheked"], "cure-uncheked", "cure-unchecked"),
    (["compare", "2026-09-02-nightly", "2026-09-16-releas"], "2026-09-16-releas", "2026-09-16-release"),
    (["score", "2026-09-16-releas"], "2026-09-16-releas", "2026-09-16-release"),
])
def test_a_mistyped_run_or_case_is_refused_with_the_close_name(argv, wrong, right, tmp_path, capsys):
    records = tmp_path / "records"
    shutil.copytree(Path(__file__).resolve().parent.parent / "records", records)
    code = main([*argv, "--records", str(records)])
    err = capsys.readouterr().err
    assert code == 2 and f'"{wrong}" (did you mean "{right}"?)' in err and "Traceback" not in err


# what only rendering needs: a command that does not render must not load it (the command line imports a rendering
# command's phases when that command runs, so `sitegen score` starts in about half the time)
RENDERING = ("jinja2", "markdown", "babel", "sitegen.build", "sitegen.render", "sitegen.publish", "sitegen.changelog")


def _modules_loaded_by(*argv: str) -> tuple[int, set[str]]:
    """Run one command in a fresh interpreter, as `sitegen` does, and say which modules it had loaded when it ended."""
    script = ("import sys; from sitegen.cli import main; code = main(sys.argv[1:]); "
              "print('\\n'.join(sorted(sys.modules)), file=sys.stderr); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, cwd=REPO, timeout=120)
    return done.returncode, set(done.stderr.splitlines())


def _rendering(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if any(name == r or name.startswith(r + ".") for r in RENDERING))


@pytest.mark.parametrize("argv", [
    ["score", "--all", "--records", "RECORDS"],
    ["explain", "--records", "RECORDS", "r1", "leak-unchecked"],
    ["compare", "--records", "RECORDS", "r2", "r3"],
    ["fingerprint", "--records", "RECORDS"],
    ["--version"],
], ids=lambda argv: argv[0])
def test_a_command_that_does_not_render_never_loads_the_renderer(tmp_path, argv):
    records = tmp_path / "records"
    shutil.copytree(SMALL, records)
    code, modules = _modules_loaded_by(*[str(records) if a == "RECORDS" else a for a in argv])
    assert code in (0, 1), f"the command itself failed ({code})"
    assert "sitegen.cli" in modules and "sitegen.loading" in modules or argv == ["--version"]
    assert not _rendering(modules), f"sitegen {argv[0]} loaded what only rendering needs: {_rendering(modules)}"


def test_a_command_that_renders_loads_the_renderer(tmp_path):
    """The other side, so the test above can tell: `sitegen check` builds the site, and so loads the renderer."""
    records = tmp_path / "records"
    shutil.copytree(SMALL, records)
    code, modules = _modules_loaded_by("check", "--records", str(records))
    assert code in (0, 1)
    assert {"jinja2", "sitegen.build", "sitegen.render.pages"} <= modules
