"""Layer 1, the code policy: Python bot source compiled and run under RestrictedPython, with guards
and a namespace of its own.
"""
