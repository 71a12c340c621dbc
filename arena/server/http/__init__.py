"""The server's HTTP plumbing: the ASGI app, connection limits, who is asking (auth), settings and
request bodies.
"""
