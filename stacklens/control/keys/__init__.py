"""Keys: what a caller presents to be let in, from its value to its use.

- :mod:`.values` — a key's value: generated, hashed for look-up, masked for lists, encrypted under the server
  secret (also the stored secrets of channels and trackers);
- :mod:`.lifecycle` — API keys (one current per organization, one next during a rotation) and app keys (one
  per project and service): issue, regenerate, revoke, reveal, list;
- :mod:`.dsn` — the DSN a Sentry SDK is given, built on an app key; :mod:`.dsn_callers` remembers who a DSN's
  key is for a second, :mod:`.app_attributions` what a line's app key stands for, :mod:`.api_identities` an
  API key's identity while the control store is unchanged;
- :mod:`.use` and :mod:`.use_tally` — each key's use per hour, counted in memory and written once a second.

Names are imported from their module, not from this package: the lifecycle writes the activity log, which
reads the use tally, so a package that imported the lifecycle here would put the activity log and every key
module in one circle.
"""
