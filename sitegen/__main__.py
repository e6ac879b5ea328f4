"""Allows `python -m sitegen`."""

from sitegen.cli import main_entry

main_entry()
