"""The sandbox: isolated worker processes that run untrusted bot code."""
