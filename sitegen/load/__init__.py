"""Phase 1: read and check every record, so later phases work on values that are known to be right."""
