"""SHA256SUMS signed with stock OpenSSH (`ssh-keygen -Y`), so any reader can check it without installing anything of ours."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from sitegen.core.errors import Diagnostic

# What the signature is for: ssh-keygen refuses a signature made for another namespace, so it cannot be passed off as one.
NAMESPACE = "sitegen-sha256sums@sitegen"
ALLOWED_SIGNERS = "allowed_signers"  # in the records folder, checked in: the key the repository pins
SIGNATURE = "SHA256SUMS.sig"
TIMEOUT = 60  # seconds: ssh-keygen never asks anything here (-N '' keys, stdin is the data), so this only stops a hang


def principals(allowed_signers: bytes) -> tuple[str, ...]:
    """The principals of an allowed_signers file (first field of each line that is not blank or a comment), in order."""
    found: list[str] = []
    for line in allowed_signers.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            for name in line.split()[0].split(","):
                if name and name not in found:
                    found.append(name)
    return tuple(found)


def _ssh_keygen() -> str | None:
    return shutil.which("ssh-keygen")


def check_signature(sums: bytes, signature: bytes, allowed_signers: bytes, *, sums_path: str = "SHA256SUMS",
                    signature_path: str = SIGNATURE, signers_path: str = ALLOWED_SIGNERS) -> list[Diagnostic]:
    """No problems when `signature` is a signature of `sums` in NAMESPACE by a key that `allowed_signers` allows.

    Works from the published bytes alone (`ssh-keygen -Y verify` once per principal), so `sitegen verify` can use it.
    """
    program = _ssh_keygen()
    if program is None:
        return [Diagnostic(signature_path, None, None, None, "cannot check the signature: ssh-keygen (OpenSSH) is not installed",
                           "sign.no-ssh-keygen")]
    names = principals(allowed_signers)
    if not names:
        return [Diagnostic(signers_path, None, None, None, "allowed_signers names no principal, so no signature can verify",
                           "sign.no-principal")]
    said = ""
    with tempfile.TemporaryDirectory(prefix="sitegen-verify-") as tmp:
        signers, sig = Path(tmp) / "allowed_signers", Path(tmp) / "SHA256SUMS.sig"
        signers.write_bytes(allowed_signers)
        sig.write_bytes(signature)
        for name in names:
            done = _run([program, "-Y", "verify", "-f", str(signers), "-I", name, "-n", NAMESPACE, "-s", str(sig)], sums)
            if done is not None and done.returncode == 0:
                return []
            said = said or ("ssh-keygen did not answer" if done is None else _said(done))
    return [Diagnostic(signature_path, None, None, None,
                       f"the signature of {sums_path} does not verify in namespace {NAMESPACE} with any key {signers_path} "
                       f"allows (ssh-keygen: {said})", "sign.bad-signature")]


def sign_sums(sums: bytes, key: Path, allowed_signers: bytes, *, signers_path: str) -> tuple[bytes | None, list[Diagnostic]]:
    """The signature of `sums` made with `key`, or the problems: a key that cannot sign, or one allowed_signers does not allow.

    Ed25519 signatures are deterministic, so the same sums and key give the same bytes and builds stay byte-identical.
    """
    program = _ssh_keygen()
    where = str(key)
    if program is None:
        return None, [Diagnostic(where, None, None, None, "cannot sign SHA256SUMS: ssh-keygen (OpenSSH) is not installed",
                                 "sign.no-ssh-keygen")]
    if not Path(key).is_file():
        return None, [Diagnostic(where, None, None, None, "the signing key is not a file", "sign.no-key")]
    done = _run([program, "-Y", "sign", "-f", str(key), "-n", NAMESPACE], sums)
    if done is None or done.returncode != 0 or not done.stdout.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        said = "ssh-keygen did not answer" if done is None else _said(done)
        return None, [Diagnostic(where, None, None, None, f"ssh-keygen could not sign with this key ({said})", "sign.failed")]
    problems = check_signature(sums, done.stdout, allowed_signers, signature_path="the signature made with " + where,
                               signers_path=signers_path)
    if problems:
        return None, [Diagnostic(signers_path, None, None, None, f"the signing key {where} is not one this allowed_signers file "
                                 "allows: the build signs only with a key the repository pins", "sign.key-not-allowed")]
    return done.stdout, []


def _run(argv: list[str], data: bytes) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(argv, input=data, capture_output=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _said(done: subprocess.CompletedProcess) -> str:
    text = done.stderr.decode("utf-8", "replace").strip().replace("\n", "; ")
    return text or f"exit status {done.returncode}"
