#!/usr/bin/env bash
# Extract the templates' and the measure registry's msgids into sitegen/locales/sitegen.pot, then merge them into the sv and en catalogs.
# New or changed msgids arrive untranslated (or fuzzy) and the build refuses them until translated.
#
#   bash scripts/extract_messages.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

pybabel extract -F pyproject.toml \
    --no-location --sort-output --no-wrap \
    --project=sitegen --copyright-holder="sitegen contributors" \
    -k _ -k N_ -k gettext -k ngettext:1,2 -k pgettext:1c,2 -k npgettext:1c,2,3 \
    -o sitegen/locales/sitegen.pot .

for lang in sv en; do
    po="sitegen/locales/$lang/LC_MESSAGES/sitegen.po"
    if [ -f "$po" ]; then
        pybabel update -D sitegen -i sitegen/locales/sitegen.pot -d sitegen/locales -l "$lang" --no-fuzzy-matching --ignore-obsolete --no-wrap
        # pybabel writes the project name with two spaces when the version is empty; keep the header as committed
        sed -i 's/^"Project-Id-Version:  sitegen\\n"$/"Project-Id-Version: sitegen\\n"/' "$po"
    else
        pybabel init -D sitegen -i sitegen/locales/sitegen.pot -d sitegen/locales -l "$lang"
    fi
done
