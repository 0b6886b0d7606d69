#!/usr/bin/env bash
# The Spark recipe (examples/spark/tokentime_spark.py) in Spark local mode (local[2]), checked
# against one `tokentime summary` over the same files:
#   1. generated LiteLLM logs in several files and partitions, --by model, -o json: identical
#      (but TPOT under load, whose in-flight counts are each partition's: compare.py);
#   2. an SLO passed through: the same verdict on stderr and exit status 3;
#   3. past the exact limit (--exact-limit 200 on both sides): counts, min and max equal, and
#      every quantile within the t-digest's error;
#   4. one partition's digest dropped (TOKENTIME_SPARK_DROP_PARTITION): the comparison of 1
#      must then fail, or this test fails;
#   5. Ollama streams (requests over several lines): read by lines, the run is refused (exit 2);
#      with --whole-files, identical;
#   6. --bucket passed through: the windows (JSON lines, and the table) identical to one
#      `summary --bucket` over the files, windows cut between partitions merged;
#   7. -o prometheus: the GenAI histogram lines identical to one run's.
# Installs what is missing: a headless JRE (Debian's openjdk-17-jre-headless, with apt-get) and
# PySpark (from the package index, in a virtual environment under target/).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
started=$(date +%s)

if ! java -version >/dev/null 2>&1; then
    echo "spark test: installing openjdk-17-jre-headless" >&2
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless
fi
venv=$root/target/spark-venv
if ! "$venv/bin/python" -c 'import pyspark' 2>/dev/null; then
    echo "spark test: installing PySpark into $venv" >&2
    python3 -m venv "$venv"
    "$venv/bin/pip" install --disable-pip-version-check -q 'pyspark==4.0.1'
fi

cargo build --quiet --bin tokentime --example genlog
tt=$root/target/debug/tokentime
work=$root/target/spark-test
rm -rf "$work" && mkdir -p "$work/logs" "$work/ollama"
for day in 1 2 3 4; do
    "$root/target/debug/examples/genlog" --format litellm --lines 1500 --seed "$day" > "$work/logs/day$day.jsonl"
done
# 100 Ollama streams of 6 lines, in two files.
for f in a b; do
    for _ in $(seq 50); do cat testdata/samples/ollama_stream.jsonl; done > "$work/ollama/$f.jsonl"
done

export PYSPARK_PYTHON=$venv/bin/python SPARK_LOCAL_IP=127.0.0.1
# spark NAME ARGS...: runs the recipe, its stdout to $work/NAME.out, its stderr (Spark's log
# and tokentime's messages) to $work/NAME.err; returns the recipe's exit status.
spark() {
    local name=$1
    shift
    PYSPARK_SUBMIT_ARGS="--master local[2] --conf spark.ui.enabled=false --conf spark.ui.showConsoleProgress=false pyspark-shell" \
        "$venv/bin/python" examples/spark/tokentime_spark.py --tokentime "$tt" "$@" \
        > "$work/$name.out" 2> "$work/$name.err"
}
fail() { echo "spark test: FAILED: $*" >&2; exit 1; }

# 1. Exact digests, an SLO passed through: identical JSON summaries (8 partitions over 4
#    files), exit status 3 and the same verdict on stderr.
s=0 o=0
spark exact --partitions 8 --by model --slo 'ttft:p99<=1ms' -o json --digests-out "$work/digests.jsonl" "$work/logs" || s=$?
"$tt" summary --by model --slo 'ttft:p99<=1ms' -o json "$work"/logs/day*.jsonl > "$work/one.json" 2> "$work/one.err" || o=$?
[ "$s" = 3 ] && [ "$o" = 3 ] || fail "SLO exit status: spark $s, one run $o; $(tail -5 "$work/exact.err")"
parts=$(wc -l < "$work/digests.jsonl")
[ "$parts" -ge 8 ] || fail "expected at least 8 partitions, got $parts"
echo "spark test: $parts partitions over 4 files"
python3 examples/spark/compare.py exact "$work/exact.out" "$work/one.json" \
    || fail "merged summary differs from one run"
grep -o "tokentime: SLO.*" "$work/exact.err" | cmp -s - "$work/one.err" \
    || fail "SLO verdicts differ: $(grep '^tokentime' "$work/exact.err")"
echo "spark test: SLO passed through: exit 3 and the same verdict ($(cat "$work/one.err"))"

# 2. Past the exact limit: t-digests merged, within their error.
spark tdigest --partitions 8 --by model --exact-limit 200 -o json "$work/logs" \
    || fail "$(tail -5 "$work/tdigest.err")"
"$tt" summary --by model --exact-limit 200 -o json "$work"/logs/day*.jsonl > "$work/one-td.json"
python3 examples/spark/compare.py tdigest "$work/tdigest.out" "$work/one-td.json" \
    || fail "t-digest quantiles beyond their error"

# 3. A partition's digest dropped: the comparison of 1 must fail.
TOKENTIME_SPARK_DROP_PARTITION=3 spark dropped --partitions 8 --by model --slo 'ttft:p99<=1ms' -o json "$work/logs" || true
if python3 examples/spark/compare.py exact "$work/dropped.out" "$work/one.json" 2>/dev/null; then
    fail "a dropped partition went unnoticed"
fi
echo "spark test: one partition's digest dropped: the comparison fails, as it must"

# 4. Requests over several lines: refused when read by lines, identical read whole.
s=0
spark cut --partitions 6 -o json "$work/ollama" || s=$?
[ "$s" = 2 ] || fail "a cut multi-line request: exit $s, not 2"
grep -q -- '--whole-files' "$work/cut.err" || fail "no --whole-files hint: $(tail -5 "$work/cut.err")"
grep '^tokentime-spark' "$work/cut.err" | tail -1
spark whole --whole-files --partitions 2 -o json "$work/ollama" || fail "$(tail -5 "$work/whole.err")"
"$tt" summary -o json "$work"/ollama/*.jsonl > "$work/ollama-one.json"
cmp -s "$work/whole.out" "$work/ollama-one.json" || fail "--whole-files summary differs from one run"
echo "spark test: Ollama streams: refused read by lines, identical with --whole-files"

# 5. Windows of log time: each partition's digest holds its windows; the merge prints the
#    windows of one run (10 s windows: a window is cut between partitions).
spark bucket --partitions 8 --by model --bucket 10s -o json --digests-out "$work/bucket-digests.jsonl" "$work/logs" \
    || fail "$(tail -5 "$work/bucket.err")"
"$tt" summary --by model --bucket 10s -o json "$work"/logs/day*.jsonl > "$work/one-bucket.jsonl"
cmp -s "$work/bucket.out" "$work/one-bucket.jsonl" || fail "--bucket windows differ from one run"
split=$(python3 -c '
import collections, json, sys
n = collections.Counter(w["start_ns"] for l in open(sys.argv[1]) for w in json.loads(l)["windows"])
print(sum(1 for c in n.values() if c > 1))' "$work/bucket-digests.jsonl")
[ "$split" -gt 0 ] || fail "no window was cut between partitions"
spark bucket-table --partitions 8 --by model --bucket 10s "$work/logs" || fail "$(tail -5 "$work/bucket-table.err")"
"$tt" summary --by model --bucket 10s "$work"/logs/day*.jsonl > "$work/one-bucket.txt"
cmp -s "$work/bucket-table.out" "$work/one-bucket.txt" || fail "--bucket table differs from one run"
echo "spark test: --bucket 10s: $(grep -c '"key":{}' "$work/one-bucket.jsonl") windows ($split cut between partitions) identical to one run's, JSON lines and table"

# 6. The GenAI histograms: merged from the digests' bucket counts, identical to one run's.
spark prom --partitions 8 --by model -o prometheus "$work/logs" || fail "$(tail -5 "$work/prom.err")"
"$tt" summary --by model -o prometheus "$work"/logs/day*.jsonl > "$work/one.prom"
grep gen_ai_ "$work/one.prom" > "$work/one-genai.prom"
[ "$(wc -l < "$work/one-genai.prom")" -gt 100 ] || fail "few gen_ai lines: $(head -3 "$work/one.prom")"
grep gen_ai_ "$work/prom.out" | cmp -s - "$work/one-genai.prom" || fail "GenAI histograms differ from one run's"
echo "spark test: -o prometheus: $(wc -l < "$work/one-genai.prom") gen_ai_* lines identical to one run's"

echo "spark test: passed in $(($(date +%s) - started)) s"
