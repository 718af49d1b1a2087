"""Part I: classical methods, new guarantees (chapters 01-08)."""
