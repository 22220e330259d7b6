"""Per-project data scrubbing rules (docs/scrubbing.md): Sentry's advanced data scrubbing in spirit.

A rule masks, removes or hashes credit cards, e-mails, IPs, IBANs, passwords, bearer tokens or a pattern in
the fields its selector names (:mod:`.selectors`, Sentry's selector language); rules are checked and compiled
once (:mod:`.rules`, :mod:`.patterns`), applied to every payload at ingest after the built-in scrubbing
(:mod:`.apply`, :mod:`stacklens.ingest.scrub`), kept on the project (:mod:`.store`) and previewed on a stored
event (:mod:`.preview`)."""
