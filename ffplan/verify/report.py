"""The verify report: checks are questions with a pass/fail answer and a precise detail."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Check:
    name: str
    status: str  # pass | fail | skip | info
    detail: str
    items: list[str] = field(default_factory=list)  # the first differences, one per line


def new_check(name: str, ok: bool | None, detail: str, items: list[str] | None = None) -> Check:
    """`ok` None is an informational check (no pass/fail answer); at most the first 12 items are kept."""
    status = "info" if ok is None else ("pass" if ok else "fail")
    return Check(name, status, detail, list(items or [])[:12])


@dataclass
class Report:
    target: str
    source: str  # "rendered folder" or "plan (rendered to a temporary folder)"
    view: str
    engine: str
    excluded: list[str]
    subnet: str = ""  # the subnet (plane) checked, when the plan has several
    checks: list[Check] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    comparison: list[dict] = field(default_factory=list)
    workdir: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.status != "fail" for c in self.checks)

    def add(self, name: str, ok: bool | None, detail: str, items: list[str] | None = None) -> Check:
        check = new_check(name, ok, detail, items)
        self.checks.append(check)
        return check

    def skip(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, "skip", detail))

    def as_dict(self) -> dict:
        d = asdict(self)
        d["timings"] = {k: (None if v != v else round(v, 4)) for k, v in self.timings.items()}  # NaN is not JSON
        d["ok"] = self.ok
        return d


class VerifyInputError(Exception):
    """Bad arguments or unreadable input: exit code 2."""
