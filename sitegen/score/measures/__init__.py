"""The seven measures of METHOD.md, one module each; registry.py holds the record every other list is derived from."""
