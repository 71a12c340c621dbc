"""The server's background processes and their supervisor."""
