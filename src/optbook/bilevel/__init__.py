"""Part V: bilevel and nested optimization."""
