"""tokentime under Spark: one map step per partition, one reduce.

Each partition's lines are piped (rdd.pipe) into `tokentime summary --save-digest -`, which
writes that partition's digest document (one line) to its standard output; the driver collects
the digests and `tokentime merge` reduces them into the summary one run over every input would
have printed.

    spark-submit examples/spark/tokentime_spark.py --by model --slo 'ttft:p99<=2s' \
        's3a://logs/2026-01-*/litellm.jsonl.gz'

With --bucket 1m each digest holds its partition's windows of log time, and the merge prints
the windows one `tokentime summary --bucket 1m` over every input would have printed (a minute
cut between partitions merged). With -o prometheus the merge prints the OpenTelemetry GenAI
histograms too: their bucket counts are in the digests.

or with PySpark from the package index, `python tokentime_spark.py ...` (the master then comes
from PYSPARK_SUBMIT_ARGS, e.g. "--master local[4] pyspark-shell").

The tokentime binary must be on every executor (the same path, or --tokentime PATH; with
spark-submit --files it lands in each task's working directory as ./tokentime).

Spark's text reader cuts files into partitions at line boundaries, so a request written over
several lines (Ollama streams, llama.cpp's legacy JSON log, lines split by Docker) can be cut
across two partitions. This job refuses such a run (exit 2, naming the flag) when a partition
ends inside a multi-line request or starts inside one; --whole-files reads each file whole
(SparkContext.wholeTextFiles: a file is one record, so one partition, and must fit in memory).

Exit status: merge's (0, 2, 3 when an SLO is broken); 2 for a refused run.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys

from pyspark.sql import SparkSession


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="tokentime summary per Spark partition, digests merged on the driver"
    )
    p.add_argument("inputs", nargs="+", help="log files, folders or globs Spark reads")
    p.add_argument("--tokentime", default="tokentime", help="the binary on the executors")
    p.add_argument(
        "--partitions", type=int, default=None, help="minimum partitions to read into"
    )
    p.add_argument(
        "--whole-files",
        action="store_true",
        help="one record per file (wholeTextFiles): for logs with requests over several lines",
    )
    # Map-side flags: how requests are read and grouped.
    p.add_argument("--by", action="append", default=[], help="summary --by (repeatable)")
    p.add_argument("--format", help="summary --format")
    p.add_argument("--exact-limit", help="summary --exact-limit")
    p.add_argument("--goodput", help="summary --goodput")
    p.add_argument(
        "--bucket",
        help="summary --bucket: windows of log time, saved in each digest; the merge prints them",
    )
    p.add_argument(
        "--summary-arg", action="append", default=[], help="any other summary flag (repeatable)"
    )
    # Reduce-side flags: how the merged summary is reported.
    p.add_argument("--slo", action="append", default=[], help="merge --slo (repeatable)")
    p.add_argument("-o", "--output", help="merge --output")
    p.add_argument("--quantiles", help="merge --quantiles")
    p.add_argument(
        "--merge-arg", action="append", default=[], help="any other merge flag (repeatable)"
    )
    p.add_argument("--digests-out", help="also keep the digests, one per line, in this file")
    p.add_argument(
        "--out",
        help="write the merged summary to this file, not standard output (spark-submit mixes "
        "a Python driver's standard error into its standard output)",
    )
    return p.parse_args(argv)


def summary_command(a):
    cmd = [a.tokentime, "summary", "--save-digest", "-"]
    for k in a.by:
        cmd += ["--by", k]
    for flag, v in (("--format", a.format), ("--exact-limit", a.exact_limit),
                    ("--goodput", a.goodput), ("--bucket", a.bucket)):
        if v is not None:
            cmd += [flag, v]
    return cmd + a.summary_arg


def merge_command(a):
    cmd = [a.tokentime, "merge"]
    for s in a.slo:
        cmd += ["--slo", s]
    for flag, v in (("--output", a.output), ("--quantiles", a.quantiles),
                    ("--bucket", a.bucket)):
        if v is not None:
            cmd += [flag, v]
    return cmd + a.merge_arg + ["-"]


def cut_requests(digests):
    """Partitions whose input ended inside a multi-line request (joins.unfinished) or began
    inside one (joins.orphaned): the sign of a request cut between partitions."""
    cut = []
    for i, d in enumerate(digests):
        joins = json.loads(d)["coverage"]["joins"]
        if joins["unfinished"] or joins["orphaned"]:
            cut.append((i, joins["unfinished"], joins["orphaned"]))
    return cut


def main(argv):
    a = parse_args(argv)
    spark = SparkSession.builder.appName("tokentime").getOrCreate()
    sc = spark.sparkContext
    path = ",".join(a.inputs)
    if a.whole_files:
        # pipe writes a newline after each element: the file's own last one is dropped.
        lines = sc.wholeTextFiles(path, a.partitions).values().map(
            lambda text: text[:-1] if text.endswith("\n") else text
        )
    else:
        lines = sc.textFile(path, a.partitions)
    # rdd.pipe runs the command once per partition, the partition's elements on its standard
    # input (one per line), and yields its output lines: here one digest document each.
    digests = lines.pipe(shlex.join(summary_command(a)), env=dict(os.environ))
    drop = os.environ.get("TOKENTIME_SPARK_DROP_PARTITION")
    if drop is not None:
        # For the test that proves a lost partition shows: this partition's digest dropped.
        digests = digests.mapPartitionsWithIndex(
            lambda i, it: iter(()) if i == int(drop) else it
        )
    collected = digests.collect()
    spark.stop()
    if a.digests_out:
        with open(a.digests_out, "w") as f:
            f.writelines(d + "\n" for d in collected)
    cut = cut_requests(collected)
    if cut and not a.whole_files:
        for i, unfinished, orphaned in cut:
            print(
                f"tokentime-spark: partition {i}: {unfinished} multi-line requests unfinished "
                f"at its end, {orphaned} orphaned at its start",
                file=sys.stderr,
            )
        print(
            "tokentime-spark: requests written over several lines were cut between "
            "partitions (Spark reads files in line-aligned splits); their metrics would be "
            "wrong or missing: run again with --whole-files",
            file=sys.stderr,
        )
        return 2
    stdin = "".join(d + "\n" for d in collected)
    if a.out:
        with open(a.out, "w") as out:
            return subprocess.run(merge_command(a), input=stdin, text=True, stdout=out).returncode
    return subprocess.run(merge_command(a), input=stdin, text=True).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
