"""The reaper of an Ethernet verify run (run as a script: `python -I -S reaper.py [WORKDIR]`, stdin a pipe from ffplan).

Reads one PID per line: every process ffplan starts inside the run's namespaces reports itself before it executes.
Each is held by a pidfd at once, so a PID reused later is never signalled. When the pipe closes (ffplan finished,
or died, SIGKILL included) every process still alive is killed and WORKDIR, when given, removed, unless ffplan
wrote `done` first (a normal end: it removes its work folder itself). The namespaces then
have no process and no holder left, and the kernel frees them with their veths. Standard library only, no site.
"""

import os
import resource
import select
import shutil
import signal
import sys

PRUNE_AT = 256  # pidfds held before the exited ones are dropped (a run starts thousands of short commands)


def prune(held: list[int]) -> list[int]:
    """The pidfds of processes still running; a pidfd becomes readable when its process exits."""
    poller = select.poll()
    for fd in held:
        poller.register(fd, select.POLLIN)
    exited = {fd for fd, _ in poller.poll(0)}
    for fd in exited:
        os.close(fd)
    return [fd for fd in held if fd not in exited]


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the end of the pipe ends the reaper
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # a pidfd per running daemon
    held = []
    clean = False
    for line in sys.stdin:
        if line == "done\n":  # ffplan ended normally and stopped everything itself
            clean = True
            continue
        try:
            held.append(os.pidfd_open(int(line)))
        except (ValueError, ProcessLookupError):  # gone already: nothing to reap
            continue
        if len(held) >= PRUNE_AT:
            held = prune(held)
    for fd in held:
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(fd)
    if len(sys.argv) > 1 and not clean:
        shutil.rmtree(sys.argv[1], ignore_errors=True)


if __name__ == "__main__":
    main()
