"""Ingest: fetch feeds, transcripts and chapters and turn them into episodes."""
