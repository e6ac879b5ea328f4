"""Runs a command and reports the peak memory of it and every process it forks, summed (Linux: /proc).

    python benchmarks/peak_memory.py [--every S] -- sitegen build --records RECORDS --out SITE --jobs 2

`/usr/bin/time` reports the largest single process. With `--jobs` above 1 a build (and `score --all`) runs in several
processes at once, forked from one that holds the loaded records and sharing its pages until either writes them, so the
sum of their resident sizes overstates what they take and the largest alone understates it. This samples every
`--every` seconds the proportional set size (PSS: each shared page divided among the processes that share it) of the
command's process and all its descendants, and prints the peak of the sum with each process's share at that moment,
as text and as one JSON line. Sampling can miss a peak shorter than the interval. With `--timeline FILE`, every sample
is written there as a JSON line (seconds since the start, each process's PSS and private memory in MiB), to see which
phase sets the peak and which process grows.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def descendants(root: int) -> list[int]:
    """`root` and every process below it, from each process's parent in /proc/PID/stat."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                parent = int(file.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def memory(pid: int) -> tuple[int, int, int] | None:
    """(PSS, RSS, private) of one process in KiB, or None when it is gone."""
    pss = rss = private = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as file:
            for line in file:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith(("Private_Clean:", "Private_Dirty:")):
                    private += int(line.split()[1])
    except OSError:
        return None
    return pss, rss, private


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.2, metavar="S", help="seconds between samples (default: 0.2)")
    parser.add_argument("--timeline", type=argparse.FileType("w"), metavar="FILE",
                        help="write every sample to FILE as a JSON line: seconds, and each process's PSS and private MiB")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to run after --")
    started = time.perf_counter()
    process = subprocess.Popen(command)
    peak_pss, peak_rss, at_peak = 0, 0, {}
    while process.poll() is None:
        sample = {pid: found for pid in descendants(process.pid) if (found := memory(pid)) is not None}
        pss = sum(p for p, _, _ in sample.values())
        peak_rss = max(peak_rss, sum(r for _, r, _ in sample.values()))
        if args.timeline is not None:
            args.timeline.write(json.dumps({"seconds": round(time.perf_counter() - started, 2), "pss_mib": pss // 1024,
                                            "processes": {str(pid): [p // 1024, private // 1024]
                                                          for pid, (p, _, private) in sorted(sample.items())}}) + "\n")
        if pss > peak_pss:
            peak_pss, at_peak = pss, sample
        time.sleep(args.every)
    seconds = time.perf_counter() - started
    print(f"exit {process.returncode}, {seconds:.1f} s; peak summed PSS {peak_pss // 1024} MiB over {len(at_peak)} processes "
          f"(summed RSS at most {peak_rss // 1024} MiB)", file=sys.stderr)
    for pid, (pss, rss, _) in sorted(at_peak.items()):
        print(f"  pid {pid}: PSS {pss // 1024} MiB, RSS {rss // 1024} MiB", file=sys.stderr)
    print(json.dumps({"command": command, "exit": process.returncode, "seconds": round(seconds, 1),
                      "peak_pss_mib": peak_pss // 1024, "peak_rss_sum_mib": peak_rss // 1024,
                      "at_peak": [{"pid": pid, "pss_mib": p // 1024, "rss_mib": r // 1024}
                                  for pid, (p, r, _) in sorted(at_peak.items())]}))
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
