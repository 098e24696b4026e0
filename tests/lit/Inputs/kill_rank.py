#!/usr/bin/env python3
"""Kills one rank of a data-parallel run with SIGKILL and reports how the others ended.

  kill_rank.py --rank R --after-file F -- mpirun ... NAME train ...

Starts the command, waits until F exists (a checkpoint: the run is under way), sends SIGKILL
to the process of that run (a descendant of the command) whose environment says
OMPI_COMM_WORLD_RANK=R, and waits at most 60 s for the
whole run to end. Prints the exit code, whether the run ended within 30 s of the kill, and the
run's output lines that name the rank (mpirun's report).
"""
import argparse
import os
import signal
import subprocess
import sys
import time


def parent(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            # pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def descends_from(pid, ancestor):
    while pid > 1:
        pid = parent(pid)
        if pid == ancestor:
            return True
    return False


def rank_pids(rank, launcher):
    # Only the launched run's ranks: other tests may run mpirun beside this one, and their
    # rank R must live.
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if (f"OMPI_COMM_WORLD_RANK={rank}".encode() in env and int(entry) != os.getpid()
                and descends_from(int(entry), launcher)):
            pids.append(int(entry))
    return pids


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--after-file", required=True)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while not os.path.exists(a.after_file):
        if run.poll() is not None or time.time() > deadline:
            print(run.communicate()[0])
            sys.exit("the run ended (or took 120 s) before writing " + a.after_file)
        time.sleep(0.05)
    victims = rank_pids(a.rank, run.pid)
    if not victims:
        run.kill()
        sys.exit(f"no process of rank {a.rank}")
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    killed = time.time()
    try:
        out, _ = run.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        run.kill()
        sys.exit("the run still hangs 60 s after the kill")
    elapsed = time.time() - killed
    print(f"exit code {run.returncode}")
    print("ended within 30 s" if elapsed <= 30 else f"ended after {elapsed:.0f} s")
    for line in out.splitlines():
        if f"rank {a.rank}" in line:
            print(line.strip())


if __name__ == "__main__":
    main()
