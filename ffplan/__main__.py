from ffplan.cli.main import run

run()
