"""The contest's services: uploads, their checks, rounds and finals."""
