"""Ingest: decode and validate shipper batches, scrub, normalise, fingerprint, and land them in the
warehouse."""
