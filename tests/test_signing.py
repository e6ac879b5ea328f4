"""SHA256SUMS signed with stock OpenSSH when a key is given, only with a key the records' allowed_signers line allows."""

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.publish.signing import NAMESPACE, check_signature

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "records"
PRINCIPAL = "maintainers@example.org"

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen (scripts/test.sh installs openssh-client)")


def _key(folder: Path, name: str = "signing-key") -> Path:
    """A throwaway Ed25519 key without a passphrase, made the way a maintainer would."""
    folder.mkdir(parents=True, exist_ok=True)
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", str(key)], check=True)
    return key


def _signers_line(key: Path) -> str:
    kind, blob = Path(str(key) + ".pub").read_text().split()[:2]
    return f'{PRINCIPAL} namespaces="{NAMESPACE}" {kind} {blob}\n'


@pytest.fixture
def signed(tmp_path):
    """Records that pin one key, and that key kept outside the records."""
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    key = _key(tmp_path / "keys")
    (root / "allowed_signers").write_text(_signers_line(key), encoding="utf-8")
    return root, key


def test_a_signed_build_publishes_a_signature_ssh_keygen_verifies(tmp_path, signed, capsys):
    root, key = signed
    out = tmp_path / "site"
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet", "--signing-key", str(key)]) == 0, capsys.readouterr().err
    downloads = out / "downloads"
    assert (downloads / "allowed_signers").read_bytes() == (root / "allowed_signers").read_bytes()
    sig = (downloads / "SHA256SUMS.sig").read_bytes()
    assert sig.startswith(b"-----BEGIN SSH SIGNATURE-----")
    done = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", "allowed_signers", "-I", PRINCIPAL, "-n", NAMESPACE,
                           "-s", "SHA256SUMS.sig"], cwd=downloads, stdin=open(downloads / "SHA256SUMS", "rb"),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f'Good "{NAMESPACE}" signature for {PRINCIPAL}')
    assert "SHA256SUMS.sig" not in (downloads / "SHA256SUMS").read_text(), "the signature cannot be listed in what it signs"
    en = (out / "en" / "downloads.html").read_text(encoding="utf-8")
    sv = (out / "sv" / "downloads.html").read_text(encoding="utf-8")
    command = f"ssh-keygen -Y verify -f allowed_signers -I {PRINCIPAL} -n {NAMESPACE} -s SHA256SUMS.sig &lt; SHA256SUMS"
    assert command in en and command in sv
    assert "SHA256SUMS is signed with OpenSSH" in en and "SHA256SUMS är signerad med OpenSSH" in sv
    assert f"<code>{NAMESPACE}</code>" in en and f"<code>{NAMESPACE}</code>" in sv
    assert _signers_line(key).strip().replace('"', "&#34;") in en


def test_two_signed_builds_are_byte_identical(tmp_path, signed, monkeypatch):
    root, key = signed
    first, second = tmp_path / "one", tmp_path / "two"
    assert main(["build", "--records", str(root), "--out", str(first), "--quiet", "--signing-key", str(key)]) == 0
    monkeypatch.setenv("SITEGEN_SIGNING_KEY", str(key))  # the environment names the key as well as the option
    assert main(["build", "--records", str(root), "--out", str(second), "--quiet"]) == 0
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert Path("downloads/SHA256SUMS.sig") in files
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)


def test_a_key_the_pinned_line_does_not_allow_is_refused(tmp_path, signed, capsys):
    root, _ = signed
    other = _key(tmp_path / "other")
    out = tmp_path / "site"
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet", "--signing-key", str(other)]) == 2
    err = capsys.readouterr().err
    assert f"{root / 'allowed_signers'}: error: the signing key {other} is not one this allowed_signers file allows" in err
    assert "[sign.key-not-allowed]" in err and "Traceback" not in err
    assert not out.exists()


def test_a_key_without_a_pinned_line_is_refused(tmp_path, capsys):
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    (root / "allowed_signers").unlink(missing_ok=True)
    key = _key(tmp_path / "keys")
    out = tmp_path / "site"
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet", "--signing-key", str(key)]) == 2
    assert "[sign.no-allowed-signers]" in capsys.readouterr().err
    assert not out.exists()


def test_a_missing_key_file_is_refused_at_its_path(tmp_path, signed, capsys):
    root, _ = signed
    missing = tmp_path / "no-such-key"
    assert main(["build", "--records", str(root), "--out", str(tmp_path / "site"), "--quiet", "--signing-key", str(missing)]) == 2
    assert f"{missing}: error: the signing key is not a file [sign.no-key]" in capsys.readouterr().err


def test_without_a_key_the_build_is_unsigned_and_the_page_says_so(tmp_path, signed, monkeypatch):
    root, _ = signed
    monkeypatch.delenv("SITEGEN_SIGNING_KEY", raising=False)
    out = tmp_path / "site"
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet"]) == 0
    assert not (out / "downloads" / "SHA256SUMS.sig").exists()
    assert (out / "downloads" / "allowed_signers").is_file(), "the pinned line is published either way"
    assert "is not signed: it was built without a signing key" in (out / "en" / "downloads.html").read_text(encoding="utf-8")
    assert "är inte signerad: den byggdes utan signeringsnyckel" in (out / "sv" / "downloads.html").read_text(encoding="utf-8")


def test_check_signature_works_from_published_bytes(tmp_path, signed):
    root, key = signed
    out = tmp_path / "site"
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet", "--signing-key", str(key)]) == 0
    sums = (out / "downloads" / "SHA256SUMS").read_bytes()
    sig = (out / "downloads" / "SHA256SUMS.sig").read_bytes()
    signers = (out / "downloads" / "allowed_signers").read_bytes()
    assert check_signature(sums, sig, signers) == []
    tampered = check_signature(sums.replace(b"  ", b"  x", 1), sig, signers)
    assert [d.code for d in tampered] == ["sign.bad-signature"] and tampered[0].path == "SHA256SUMS.sig"
    stranger = _signers_line(_key(tmp_path / "stranger")).encode()
    assert [d.code for d in check_signature(sums, sig, stranger)] == ["sign.bad-signature"]


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_the_signature_check_works_as_the_page_writes_it(tmp_path, signed, lang):
    """A reader saves the three files the page names into one folder and runs the command it shows, character for character."""
    root, key = signed
    out = tmp_path / "site"
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet", "--signing-key", str(key)]) == 0
    page = (out / lang / "downloads.html").read_text(encoding="utf-8")
    section = page[page.index('id="signature-heading"'):]
    blocks = [html.unescape(c) for c in re.findall(r'<pre class="wrap"><code>(.*?)</code></pre>', section, re.S)]
    (command,) = [c for c in blocks if c.startswith("ssh-keygen")]
    saved = tmp_path / "saved"
    saved.mkdir()
    for name in ("SHA256SUMS", "SHA256SUMS.sig", "allowed_signers"):
        shutil.copyfile(out / "downloads" / name, saved / name)
    done = subprocess.run(["sh", "-c", command], cwd=saved, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("Good"), done.stdout + done.stderr
    (saved / "SHA256SUMS").write_bytes((saved / "SHA256SUMS").read_bytes() + b"\n")
    assert subprocess.run(["sh", "-c", command], cwd=saved, capture_output=True, text=True).returncode != 0


def test_a_cached_build_signs_when_asked_and_drops_the_signature_when_not(tmp_path, signed, capsys, monkeypatch):
    """A build with nothing changed may stop early with a cache, but a signature is asked for by the build, not the
    records: signing after an unsigned build signs, and an unsigned build after a signed one is unsigned again."""
    root, key = signed
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1788220800")
    monkeypatch.delenv("SITEGEN_SIGNING_KEY", raising=False)
    out, cache = tmp_path / "site", tmp_path / "cache"
    common = ["build", "--records", str(root), "--out", str(out), "--quiet", "--cache", str(cache)]
    assert main(common) == 0, capsys.readouterr().err
    assert not (out / "downloads" / "SHA256SUMS.sig").exists()
    assert main(common + ["--signing-key", str(key)]) == 0, capsys.readouterr().err
    assert (out / "downloads" / "SHA256SUMS.sig").read_bytes().startswith(b"-----BEGIN SSH SIGNATURE-----")
    assert main(common) == 0, capsys.readouterr().err
    assert not (out / "downloads" / "SHA256SUMS.sig").exists()
