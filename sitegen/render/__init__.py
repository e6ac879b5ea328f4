"""Phase 4: the pages of both languages, from checked records, results and the changelog."""
