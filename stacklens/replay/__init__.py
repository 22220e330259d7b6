"""Session replay: recordings (rrweb segments) and replay events, from ingest to the player."""
