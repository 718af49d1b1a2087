"""Part VI: decisions under uncertainty: bandits, online learning, games and control (chapters 27-32)."""
