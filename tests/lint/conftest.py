import pytest
from typer.testing import CliRunner

from ffplan.cli.main import app


@pytest.fixture
def ffplan(root, monkeypatch):
    """Run the ffplan CLI in-process from the repository root; returns the typer Result."""
    monkeypatch.chdir(root)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, list(args))

    return run
