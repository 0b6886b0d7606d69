#!/usr/bin/env bash
# Builds the seed corpora (fuzz/corpus/TARGET, git-ignored) from every testdata folder: each
# line, each small file whole, the head of each JSON array document, and the timestamps,
# durations and numbers found in them.
# Usage: fuzz/seed.sh, then RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET -- -max_len=4096 (see README).
set -euo pipefail
cd "$(dirname "$0")"
testdata=../testdata
# Small files whole and line by line; the lab and real captures (large) by their first lines.
files=$(find "$testdata" -name '*.jsonl' -not -path '*/lab/*' -not -path '*/realdata/*' | sort)
lab=$(find "$testdata/lab" "$testdata/realdata" -name '*.jsonl' | sort)
mkdir -p corpus/lines_and_formats corpus/enrich_splice corpus/units corpus/document_detection \
    corpus/instants corpus/inferred corpus/document_walker corpus/scanner_guesses
n=0
seed() { # TARGET HEADER-BYTES (printf format) [NAME-SUFFIX] < data
    local f="corpus/$1/seed-$n${3-}"
    # shellcheck disable=SC2059 # the header is a printf format on purpose
    { printf "$2"; cat; } >"$f"
}
for f in $files; do
    if [ "$(wc -c <"$f")" -le 4000 ]; then
        n=$((n + 1))
        seed lines_and_formats '\x80\x00\x00' <"$f"
        seed enrich_splice '\x04' <"$f"
        seed document_detection '\x1c' <"$f"
        seed document_walker '\x00' <"$f"
    fi
done
for f in $files $lab; do
    while IFS= read -r line; do
        [ "${#line}" -le 4000 ] || continue
        n=$((n + 1))
        printf '%s\n' "$line" | seed lines_and_formats '\x80\x00\x00'
        printf '%s\n' "$line" | seed enrich_splice '\x04'
        printf '%s\r\n' "$line" | seed enrich_splice '\x06' -crlf
        # scanner_guesses: the line after itself, and after the line before it.
        printf '%s\n%s' "$line" "$line" | seed scanner_guesses ''
        [ -z "${before-}" ] || printf '%s\n%s' "$before" "$line" | seed scanner_guesses '' -pair
        before=$line
    done < <(awk 'NR <= 20' "$f")
    unset before
done
# The real captures are JSON documents (no .jsonl): the head of each array document (LLMPerf's
# pretty-printed individual_responses.json), whose records are not lines.
while IFS= read -r f; do
    [ "$(head -c 1 "$f")" = "[" ] || continue
    n=$((n + 1))
    head -c 4000 "$f" | awk 'NR <= 40' | seed lines_and_formats '\x80\x00\x00' -array
    head -c 4000 "$f" | awk 'NR <= 40' | seed enrich_splice '\x04' -array
    head -c 4000 "$f" | awk 'NR <= 40' | seed document_walker '\x00' -array
done < <(find "$testdata" -name '*.json' | sort)
# Whole small JSON documents (arrays, pretty-printed objects) for the detection.
while IFS= read -r f; do
    [ "$(wc -c <"$f")" -le 4000 ] || continue
    n=$((n + 1))
    seed document_detection '\x1c' <"$f"
done < <(find "$testdata" -name '*.json' | sort)
while IFS= read -r v; do
    n=$((n + 1))
    printf '%s' "$v" >"corpus/units/seed-$n"
    # The instants target reads its first 21 bytes as an instant and how to write it.
    printf '\x01\x10\x32\x54\x76\x98\xba\xdc\x0e\x03\x3c\x00\x85\x01\x02\x03\x04\x05\x06\x07\x08%s' "$v" >"corpus/instants/seed-$n"
done < <(
    # shellcheck disable=SC2086 # lists of paths without blanks
    cat $files $lab |
        grep -oE '"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9:.]+([Zz]|[+-][0-9]{2}:[0-9]{2})"|"[0-9.]+(ns|µs|μs|us|ms|s)"|-?[0-9]+\.[0-9]+([eE][-+]?[0-9]+)?|"[0-9]{10,19}"' |
        sort -u | awk 'NR <= 400'
)
# inferred: the first lines of each file together (a sample), and the head of each document.
for f in $files $lab; do
    n=$((n + 1))
    head -c 4000 "$f" | awk 'NR <= 20' >"corpus/inferred/seed-$n"
done
while IFS= read -r f; do
    n=$((n + 1))
    head -c 4000 "$f" | tr -d '\n' >"corpus/inferred/seed-$n-doc"
done < <(find "$testdata" -name '*.json' | sort)
for t in lines_and_formats enrich_splice units document_detection instants inferred document_walker scanner_guesses; do
    echo "$t: $(ls corpus/$t | wc -l) seeds"
done
