"""What the analysis computes with: abstract values, the per-point state, and function summaries."""
