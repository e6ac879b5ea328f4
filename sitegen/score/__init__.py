"""Phase 2: score runs by METHOD.md, keep the results record, verify, compare and explain."""
