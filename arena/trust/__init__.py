"""Trust helpers: reading files a contestant controls, making contestant text safe to show, bot
folders and submission manifests as untrusted input.
"""
