#!/usr/bin/env bash
# The one test command: installs what the tests need (Debian's chromium, the
# Python package with its test extras into the project's own virtual
# environment .venv, axe-core from package-lock.json), then
# runs the whole pytest suite, including the real-browser tests, and exits
# with pytest's status. Safe to run again: each install step is skipped when
# its result is already in place. Extra arguments are passed on to pytest.
#
#   bash scripts/test.sh                 # everything
#   bash scripts/test.sh -m "not browser" -x
#
# It never downloads a browser build of its own (no `playwright install`):
# the browser tests drive Debian's /usr/bin/chromium.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf 'test.sh: %s\n' "$*" >&2; }

# Root runs apt-get itself; anyone else needs sudo for the system packages.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        say "need root or sudo to run: $*"
        exit 1
    fi
}

apt_updated=0
apt_install() {
    if [ "$apt_updated" -eq 0 ]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        apt_updated=1
    fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

# --- system packages ---------------------------------------------------------

if [ ! -x /usr/bin/chromium ]; then
    say "installing Debian's chromium"
    apt_install chromium
fi

# The stock font a fresh Debian draws pages with; the tests check every symbol against it.
if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
    say "installing Debian's DejaVu fonts"
    apt_install fonts-dejavu-core
fi

# ssh-keygen signs and verifies SHA256SUMS (the signing tests make throwaway keys with it).
if ! command -v ssh-keygen >/dev/null 2>&1; then
    say "installing Debian's openssh-client"
    apt_install openssh-client
fi

if ! command -v npm >/dev/null 2>&1; then
    say "installing Debian's npm"
    apt_install npm
fi

# --- Python ------------------------------------------------------------------

python="${PYTHON:-}"
if [ -z "$python" ]; then
    if command -v python3 >/dev/null 2>&1; then python=python3; else python=python; fi
fi

# Never install into an interpreter of its own (a Debian Python refuses, PEP 668;
# a pyenv or other Python would be changed for everyone who uses it): use the
# virtual environment that is active, else the project's own .venv (ignored by
# git), created when missing; it is the one the README's first command makes.
in_venv="$("$python" -c 'import sys; print(int(sys.prefix != sys.base_prefix))')"
if [ "$in_venv" = 0 ]; then
    venv="$root/.venv"
    if [ ! -x "$venv/bin/python" ]; then
        say "creating the project's virtual environment $venv"
        if ! "$python" -m venv "$venv" 2>/dev/null; then
            rm -rf "$venv"
            apt_install python3-venv
            "$python" -m venv "$venv"
        fi
    fi
    python="$venv/bin/python"
fi

export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_ROOT_USER_ACTION=ignore

# Reinstall unless this very checkout is what `import sitegen` finds (asked from
# outside the checkout, so the working directory cannot answer for it), every
# requirement of the package and its test extras is met, and pyproject.toml is
# unchanged since the last install (a stamp under build/, ignored by git).
stamp="$root/build/.test-install-stamp"
stamp_text="$("$python" -c 'import sys; print(sys.executable)') $(sha256sum pyproject.toml | cut -d' ' -f1)"

installed_here() {
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_text" ] || return 1
    (cd / && "$python" - "$root" <<'PY'
import importlib.metadata as md, os, sys
root = sys.argv[1]
try:
    import sitegen
    from packaging.requirements import Requirement
except ImportError:
    sys.exit(1)
if os.path.realpath(os.path.dirname(sitegen.__file__)) != os.path.realpath(os.path.join(root, "sitegen")):
    sys.exit(1)
for text in md.requires("sitegen") or []:
    req = Requirement(text)
    if req.marker and not req.marker.evaluate({"extra": "test"}):
        continue
    try:
        version = md.version(req.name)
    except md.PackageNotFoundError:
        sys.exit(1)
    if not req.specifier.contains(version, prereleases=True):
        sys.exit(1)
PY
    )
}

if ! installed_here; then
    say "installing sitegen with its test extras"
    "$python" -m pip install -q -e ".[test]"
    mkdir -p "$(dirname "$stamp")"
    printf '%s\n' "$stamp_text" >"$stamp"
fi

# --- JavaScript used by the tests (axe-core) -----------------------------------

# Compare the installed axe-core with the version the lock file pins.
axe_current() {
    [ -f node_modules/axe-core/axe.min.js ] || return 1
    command -v node >/dev/null 2>&1 || return 1
    node -e '
        const want = require("./package-lock.json").packages["node_modules/axe-core"].version;
        const have = require("./node_modules/axe-core/package.json").version;
        process.exit(want === have ? 0 : 1);
    ' 2>/dev/null
}

if ! axe_current; then
    say "installing axe-core from package-lock.json"
    npm ci --no-audit --no-fund --loglevel=error
fi

# --- the tests -----------------------------------------------------------------

status=0
"$python" -m pytest "$@" || status=$?
if [ "$status" -eq 5 ]; then
    say "pytest collected no tests: treated as a failure"
fi
exit "$status"
