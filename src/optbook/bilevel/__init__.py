"""Part V: bilevel and nested optimization (chapters 23-26)."""
