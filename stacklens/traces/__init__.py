"""One trace across every source (docs/traces.md): the spans of Sentry transactions (browser and servers) and
of OTLP exports, read by trace id from the raw tables, drawn as one tree with its services, critical path,
orphans, errors, logs and replays (:mod:`.tree`, :mod:`.reads`), and the per-project trace search
(:mod:`.search`)."""
