"""Where a failure sweep runs, and what it remembers: a Dask cluster (local or existing) and the results file.

The sweep's cases are independent, so they go to Dask (`distributed`) workers: a local cluster of one process per
core by default, or the scheduler of an existing cluster whose workers have ffplan installed. The results file is
JSON lines: a header naming the plan (the SHA-256 of its plan.yaml) and the code that measured it (the SHA-256 of
ffplan's sources: a changed router must not reuse old cases), then one finished case per line, appended as it
arrives; a re-run with the same file measures only the cases not in it (docs/routing.md, section 6).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TYPE_CHECKING

from ffplan.analyze.sweep import CaseResult
from ffplan.codes.analyze import SWEEP_INPUT_REFUSED
from ffplan.diagnostics import Diagnostic, InputError, Severity, option_error
from ffplan.inventory.source import read_text
from ffplan.plan.io import MAX_PLAN_BYTES

if TYPE_CHECKING:
    from distributed import Client

FORMAT = "ffplan-sweep-results"


def measuring_code() -> str:
    """SHA-256 of ffplan's Python sources (names and bytes): any change to the routers, the walk, the patterns or
    the bounds gives another value, so results of another build are measured again, never reused."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


CONNECT_TIMEOUT = "20s"


def cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextlib.contextmanager
def sweep_client(workers: int, scheduler: str | None = None) -> Iterator[Client | None]:
    """A Dask client: of the cluster at `scheduler`, else of a local cluster of `workers` processes (one thread
    each), else None for one worker: the sweep then runs in this process, without a cluster to start."""
    if scheduler is None and workers <= 1:
        yield None
        return
    if scheduler is not None:
        from distributed import Client

        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise option_error(
                SWEEP_INPUT_REFUSED,
                "--scheduler",
                f"cannot reach the Dask scheduler at {scheduler}: {exc}",
                "start it (`dask scheduler`, and workers with ffplan installed) or drop --scheduler",
            ) from None
        with client:
            yield client
        return
    with local_cluster(workers) as client:
        yield client


@contextlib.contextmanager
def local_cluster(workers: int) -> Iterator[Client]:
    """A Dask cluster on this machine: `workers` processes of one thread (the sweep is CPU-bound Python and numpy),
    on the loopback address only, its status page on a free port (not 8787, which another cluster may hold), only
    errors logged. The workers keep glibc's own malloc thresholds: Dask's default MALLOC_TRIM_THRESHOLD_ also fixes
    the mmap threshold, so every numpy array over 128 KiB is mapped and unmapped afresh (Fire-Flyer 2's sweep: 85 s
    of system time and 24 M page faults in one worker, 1.3-1.5 x the wall of the same sweep in one process)."""
    import dask
    from distributed import Client, LocalCluster

    with (
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}),
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


class ResultsFile:
    """Finished cases of one plan's sweep, by plane and case name, read from and appended to a JSON-lines file."""

    def __init__(self, path: Path, plan_sha256: str):
        self.path = path
        self.plan_sha256 = plan_sha256
        self.done: dict[str, dict[str, CaseResult]] = {}
        self._out: BinaryIO | None = None

    def __enter__(self) -> ResultsFile:
        keep = self._read() if self.path.exists() else 0
        self._out = self.path.open("r+b" if keep else "wb")
        if keep:
            self._out.truncate(keep)  # a line cut short by a killed run is measured again
            self._out.seek(keep)
        else:
            self._write(
                {"format": FORMAT, "version": 1, "plan_sha256": self.plan_sha256, "code_sha256": measuring_code()}
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._out is not None:
            self._out.close()

    def add(self, plane: str, case: CaseResult) -> None:
        """Write `case` down at once: a sweep stopped later keeps it."""
        self.done.setdefault(plane, {})[case.case] = case
        self._write({"plane": plane, **case.as_dict()})

    def _write(self, record: dict) -> None:
        assert self._out is not None
        self._out.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")  # ASCII: json escapes the rest
        self._out.flush()

    def _read(self) -> int:
        """Load the finished cases; the number of bytes of whole lines to keep (0: the file is empty)."""
        text = read_text(self.path, MAX_PLAN_BYTES)  # a FIFO, device or unreadable path: FF003
        lines = text.split("\n")
        lines.pop()  # '' when the file ends with a newline, else a line cut short
        if not lines:
            return 0
        name = str(self.path)
        for number, line in enumerate(lines, 1):
            try:
                record = json.loads(line)
                if number == 1:
                    if record.get("format") != FORMAT:
                        raise _refused(
                            name,
                            1,
                            "not an ffplan sweep results file",
                            "name a new file with --results, or one an earlier sweep wrote",
                        )
                    if record.get("plan_sha256") != self.plan_sha256:
                        raise _refused(
                            name,
                            1,
                            "these results are of another plan (its plan.yaml has changed since)",
                            "delete the file to sweep again, or name a new one with --results",
                        )
                    if record.get("code_sha256") != measuring_code():
                        raise _refused(
                            name,
                            1,
                            "these results were measured by another build of ffplan (its "
                            "sources have changed since): they may differ from what this one measures",
                            "delete the file to sweep again, or name a new one with --results",
                        )
                    continue
                self.done.setdefault(str(record["plane"]), {})[str(record["case"])] = CaseResult.from_dict(record)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise _refused(
                    name,
                    number,
                    f"damaged results line: {exc}",
                    "delete the file to sweep again (or the lines from this one on)",
                ) from None
        return sum(len(line.encode()) + 1 for line in lines)


def _refused(file: str, line: int, message: str, hint: str) -> InputError:
    return InputError([Diagnostic(file, line, 1, SWEEP_INPUT_REFUSED, Severity.ERROR, message, "", hint)])
