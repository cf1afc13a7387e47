#!/usr/bin/env python3
"""Concurrent writers to one output never leave a torn file.

Usage: concurrent-writes.py IDXMAP HLO WORKDIR [WRITERS] [ROUNDS]

Emits HLO once to WORKDIR/ref.ptx (and ref.json), then, ROUNDS times,
starts WRITERS `idxmap emit HLO -o WORKDIR/out.ptx` at once while a reader
keeps reading out.ptx and out.json. Every writer must exit 0; every read
must see a complete file (the reference; out.json may be missing only before
the first writer finished); at the end both files equal the reference and
no temporary file is left. Prints one line per violation and exits 1 on
any, else prints "ok: N writers x R rounds, M reads".
"""
import os
import subprocess
import sys
import threading


def main():
    idxmap, hlo, work = sys.argv[1:4]
    writers = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    os.makedirs(work, exist_ok=True)
    for name in os.listdir(work):
        os.unlink(os.path.join(work, name))
    ref = os.path.join(work, "ref.ptx")
    subprocess.run([idxmap, "emit", hlo, "-o", ref], check=True)
    with open(ref, "rb") as f:
        ref_ptx = f.read()
    with open(os.path.join(work, "ref.json"), "rb") as f:
        ref_json = f.read().replace(b"ref.ptx", b"out.ptx")
    out = os.path.join(work, "out.ptx")
    out_json = os.path.join(work, "out.json")
    problems = []
    reads = [0]
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            for path, want in ((out, ref_ptx), (out_json, ref_json)):
                try:
                    with open(path, "rb") as f:
                        got = f.read()
                except FileNotFoundError:
                    continue
                reads[0] += 1
                if got != want:
                    problems.append("torn read of %s: %d bytes, want %d"
                                    % (os.path.basename(path), len(got),
                                       len(want)))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for _ in range(rounds):
            procs = [subprocess.Popen([idxmap, "emit", hlo, "-o", out],
                                      stderr=subprocess.PIPE)
                     for _ in range(writers)]
            for p in procs:
                _, err = p.communicate()
                if p.returncode != 0:
                    problems.append("writer exited %d: %s"
                                    % (p.returncode, err.decode()[:200]))
    finally:
        stop.set()
        t.join()
    for path, want in ((out, ref_ptx), (out_json, ref_json)):
        with open(path, "rb") as f:
            if f.read() != want:
                problems.append("final %s differs" % os.path.basename(path))
    left = sorted(n for n in os.listdir(work)
                  if n not in ("ref.ptx", "ref.json", "out.ptx", "out.json"))
    if left:
        problems.append("files left behind: %s" % ", ".join(left))
    for p in problems[:20]:
        print(p)
    if problems:
        print("FAILED: %d problem(s)" % len(problems))
        return 1
    print("ok: %d writers x %d rounds, %d reads" % (writers, rounds, reads[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
