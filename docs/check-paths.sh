#!/usr/bin/env bash
# Checks that every repository path the README, docs/, results/README.md and
# scripts/gpu/README.md name in backquotes exists. A name counts as a path
# when it begins with a top-level entry of the repository, an entry of the
# naming file's folder, or ../; it must
# exist relative to the root or to the naming file's directory. A file inside
# an archive is named ARCHIVE:PATH, and the archive is checked; a line that
# says "git history", and a changelog section, name paths that left the
# tree, and are passed over.
# Prints each missing path with the file
# that names it; exit status 1 when any is missing. Run from anywhere:
# bash docs/check-paths.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tops=$(git ls-files | cut -d/ -f1 | sort -u | sed 's/\./\\./g' | tr '\n' '|')
tops="${tops%|}"
missing=0
for f in README.md docs/*.md results/README.md scripts/gpu/README.md; do
  dir=$(dirname "$f")
  # Entries of the naming file's folder count too (results/README.md names h100/...).
  here=$(ls -A "$dir" | sed 's/\./\\./g' | tr '\n' '|')
  here="${here%|}"
  # Backquoted words, then the ones that look like a path of this repository.
  while read -r p; do
    p="${p%%:*}"                      # file:line
    p="${p%/}"                        # a folder's trailing slash
    case "$p" in
      *'*'*|*'{'*|*'<'*|*'$'*|*' '*|'') continue ;;   # patterns and placeholders
    esac
    if [ -e "$p" ] || [ -e "$dir/$p" ]; then continue; fi
    echo "$f: $p"
    missing=1
  done < <(sed '/^## Changelog/,$d' "$f" | grep -v 'git history' | grep -o '`[^`]*`' | tr -d '`' | grep -E "^(\.\./|(${tops}|${here})(/|$))" | sort -u)
done
exit $missing
