"""Part II: geometry, constraints and structure (chapters 09-15)."""
