#!/usr/bin/env bash
# Peak RSS of `tokentime summary` where memory could grow with the input: `--bucket 1m` on a
# week at one request a minute, `--by model` on 1 MB model names, and `--bucket 1m` on logs of
# 200 and 800 MB (the same peak when memory does not grow with the log).
#
#   benches/rss.sh [--dir DIR]
#
# The logs are generated once by benches/rsslog.py into DIR (default
# ${TMPDIR:-/tmp}/tokentime-rss). Peak RSS is GNU time's maximum resident set size
# (`apt-get install time` for /usr/bin/time).
set -euo pipefail
dir="${TMPDIR:-/tmp}/tokentime-rss"
if [ "${1:-}" = "--dir" ]; then dir="$2"; fi
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release --quiet --bin tokentime
tt="$root/target/release/tokentime"
mkdir -p "$dir"
gen() { # name, rsslog.py arguments...
    local f="$dir/$1"; shift
    [ -s "$f" ] || python3 benches/rsslog.py "$@" > "$f"
    echo "$f"
}
week=$(gen week.jsonl week)
big=$(gen bigkeys.jsonl bigkeys 100 1048576)
m200=$(gen m200.jsonl minutes 200000000)
m800=$(gen m800.jsonl minutes 800000000)
rss() { # label, tokentime arguments...
    local label="$1"; shift
    local kb
    kb=$( { /usr/bin/time -f '%M' "$tt" "$@" > /dev/null 2>/dev/null; } 2>&1 | tail -1)
    printf '%-48s %8.1f MiB\n' "$label" "$(echo "$kb / 1024" | bc -l)"
}
for t in 1 2; do
    rss "--bucket 1m, week (--threads $t)" summary --threads "$t" --bucket 1m "$week"
    rss "--bucket 1m --by id, week (--threads $t)" summary --threads "$t" --bucket 1m --by id "$week"
    rss "--by model, 1 MB keys (--threads $t)" summary --threads "$t" --by model "$big"
    rss "--bucket 1m, 200 MB (--threads $t)" summary --threads "$t" --bucket 1m "$m200"
    rss "--bucket 1m, 800 MB (--threads $t)" summary --threads "$t" --bucket 1m "$m800"
done
