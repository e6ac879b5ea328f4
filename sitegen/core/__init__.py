"""The small core every phase shares: the frozen model, typed errors, the whitespace rule, workers."""
