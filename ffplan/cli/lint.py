"""`ffplan lint` (being written)."""


def register(app) -> None:
    pass
