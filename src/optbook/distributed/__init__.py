"""Part IV: distributed and federated learning (chapters 21-22)."""
