"""The thin command-line layer: parse arguments, call one stage, print. No planning logic lives here."""
