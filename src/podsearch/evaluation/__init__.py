"""Evaluation: ranking quality of search (TREC qrels) and of "nearby episodes" (related pairs, tags)."""
