#!/usr/bin/env bash
# Checks that C++ files follow .clang-format (clang-format-14), changing nothing.
#   tools/check-format.sh              the C++ files changed against main (committed or not)
#   tools/check-format.sh --all        every C++ file of the repository
#   tools/check-format.sh --base REF   the files changed against REF
#   tools/check-format.sh FILE...      these files
# Exit code 0 when every file is formatted, 1 when some are not (each is named with the lines
# clang-format would change), 2 when clang-format-14 is missing.
# To format instead of check: clang-format-14 -i FILE... (the whole tree:
#   git ls-files '*.cpp' '*.h' | xargs clang-format-14 -i).
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$clang_format" >/dev/null; then
    echo "check-format: $clang_format not found (Debian: apt-get install clang-format-14)" >&2
    exit 2
fi

base=main
files=()
mode=changed
while [ $# -gt 0 ]; do
    case "$1" in
        --all) mode=all ;;
        --base) base=${2:?--base needs a git revision}; shift ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "check-format: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) mode=files; files+=("$1") ;;
    esac
    shift
done

is_cpp() { case "$1" in *.cpp|*.h|*.hpp|*.cc) return 0 ;; *) return 1 ;; esac; }
case "$mode" in
    all) mapfile -t files < <(git ls-files -- '*.cpp' '*.h' '*.hpp' '*.cc') ;;
    changed)
        if ! git rev-parse --verify --quiet "$base" >/dev/null; then
            echo "check-format: no revision '$base' to compare with; use --all or --base REF" >&2
            exit 2
        fi
        mapfile -t changed < <({ git diff --name-only --diff-filter=ACMR "$(git merge-base "$base" HEAD)"; \
                                 git ls-files --others --exclude-standard; } | sort -u)
        files=()
        for f in "${changed[@]}"; do is_cpp "$f" && [ -f "$f" ] && files+=("$f"); done ;;
esac

if [ ${#files[@]} -eq 0 ]; then
    echo "check-format: no C++ files to check"
    exit 0
fi
bad=0
said=$(mktemp)
trap 'rm -f "$said"' EXIT
for f in "${files[@]}"; do
    if ! "$clang_format" --dry-run -Werror "$f" 2>"$said"; then
        bad=$((bad + 1))
        # The first places it would change, as FILE:LINE:COLUMN.
        grep -m 3 -E '^[^ ].*:[0-9]+:[0-9]+: error' "$said" |
            sed 's/: error: code should be clang-formatted.*/: not formatted/' >&2
    fi
done
if [ "$bad" -gt 0 ]; then
    echo "check-format: $bad of ${#files[@]} files are not formatted as .clang-format says;" \
         "format them with: $clang_format -i FILE..." >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
