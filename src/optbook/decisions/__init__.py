"""Part VI: decisions under uncertainty: bandits, online algorithms, games, control (chapters 27-32)."""
