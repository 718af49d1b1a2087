"""Part III: training deep networks: zeroth-order, low-rank, sharpness (chapters 16-20)."""
