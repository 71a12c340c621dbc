"""Escaped: run a shell with subprocess and with exec.
expect: faults=crash retired
"""
import os
import subprocess


class Bot:
    def move(self, turn):
        try:
            out = subprocess.run(["/bin/sh", "-c", "echo hi"], capture_output=True).stdout
            turn.say("ESCAPED shell %r" % out)
        except OSError as exc:
            turn.say("blocked subprocess %r" % exc)
        os.execv("/bin/sh", ["/bin/sh", "-c", "echo escaped"])
