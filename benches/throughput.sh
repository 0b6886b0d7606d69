#!/usr/bin/env bash
# End-to-end throughput of tokentime, side by side with `wc -l` (and jq/jaq when installed) on
# the same bytes, in one run.
#
#   benches/throughput.sh [--runs N] [--size 1G] [--dir DIR] [--rss-4g] [--no-jq] [--no-peers]
#
# Generates (once, then reuses) a LiteLLM log of --size bytes with examples/genlog.rs, and a
# 100 MB file of the real lab LiteLLM log (testdata/lab) repeated. Besides tokentime's own
# commands it times examples/parse_floor.rs: reading the file and checking each line as JSON
# while picking the fields the formats read, nothing else (the floor under summary's time on
# one thread). For each command it reports the median wall time of --runs runs (default 3),
# MB/s (10^6 bytes per second of input), and the ratio of that to `wc -l`'s MB/s on the same
# file in the same run (and the median CPU time, all threads, to show what a busy machine did
# to the wall time); then the peak RSS of `tokentime summary` (GNU time's maximum resident set
# size). With --rss-4g it also generates a 4 GiB log, measures summary's peak RSS on it, and
# deletes it.
#
# Peers: the same summary job (p50/p90/p99 of TTFT per `cache_hit`) in DuckDB (`read_json` with
# the three columns typed, and `read_json_auto`) and Polars (`scan_ndjson` with a schema), at 1
# and 2 threads, by benches/peers.py. They are installed with pip into a virtual environment
# under target/bench-venv when missing (--no-peers skips them). Their rows give the whole
# process's time (Python start-up and import included), and in brackets the query's own time
# inside the process.
#
# OTLP against LiteLLM: it also generates (once) an OTLP log of --size bytes (vLLM
# `llm_request` spans as OTLP/JSON trace lines, one span a line), and times `tokentime summary
# --threads 1` on it and on the generated LiteLLM log. Each row gives the requests read
# (`summary -o json`'s coverage.requests), the median wall and CPU time, and the CPU time per
# request in microseconds; the line under the table gives OTLP's time per request over
# LiteLLM's (a line of OTLP is cut into its records, each written out, the places of the
# values its format reads noted as it is written).
# The times include what a run costs whatever its size (start-up, the summary's analysis):
# with a small --size the ratio says little; docs/performance.md counts instructions per
# request without them.
#
# The rows the ratios are taken from (the floor, summary and enrich at 1 and 2 threads, DuckDB
# typed at 1 and 2 threads; OTLP and LiteLLM per request) are timed in rounds, one run of each
# a round, so that a machine whose speed drifts over minutes (a shared VM) slows them alike;
# the other rows one after the other. Among them, two processes of the floor at once: the
# speed they reach together over one floor's is what a second core gave in this run, the most
# two threads can get (a shared VM's second core is at times busy with another guest).
#
# The files are read from the page cache (an untimed read of the file before each timed run
# warms it: a system that reclaims the pages of a file while it is not read leaves holes in
# it, which a run would wait for the disk to fill, some runs more than others), so this
# measures the program, not the disk. `< FILE` rows give tokentime the file as standard input (a regular
# file: read in parallel like a FILE argument); `cat FILE |` rows give it a pipe (one thread,
# as for a live `tail -F`).
set -euo pipefail

runs=3
size=1G
dir="${TMPDIR:-/tmp}/tokentime-bench"
rss4g=0
jq_too=1
peers=1
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --dir) dir="$2"; shift 2 ;;
        --rss-4g) rss4g=1; shift ;;
        --no-jq) jq_too=0; shift ;;
        --no-peers) peers=0; shift ;;
        *) echo "usage: $0 [--runs N] [--size 1G] [--dir DIR] [--rss-4g] [--no-jq] [--no-peers]" >&2; exit 2 ;;
    esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release --quiet --bin tokentime --example genlog --example parse_floor
tt="$root/target/release/tokentime"
floor="$root/target/release/examples/parse_floor"
genlog="$root/target/release/examples/genlog"
mkdir -p "$dir"

gen="$dir/litellm-$size-seed1.jsonl"
if [ ! -s "$gen" ]; then
    echo "generating $gen ..." >&2
    "$genlog" --format litellm --bytes "$size" --seed 1 > "$gen.tmp"
    mv "$gen.tmp" "$gen"
fi
otlp="$dir/otlp-$size-seed1.jsonl"
if [ ! -s "$otlp" ]; then
    echo "generating $otlp ..." >&2
    "$genlog" --format otlp --bytes "$size" --seed 1 > "$otlp.tmp"
    mv "$otlp.tmp" "$otlp"
fi
lab="$dir/lab-litellm-100MB.jsonl"
if [ ! -s "$lab" ]; then
    : > "$lab.tmp"
    while [ "$(stat -c %s "$lab.tmp")" -lt 100000000 ]; do
        cat testdata/lab/litellm.jsonl >> "$lab.tmp"
    done
    mv "$lab.tmp" "$lab"
fi

jq_job='reduce (inputs | fromjson? | select(type == "object" and .call_type != null)) as $r
  ({n: 0, ttft: 0, e2e: 0}; .n += 1 | .ttft += ($r.completionStartTime - $r.startTime)
   | .e2e += ($r.endTime - $r.startTime))'
tools=()
if [ "$jq_too" = 1 ]; then
    command -v jq > /dev/null && tools+=(jq)
    command -v jaq > /dev/null && tools+=(jaq)
fi

venv="$root/target/bench-venv"
if [ "$peers" = 1 ] && ! "$venv/bin/python" -c 'import duckdb, polars' 2> /dev/null; then
    echo "installing duckdb and polars into $venv ..." >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet duckdb polars
fi
peer_versions() {
    "$venv/bin/python" -c 'import duckdb, polars; print(f"DuckDB {duckdb.__version__}, Polars {polars.__version__}")'
}

# The files the timed commands read (set by the caller), read once, untimed, before each
# timed run.
warming=()
warm() {
    [ ${#warming[@]} -eq 0 ] || cat "${warming[@]}" > /dev/null
}

# The median of the numbers given.
med() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Medians over `runs` runs of the shell command $1 (its output and stderr to /dev/null: a
# warning of the command's must not mix with what `time` writes): wall seconds and CPU
# seconds (user + system, all threads). On a busy machine wall time exceeds CPU time for a
# one-thread command: it waited for a core.
median_time() {
    local cmd="$1" walls=() cpus=() out
    for _ in $(seq "$runs"); do
        warm
        out=$( { TIMEFORMAT='%R %U %S'; time bash -c "$cmd" > /dev/null 2>&1; } 2>&1 )
        walls+=("$(echo "$out" | awk '{ print $1 }')")
        cpus+=("$(echo "$out" | awk '{ print $2 + $3 }')")
    done
    echo "$(med "${walls[@]}") $(med "${cpus[@]}")"
}

# The rows the ratios are taken from, timed in rounds: each round runs each of them once, in
# turn, and each gets the medians of its `runs` runs. A machine whose speed drifts over a few
# minutes (a shared VM) then slows each of them alike, and their ratios keep. Sets `took[ID]`
# to "wall cpu" and, for a peer, `inside[ID]` to its query's own time (the `inside SECONDS`
# benches/peers.py prints on stderr), beside what they hold already. Arguments: ID and
# command pairs; a command `peer|ENGINE|THREADS|FILE` is benches/peers.py with those arguments.
interleaved() {
    local -A walls=() cpus=() ins=()
    local ids=() cmds=() args=() i out err
    err=$(mktemp)
    while [ $# -gt 0 ]; do ids+=("$1"); cmds+=("$2"); shift 2; done
    for _ in $(seq "$runs"); do
        for i in "${!ids[@]}"; do
            warm
            case "${cmds[$i]}" in
                'peer|'*)
                    IFS='|' read -r -a args <<< "${cmds[$i]#peer|}"
                    out=$( { TIMEFORMAT='%R %U %S'; time "$venv/bin/python" "$root/benches/peers.py" "${args[@]}" > /dev/null 2> "$err"; } 2>&1 )
                    ins[${ids[$i]}]+="$(awk '/^inside/ { print $2 }' "$err") " ;;
                *) out=$( { TIMEFORMAT='%R %U %S'; time bash -c "${cmds[$i]}" > /dev/null 2>&1; } 2>&1 ) ;;
            esac
            walls[${ids[$i]}]+="$(echo "$out" | awk '{ print $1 }') "
            cpus[${ids[$i]}]+="$(echo "$out" | awk '{ print $2 + $3 }') "
        done
    done
    rm -f "$err"
    for i in "${ids[@]}"; do
        # shellcheck disable=SC2086 # one word a run
        took[$i]="$(med ${walls[$i]}) $(med ${cpus[$i]})"
        # shellcheck disable=SC2086
        [ -n "${ins[$i]:-}" ] && inside[$i]="$(med ${ins[$i]})"
    done
    return 0
}

# Peak RSS (MiB) of a tokentime run, by GNU time; "-" when GNU time is missing.
peak_rss() {
    if [ -x /usr/bin/time ] && /usr/bin/time -f %M true 2> /dev/null; then
        local out
        out=$(mktemp)
        /usr/bin/time -f %M -o "$out" "$@" > /dev/null 2>&1
        awk '{ printf "%.1f", $1 / 1024 }' "$out"
        rm -f "$out"
    else
        echo "-"
    fi
}

# The ratios the performance targets are stated in, from the rows of the table just printed
# (`took`: "wall cpu" by row id).
ratios() {
    # Row $2's over row $1's time (field $3: 1 wall, 2 CPU), times $4 (default 1).
    r() { awk -v a="${took[$1]:-}" -v b="${took[$2]:-}" -v i="$3" -v k="${4:-1}" 'BEGIN {
        split(a, x, " "); split(b, y, " ")
        if (x[i] > 0 && y[i] > 0) printf "%.2f", k * y[i] / x[i]; else printf "-" }'; }
    local peer_ratios=""
    [ "$peers" = 1 ] && peer_ratios="summary speed / DuckDB typed (whole process) $(r s1 duckdb-typed-1 1)x at 1 thread, $(r s2 duckdb-typed-2 1)x at 2; "
    echo
    echo "Ratios in this run: ${peer_ratios}CPU / floor's: summary --threads 1 $(r floor s1 2)x," \
        "enrich --threads 1 $(r floor e1 2)x; 2 threads / 1 thread speed: summary $(r s2 s1 1)x," \
        "enrich $(r e2 e1 1)x (two floors at once ran at $(r floor2 floor 1 2)x one floor's speed: what two threads" \
        "could get of this machine in this run)."
}


table() {
    local file="$1" label="$2" bytes wc_t
    bytes=$(stat -c %s "$file")
    warming=("$file")
    echo
    echo "### $label: $(basename "$file") ($(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1e6 }') MB, $(wc -l < "$file") lines)"
    echo
    echo "| command | wall s | CPU s | MB/s | / wc -l |"
    echo "|---|---:|---:|---:|---:|"
    wc_t=$(median_time "wc -l '$file'")
    local timed=(floor "'$floor' '$file'" s1 "'$tt' summary --threads 1 '$file'"
        s2 "'$tt' summary --threads 2 '$file'" e1 "'$tt' --threads 1 '$file'"
        e2 "'$tt' --threads 2 '$file'" floor2 "'$floor' '$file' & '$floor' '$file'; wait")
    [ "$peers" = 1 ] && timed+=(duckdb-typed-1 "peer|duckdb-typed|1|$file" duckdb-typed-2 "peer|duckdb-typed|2|$file")
    declare -gA took=() inside=()
    interleaved "${timed[@]}"
    row() {
        local name="$1" cmd="$2" t
        if [ -n "${4:-}" ] && [ -n "${took[$4]:-}" ]; then
            t=${took[$4]}
        else
            t=${3:-$(median_time "$cmd")}
            [ -n "${4:-}" ] && took[$4]="$t"
        fi
        awk -v n="$name" -v t="$t" -v b="$bytes" -v w="${wc_t%% *}" 'BEGIN {
            split(t, x, " ")
            printf "| %s | %.3f | %.3f | %.0f | %.3f |\n", n, x[1], x[2], b / x[1] / 1e6, w / x[1] }'
    }
    row '`wc -l FILE`' "wc -l '$file'" "$wc_t"
    row 'floor: JSON read alone, one thread (`examples/parse_floor.rs`)' "'$floor' '$file'" "" floor
    row 'two floors at once (two processes, each the whole file; MB/s counts one file)' "" "" floor2
    row '`tokentime summary --threads 1 FILE`' "'$tt' summary --threads 1 '$file'" "" s1
    row '`tokentime summary --threads 2 FILE`' "'$tt' summary --threads 2 '$file'" "" s2
    row '`tokentime --threads 1 FILE > /dev/null`' "'$tt' --threads 1 '$file'" "" e1
    row '`tokentime --threads 2 FILE > /dev/null`' "'$tt' --threads 2 '$file'" "" e2
    row '`tokentime summary < FILE`' "'$tt' summary < '$file'"
    row '`tokentime < FILE > /dev/null`' "'$tt' < '$file'"
    row '`cat FILE \| tokentime summary`' "cat '$file' | '$tt' summary"
    row '`cat FILE \| tokentime > /dev/null`' "cat '$file' | '$tt'"
    if [ "$peers" = 1 ]; then
        local engine threads id
        for engine in duckdb-typed duckdb-auto polars; do
            for threads in 1 2; do
                id="$engine-$threads"
                # The other peers' rows, not in the ratios: their runs in a row.
                [ -n "${took[$id]:-}" ] || interleaved "$id" "peer|$engine|$threads|$file"
                row "$engine, $threads thread(s) (query alone: ${inside[$id]} s)" "" "" "$id"
            done
        done
    fi
    for tool in "${tools[@]}"; do
        row "\`$tool -nR 'reduce ...'\` (summary job)" "$tool -nR '$jq_job' '$file'"
    done
    ratios
    echo
    echo "Peak RSS of \`tokentime summary\`: $(peak_rss "$tt" summary --threads 1 "$file") MiB with --threads 1, $(peak_rss "$tt" summary "$file") MiB with the default threads."
    echo "With \`--by id\` (a group per request, bounded by --max-groups 1000): $(peak_rss "$tt" summary --by id --threads 1 "$file") MiB with --threads 1, $(peak_rss "$tt" summary --by id "$file") MiB with the default threads."
}

echo "## tokentime throughput"
echo
echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), $(uname -r);" \
    "median of $runs runs; tokentime $("$tt" --version | cut -d' ' -f2), $(wc --version | head -1)${tools[*]:+, ${tools[*]}}$([ "$peers" = 1 ] && echo ", $(peer_versions)")"
table "$gen" "Generated LiteLLM log"
table "$lab" "Real lab LiteLLM log, repeated"

# The requests `tokentime summary` reads in a file (its JSON's coverage.requests).
requests() {
    "$tt" summary -o json "$1" | tr -d ' \n' | grep -o '"coverage":{.*' \
        | grep -o '"requests":[0-9]*' | head -1 | cut -d: -f2
}

# Time per request of `tokentime summary --threads 1` on the OTLP log against the LiteLLM log.
per_request() {
    local name file n t
    echo
    echo "### OTLP against LiteLLM, per request: \`tokentime summary --threads 1 FILE\`"
    echo
    echo "| log | requests | wall s | CPU s | CPU µs / request |"
    echo "|---|---:|---:|---:|---:|"
    local per=()
    warming=("$gen" "$otlp")
    declare -gA took=() inside=()
    interleaved LiteLLM "'$tt' summary --threads 1 '$gen'" OTLP "'$tt' summary --threads 1 '$otlp'"
    for name in LiteLLM OTLP; do
        file=$gen
        [ "$name" = OTLP ] && file=$otlp
        n=$(requests "$file")
        t=${took[$name]}
        per+=("$(awk -v t="$t" -v n="$n" 'BEGIN { split(t, x, " "); printf "%.3f", x[2] / n * 1e6 }')")
        awk -v f="$(basename "$file")" -v t="$t" -v n="$n" -v p="${per[-1]}" 'BEGIN {
            split(t, x, " ")
            printf "| %s | %d | %.3f | %.3f | %s |\n", f, n, x[1], x[2], p }'
    done
    echo
    echo "OTLP takes $(awk -v o="${per[1]}" -v l="${per[0]}" 'BEGIN { printf "%.2f", o / l }') times LiteLLM's CPU time per request."
}
per_request

if [ "$rss4g" = 1 ]; then
    big="$dir/litellm-4G-seed2.jsonl"
    "$genlog" --format litellm --bytes 4G --seed 2 > "$big"
    echo
    echo "Peak RSS of \`tokentime summary\` on a 4 GiB generated log: $(peak_rss "$tt" summary --threads 1 "$big") MiB with --threads 1, $(peak_rss "$tt" summary "$big") MiB with the default threads."
    rm -f "$big"
fi
