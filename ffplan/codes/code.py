"""A diagnostic code: the `FFnnn` string itself, with its stable name and its one-line meaning."""

from __future__ import annotations


class Code(str):
    """`FF101` as a string (what diagnostics, reports and SARIF print), with `name` (`zone-port-budget`) and
    `summary`, the one line `ffplan rules` shows. Its documentation is declared with the lint registry."""

    name: str
    summary: str

    def __new__(cls, code: str, name: str, summary: str) -> Code:
        self = super().__new__(cls, code)
        self.name = name
        self.summary = summary
        return self

    def __getnewargs__(self) -> tuple[str, str, str]:  # type: ignore[override]  # pickle and copy rebuild it whole
        return str(self), self.name, self.summary
