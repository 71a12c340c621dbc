"""The OS jail: hardening layers (namespaces, uid, rlimits, seccomp), the probe of what this
machine supports, the watchdog, and the launcher of bot programs.
"""
