"""Phase 3: every change to the tests, derived from the runs and merged with hand-written entries."""
