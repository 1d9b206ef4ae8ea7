"""`ffplan design` (being written)."""


def register(app) -> None:
    pass
