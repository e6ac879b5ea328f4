"""Settings every test module shares."""

from hypothesis import settings

# No time limit per example: speed is measured by the benchmarks, never by a test that fails on a busy machine.
settings.register_profile("sitegen", deadline=None)
settings.load_profile("sitegen")
