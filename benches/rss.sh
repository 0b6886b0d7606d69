#!/usr/bin/env bash
# Peak RSS of `tokentime summary` where memory could grow with the input: `--bucket 1m` on a
# week at one request a minute (also with `--by id`), `--by model` on 1 MB model names, and
# `--bucket 1m` on logs of 200 and 800 MB of one request a minute (the same peak when memory
# does not grow with the log); with --5g also on 5 GB (2.6 million windows; 5 GB of disk and
# minutes of generation and reading).
#
#   benches/rss.sh [--dir DIR] [--5g]
#
# The logs are generated once by benches/rsslog.py into DIR (default
# ${TMPDIR:-/tmp}/tokentime-rss). Peak RSS is GNU time's maximum resident set size
# (`apt-get install time` for /usr/bin/time).
set -euo pipefail
dir="${TMPDIR:-/tmp}/tokentime-rss"
five=no
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir="$2"; shift 2 ;;
        --5g) five=yes; shift ;;
        *) echo "usage: benches/rss.sh [--dir DIR] [--5g]" >&2; exit 2 ;;
    esac
done
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
if [ "$five" = yes ]; then m5g=$(gen m5g.jsonl minutes 5000000000); fi
rss() { # label, tokentime arguments...
    local label="$1"; shift
    local kb
    /usr/bin/time -o "$dir/time.out" -f '%M' "$tt" "$@" > /dev/null 2>/dev/null || true
    kb=$(tail -1 "$dir/time.out")
    printf '%-48s %8.1f MiB\n' "$label" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')"
}
for t in 1 2; do
    rss "--bucket 1m, week (--threads $t)" summary --threads "$t" --bucket 1m "$week"
    rss "--bucket 1m --by id, week (--threads $t)" summary --threads "$t" --bucket 1m --by id "$week"
    rss "--by model, 1 MB keys (--threads $t)" summary --threads "$t" --by model "$big"
    rss "--bucket 1m, 200 MB (--threads $t)" summary --threads "$t" --bucket 1m "$m200"
    rss "--bucket 1m, 800 MB (--threads $t)" summary --threads "$t" --bucket 1m "$m800"
    if [ "$five" = yes ]; then
        rss "--bucket 1m, 5 GB (--threads $t)" summary --threads "$t" --bucket 1m "$m5g"
    fi
done
