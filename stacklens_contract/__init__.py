"""What the spec fixes word for word and every part shares: the SDK in applications, the shipper on hosts and
the service. Key formats (:mod:`stacklens_contract.keys`), the spec's words (:mod:`stacklens_contract.words`)
and the secret shapes no event string may show (:mod:`stacklens_contract.secret_shapes`).

Standard library only, and importing it loads nothing else: the shipper and the SDK install with the light
base and must not pull in the server's packages (``tests/stacklens_contract/test_imports.py``).
"""
