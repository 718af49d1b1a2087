"""Part VII: large language models (compression, alignment, fusion, reasoning) at CPU scale."""
